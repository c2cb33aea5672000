//! What the quotas per account count: the bytes of an account's ready objects (a pending
//! upload's record, which may hold an upload URL's cap, is no use of the quota), and its
//! provisioning and ready databases (one being deleted no longer counts); each account its
//! own.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_databases::DatabaseRecords;
use quire_kernel::{AccountId, Clock};
use quire_objects::{Contents, Object, ObjectRecords};
use quire_testkit::fixtures::FixedClock;
use time::Duration;

use super::databases::{database_in, ready_database};
use super::objects::object;
use super::support::{Seeded, seed};

fn object_of(owner: &Seeded, slug: &str, size_bytes: u64, clock: &FixedClock) -> Object {
    Object {
        size_bytes,
        ..object(owner, slug, &format!("Q{slug:0>9}"), clock)
    }
}

async fn sorted<S: ObjectRecords>(s: &S, account: Option<AccountId>) -> Vec<(AccountId, u64)> {
    let mut sums = s.stored_bytes(account).await.unwrap();
    sums.sort_by_key(|(a, _)| a.0);
    sums
}

pub(super) async fn object_bytes_are_summed_per_account_from_ready_objects<
    S: AccountStore + ObjectRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let lease = clock.now() + Duration::minutes(1);
    assert!(s.stored_bytes(None).await.unwrap().is_empty());
    assert!(
        s.stored_bytes(Some(ann.account.id))
            .await
            .unwrap()
            .is_empty()
    );

    let first = object_of(&ann, "first", 100, &clock);
    let second = object_of(&ann, "second", 250, &clock);
    for o in [&first, &second] {
        s.insert_pending(o, lease).await.unwrap();
    }
    // Pending, they hold nothing yet, whatever their record says.
    assert!(
        s.stored_bytes(Some(ann.account.id))
            .await
            .unwrap()
            .is_empty()
    );
    for o in [&first, &second] {
        s.mark_ready(o).await.unwrap();
    }
    let waiting = object_of(&ann, "waiting", 1 << 30, &clock);
    s.insert_pending(&waiting, lease).await.unwrap();
    let bobs = object_of(&bob, "bobs", 7, &clock);
    s.insert_pending(&bobs, lease).await.unwrap();
    s.mark_ready(&bobs).await.unwrap();

    let ann_id = ann.account.id;
    assert_eq!(sorted(s.as_ref(), Some(ann_id)).await, vec![(ann_id, 350)]);
    let mut all = vec![(ann_id, 350), (bob.account.id, 7)];
    all.sort_by_key(|(a, _)| a.0);
    assert_eq!(sorted(s.as_ref(), None).await, all);

    // New bytes count once swapped in; a deleted object counts no more.
    let smaller = Contents {
        blob: "b2".into(),
        size_bytes: 40,
        sha256: String::new(),
        filename: None,
        content_type: None,
        updated_at: None,
    };
    assert!(
        s.swap_contents(first.id, &first.blob, &smaller)
            .await
            .unwrap()
    );
    assert_eq!(sorted(s.as_ref(), Some(ann_id)).await, vec![(ann_id, 290)]);
    s.delete_object(second.id).await.unwrap();
    assert_eq!(sorted(s.as_ref(), Some(ann_id)).await, vec![(ann_id, 40)]);
}

pub(super) async fn live_databases_are_the_provisioning_and_ready_ones<
    S: AccountStore + DatabaseRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    assert!(s.live_databases(None).await.unwrap().is_empty());

    let making = database_in(&ann, ann.project.id, "making", &clock);
    s.insert_database(&making).await.unwrap();
    let ready = ready_database(
        s.as_ref(),
        &database_in(&ann, ann.project.id, "ready_one", &clock),
        &clock,
    )
    .await;
    let going = ready_database(
        s.as_ref(),
        &database_in(&ann, ann.project.id, "going", &clock),
        &clock,
    )
    .await;
    assert!(s.mark_deleting(going.id, clock.now()).await.unwrap());
    let bobs = database_in(&bob, bob.project.id, "bobs_db", &clock);
    s.insert_database(&bobs).await.unwrap();

    let ids = |found: Vec<quire_databases::Database>| -> Vec<_> {
        found.into_iter().map(|d| d.id).collect()
    };
    assert_eq!(
        ids(s.live_databases(Some(ann.account.id)).await.unwrap()),
        vec![making.id, ready.id]
    );
    assert_eq!(
        s.live_databases(Some(ann.account.id)).await.unwrap()[1],
        ready
    );
    assert_eq!(
        ids(s.live_databases(None).await.unwrap()),
        vec![making.id, ready.id, bobs.id]
    );
}
