//! Object records: invisible while pending, one slug namespace with the owner's pages (in
//! both directions, on insert and on change), public ids unique among codes, leases that
//! lapse into the janitor's list; a ready record's bytes changed only by a swap from the
//! blob it names.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::{Clock, ObjectId};
use quire_objects::{Contents, InsertObjectError, Object, ObjectRecords, ObjectStatus};
use quire_pages::{InsertPageError, PageStore, UpdatePageStoreError};
use quire_testkit::fixtures::FixedClock;
use time::Duration;

use super::support::{page_of, ready, seed};

pub(super) fn object(
    owner: &super::support::Seeded,
    slug: &str,
    public_id: &str,
    clock: &FixedClock,
) -> Object {
    clock.advance(Duration::seconds(1));
    let now = clock.now();
    Object {
        id: ObjectId::new(),
        public_id: public_id.into(),
        account_id: owner.account.id,
        project_id: owner.project.id,
        slug: slug.into(),
        title: slug.into(),
        filename: format!("{slug}.pdf"),
        content_type: "application/pdf".into(),
        size_bytes: 0,
        sha256: String::new(),
        blob: "b1".into(),
        status: ObjectStatus::Active,
        created_at: now,
        updated_at: now,
        archived_at: None,
    }
}

pub(super) async fn objects_are_invisible_until_ready_and_share_slugs_with_pages<
    S: AccountStore + PageStore + ObjectRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let lease = clock.now() + Duration::minutes(1);

    let mut report = object(&ann, "report", "OOOOOOOOO1", &clock);
    ObjectRecords::insert_pending(s.as_ref(), &report, lease)
        .await
        .unwrap();
    assert!(
        ObjectRecords::object_exists(s.as_ref(), report.id)
            .await
            .unwrap()
    );
    assert_eq!(s.object(report.id).await.unwrap(), None);
    assert_eq!(
        s.object_by_slug(ann.account.id, "report").await.unwrap(),
        None
    );
    assert!(
        s.project_objects(ann.project.id, None)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        s.pending_object(report.id).await.unwrap(),
        Some((report.clone(), lease))
    );
    assert!(
        ObjectRecords::renew_lease(s.as_ref(), report.id, lease + Duration::minutes(1))
            .await
            .unwrap()
    );
    assert_eq!(
        s.pending_object(report.id).await.unwrap(),
        Some((report.clone(), lease + Duration::minutes(1)))
    );
    report.size_bytes = 42;
    report.sha256 = "ab".repeat(32);
    ObjectRecords::mark_ready(s.as_ref(), &report)
        .await
        .unwrap();
    assert_eq!(s.object(report.id).await.unwrap(), Some(report.clone()));
    assert_eq!(
        s.object_by_slug(ann.account.id, "report").await.unwrap(),
        Some(report.clone())
    );
    assert!(
        !ObjectRecords::renew_lease(s.as_ref(), report.id, lease)
            .await
            .unwrap()
    );
    // Ready, it is no longer pending.
    assert_eq!(s.pending_object(report.id).await.unwrap(), None);

    // One slug namespace per owner, across pages and objects, both ways.
    let twin = object(&ann, "report", "OOOOOOOOO2", &clock);
    assert!(matches!(
        ObjectRecords::insert_pending(s.as_ref(), &twin, lease).await,
        Err(InsertObjectError::SlugTaken)
    ));
    let page = page_of(&ann.account, ann.project.id, "report", "OOOOOOOOP1", &clock);
    assert!(matches!(
        PageStore::insert_pending(s.as_ref(), &page, &[], lease).await,
        Err(InsertPageError::SlugTaken)
    ));
    let site = page_of(&ann.account, ann.project.id, "site", "OOOOOOOOP2", &clock);
    ready(s.as_ref(), &site).await;
    let on_site = object(&ann, "site", "OOOOOOOOO3", &clock);
    assert!(matches!(
        ObjectRecords::insert_pending(s.as_ref(), &on_site, lease).await,
        Err(InsertObjectError::SlugTaken)
    ));
    let mut renamed = report.clone();
    renamed.slug = "site".into();
    assert!(matches!(
        s.update_object(&renamed).await,
        Err(InsertObjectError::SlugTaken)
    ));
    let mut moved_site = site.clone();
    moved_site.slug = "report".into();
    assert!(matches!(
        s.update_page(&moved_site).await,
        Err(UpdatePageStoreError::SlugTaken)
    ));
    // Another owner's namespace is its own.
    let bobs = object(&bob, "report", "OOOOOOOOO4", &clock);
    ObjectRecords::insert_pending(s.as_ref(), &bobs, lease)
        .await
        .unwrap();
    // A public id is unique.
    let same_id = object(&bob, "other", "OOOOOOOOO4", &clock);
    assert!(matches!(
        ObjectRecords::insert_pending(s.as_ref(), &same_id, lease).await,
        Err(InsertObjectError::PublicIdTaken)
    ));

    // Changed, its bytes aside (a change read before a replacement writes back the bytes
    // it read, which only a swap may change); listed by project and status.
    renamed.slug = "report-v2".into();
    renamed.status = ObjectStatus::Archived;
    renamed.archived_at = Some(clock.now());
    let stale = Object {
        blob: "b0".into(),
        size_bytes: 1,
        sha256: "cd".repeat(32),
        ..renamed.clone()
    };
    s.update_object(&stale).await.unwrap();
    assert_eq!(s.object(report.id).await.unwrap(), Some(renamed.clone()));
    assert_eq!(
        s.project_objects(ann.project.id, Some(ObjectStatus::Archived))
            .await
            .unwrap(),
        vec![renamed.clone()]
    );
    assert!(
        s.project_objects(ann.project.id, Some(ObjectStatus::Active))
            .await
            .unwrap()
            .is_empty()
    );

    // A pending record whose lease lapsed is the janitor's, and frees its slug.
    let later = lease + Duration::minutes(5);
    assert_eq!(
        ObjectRecords::stale_pending(s.as_ref(), later)
            .await
            .unwrap(),
        vec![bobs.id]
    );
    assert_eq!(
        ObjectRecords::lapsed_slug_holder(s.as_ref(), bob.account.id, "report", later)
            .await
            .unwrap(),
        Some(bobs.id)
    );
    ObjectRecords::delete_object(s.as_ref(), bobs.id)
        .await
        .unwrap();
    assert!(
        !ObjectRecords::object_exists(s.as_ref(), bobs.id)
            .await
            .unwrap()
    );
    ObjectRecords::delete_object(s.as_ref(), report.id)
        .await
        .unwrap();
    assert_eq!(s.object(report.id).await.unwrap(), None);
}

