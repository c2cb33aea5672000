//! Pages: invisible until ready, slugs unique per owner, lookups by owner and slug, and the
//! page read with its project, owner and link at once (files are in `page_files.rs`).

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::Clock;
use quire_kernel::{Email, PageId};
use quire_links::{Access, AllowEntry, LinkStore};
use quire_pages::AccountDirectory;
use quire_pages::PageStore;
use quire_pages::{InsertPageError, PageStatus, UpdatePageStoreError};
use time::Duration;

use super::support::{file, lease, link_for, page_of, seed};
use quire_testkit::fixtures::FixedClock;

pub(super) async fn pages_are_invisible_until_ready_and_slugs_unique_per_owner<
    S: AccountStore + PageStore + LinkStore + AccountDirectory + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let page = page_of(&ann.account, ann.project.id, "site", "AAAAAAAAA1", &clock);
    s.insert_pending(
        &page,
        &[file("index.html", 3), file("a/b.css", 5)],
        lease(&clock),
    )
    .await
    .unwrap();
    assert_eq!(
        s.page(page.id).await.unwrap(),
        None,
        "pending pages are invisible"
    );
    assert!(s.page_exists(page.id).await.unwrap());
    let at = |secs: i64| clock.now() + Duration::seconds(secs);
    assert!(s.stale_pending(at(59)).await.unwrap().is_empty(), "leased");
    assert_eq!(s.stale_pending(at(61)).await.unwrap(), vec![page.id]);
    assert_eq!(
        s.lapsed_slug_holder(ann.account.id, "site", at(61))
            .await
            .unwrap(),
        Some(page.id)
    );
    assert_eq!(
        s.lapsed_slug_holder(bob.account.id, "site", at(61))
            .await
            .unwrap(),
        None,
        "only the owner's slug"
    );
    assert!(s.renew_lease(page.id, at(120)).await.unwrap());
    assert!(s.stale_pending(at(61)).await.unwrap().is_empty(), "renewed");
    assert_eq!(
        s.lapsed_slug_holder(ann.account.id, "site", at(61))
            .await
            .unwrap(),
        None
    );
    assert!(!s.renew_lease(PageId::new(), at(120)).await.unwrap());
    s.mark_ready(page.id).await.unwrap();
    assert_eq!(s.page(page.id).await.unwrap(), Some(page.clone()));
    assert!(
        s.mark_ready(page.id).await.is_err(),
        "a page is made ready once, by the publish that holds it"
    );
    assert!(!s.renew_lease(page.id, at(120)).await.unwrap(), "ready");
    assert!(s.stale_pending(at(3600)).await.unwrap().is_empty());
    assert_eq!(
        s.lapsed_slug_holder(ann.account.id, "site", at(3600))
            .await
            .unwrap(),
        None,
        "a ready page holds its slug for good"
    );
    let files = s.files(page.id).await.unwrap();
    assert_eq!(
        files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        vec!["a/b.css", "index.html"]
    );

    let same_slug = page_of(&ann.account, ann.project.id, "site", "AAAAAAAAA2", &clock);
    assert_eq!(
        s.insert_pending(&same_slug, &[], lease(&clock))
            .await
            .unwrap_err(),
        InsertPageError::SlugTaken
    );
    let same_id = page_of(&ann.account, ann.project.id, "other", "AAAAAAAAA1", &clock);
    assert_eq!(
        s.insert_pending(&same_id, &[], lease(&clock))
            .await
            .unwrap_err(),
        InsertPageError::PublicIdTaken
    );
    // Another owner may use the same slug.
    let bobs = page_of(&bob.account, bob.project.id, "site", "BBBBBBBBB1", &clock);
    s.insert_pending(&bobs, &[file("index.html", 1)], lease(&clock))
        .await
        .unwrap();
    s.mark_ready(bobs.id).await.unwrap();
    assert_eq!(
        s.project_pages(ann.project.id, PageStatus::Active, None, 1000)
            .await
            .unwrap(),
        vec![page.clone()]
    );

    let mut renamed = page.clone();
    renamed.slug = "site".into();
    renamed.title = "New".into();
    s.update_page(&renamed).await.unwrap();
    let second = page_of(&ann.account, ann.project.id, "second", "AAAAAAAAA3", &clock);
    s.insert_pending(&second, &[], lease(&clock)).await.unwrap();
    s.mark_ready(second.id).await.unwrap();
    let mut clash = second.clone();
    clash.slug = "site".into();
    assert_eq!(
        s.update_page(&clash).await.unwrap_err(),
        UpdatePageStoreError::SlugTaken
    );
    let mut archived = second.clone();
    archived.status = PageStatus::Archived;
    archived.archived_at = Some(clock.now());
    // The database a page names is kept by slug, set and read back as written.
    archived.database = Some("shop".into());
    s.update_page(&archived).await.unwrap();
    assert_eq!(
        s.page(archived.id)
            .await
            .unwrap()
            .unwrap()
            .database
            .as_deref(),
        Some("shop")
    );
    assert_eq!(
        s.project_pages(ann.project.id, PageStatus::Archived, None, 1000)
            .await
            .unwrap(),
        vec![archived]
    );

    s.delete_page(page.id).await.unwrap();
    assert!(!s.page_exists(page.id).await.unwrap());
    assert!(s.files(page.id).await.unwrap().is_empty());
}