pub(super) async fn a_ready_records_bytes_swap_only_from_the_blob_it_names<
    S: AccountStore + ObjectRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let lease = clock.now() + Duration::minutes(1);
    let deck = object(&ann, "deck", "OOOOOOOOS1", &clock);
    ObjectRecords::insert_pending(s.as_ref(), &deck, lease)
        .await
        .unwrap();
    let contents = |blob: &str, size_bytes| Contents {
        blob: blob.into(),
        size_bytes,
        sha256: blob.repeat(16),
        filename: None,
        content_type: None,
        updated_at: None,
    };
    // A pending record has no bytes to swap yet.
    assert!(
        !s.swap_contents(deck.id, "b1", &contents("b2", 9))
            .await
            .unwrap()
    );
    ObjectRecords::mark_ready(s.as_ref(), &deck).await.unwrap();

    // A change made meanwhile stays; what the swap does not give stays too.
    let mut changed = deck.clone();
    changed.title = "Deck, final".into();
    s.update_object(&changed).await.unwrap();
    assert!(
        s.swap_contents(deck.id, "b1", &contents("b2", 20))
            .await
            .unwrap()
    );
    let swapped = Object {
        blob: "b2".into(),
        size_bytes: 20,
        sha256: "b2".repeat(16),
        ..changed.clone()
    };
    assert_eq!(s.object(deck.id).await.unwrap(), Some(swapped.clone()));
    assert_eq!(
        s.stored_bytes(Some(ann.account.id)).await.unwrap(),
        vec![(ann.account.id, 20)]
    );

    // From a blob it no longer names: nothing, whatever the swap would write.
    let late = Contents {
        filename: Some("late.txt".into()),
        content_type: Some("text/plain".into()),
        updated_at: Some(clock.now() + Duration::hours(1)),
        ..contents("b3", 70)
    };
    assert!(!s.swap_contents(deck.id, "b1", &late).await.unwrap());
    assert_eq!(s.object(deck.id).await.unwrap(), Some(swapped.clone()));

    // From the blob it names: the name, type and time when given.
    assert!(s.swap_contents(deck.id, "b2", &late).await.unwrap());
    let renamed = Object {
        blob: "b3".into(),
        size_bytes: 70,
        sha256: "b3".repeat(16),
        filename: "late.txt".into(),
        content_type: "text/plain".into(),
        updated_at: clock.now() + Duration::hours(1),
        ..changed
    };
    assert_eq!(s.object(deck.id).await.unwrap(), Some(renamed));

    // A record that is gone swaps nothing.
    ObjectRecords::delete_object(s.as_ref(), deck.id)
        .await
        .unwrap();
    assert!(
        !s.swap_contents(deck.id, "b3", &contents("b4", 1))
            .await
            .unwrap()
    );
}