pub(super) async fn pages_are_found_by_owner_and_slug_and_links_by_code<
    S: AccountStore + PageStore + LinkStore + AccountDirectory + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let page = page_of(&ann.account, ann.project.id, "site", "FFFFFFFFF1", &clock);
    s.insert_pending(&page, &[], lease(&clock)).await.unwrap();
    assert_eq!(
        s.page_by_slug(ann.account.id, "site").await.unwrap(),
        None,
        "a pending page is not served"
    );
    s.mark_ready(page.id).await.unwrap();
    assert_eq!(
        s.page_by_slug(ann.account.id, "site").await.unwrap(),
        Some(page.clone())
    );
    assert_eq!(s.page_by_slug(bob.account.id, "site").await.unwrap(), None);
    assert_eq!(s.page_by_slug(ann.account.id, "other").await.unwrap(), None);

    let link = link_for(&page, Some("launch-day"), &clock);
    s.insert_link(&link).await.unwrap();
    assert_eq!(
        s.link_by_code("launch-day").await.unwrap(),
        Some(link.clone())
    );
    assert_eq!(
        s.link_by_code("FFFFFFFFF1").await.unwrap(),
        Some(link.clone())
    );
    assert_eq!(
        s.link_by_code("Launch-Day").await.unwrap(),
        None,
        "codes are exact"
    );
    assert_eq!(s.link_by_code("nothing").await.unwrap(), None);
}

pub(super) async fn page_details_read_page_project_owner_and_link_at_once<
    S: AccountStore + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let page = page_of(&ann.account, ann.project.id, "site", "GGGGGGGGG1", &clock);
    s.insert_pending(&page, &[file("index.html", 3)], lease(&clock))
        .await
        .unwrap();
    assert_eq!(
        s.page_details(page.id).await.unwrap(),
        None,
        "a pending page has no details"
    );
    s.mark_ready(page.id).await.unwrap();
    let bare = s.page_details(page.id).await.unwrap().unwrap();
    assert_eq!(bare.page, page);
    assert_eq!(bare.project, ann.project);
    assert_eq!(bare.owner, ann.account.handle);
    assert_eq!(bare.link, None, "a page without a link");

    let mut link = link_for(&page, Some("open-day"), &clock);
    link.policy.access = Access::AllowList;
    link.policy.max_views = Some(7);
    let carol = Email::parse("carol@example.com").unwrap();
    let dave = Email::parse("dave@example.com").unwrap();
    link.policy.allow = vec![
        AllowEntry::Email(carol.clone()),
        AllowEntry::Account(bob.account.id),
        AllowEntry::Email(dave),
    ];
    s.insert_link(&link).await.unwrap();
    let details = s.page_details(page.id).await.unwrap().unwrap();
    assert_eq!(
        details.link,
        s.link_of_page(page.id).await.unwrap(),
        "the same link as read alone, allow list in the order shared"
    );
    assert_eq!(details.link.unwrap().policy.allow.len(), 3);
    assert_eq!(
        (details.page, details.owner),
        (page.clone(), ann.account.handle.clone())
    );

    // Shrinking the list to one entry leaves one row to read.
    let mut fewer = link.clone();
    fewer.policy.allow = vec![AllowEntry::Email(carol)];
    s.update_link(&fewer).await.unwrap();
    let details = s.page_details(page.id).await.unwrap().unwrap();
    assert_eq!(details.link.unwrap().policy.allow, fewer.policy.allow);
    assert_eq!(s.page_details(PageId::new()).await.unwrap(), None);
}
