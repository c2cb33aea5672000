//! The account's database quotas on the in-memory fakes and the cluster of memory,
//! where the HTTP tests cannot reach: creations racing for the last place are never both
//! made (both may be refused), and the loser leaves no record and nothing in the cluster;
//! the figures count every project of the account, and not a database being deleted.

use std::sync::Arc;

use quire_databases::{DatabaseError, DatabaseRecords as _, NewDatabase};
use quire_testkit::World;
use quire_testkit::databases::MemoryCluster;

/// Each database the size of an empty one.
const SIZE: u64 = 8_000_000;

async fn world(max_databases: u64, max_bytes: u64, cluster: Arc<MemoryCluster>) -> World {
    World::builder()
        .accounts(&["ann", "bob"])
        .cluster(cluster)
        .settings(|s| {
            s.databases.max_databases = max_databases;
            s.databases.max_bytes = max_bytes;
        })
        .build()
        .await
}

/// A cluster whose size reads, `meet` at a time, wait for each other (so that two
/// creations both read the account's figures before either writes its record).
fn counting(meet: Option<usize>) -> Arc<MemoryCluster> {
    let cluster = MemoryCluster::new().with_size(SIZE);
    Arc::new(match meet {
        Some(parties) => cluster.meeting_at_sizes(parties),
        None => cluster,
    })
}

fn new(slug: &str) -> NewDatabase {
    NewDatabase {
        slug: slug.into(),
        ..NewDatabase::default()
    }
}

#[tokio::test]
async fn creations_racing_for_the_last_place_are_never_both_made() {
    // The first creation reads no size (no database is ready yet); the two after it each
    // read the figures only once the other has read them too.
    let cluster = counting(Some(2));
    let w = world(2, 0, cluster.clone()).await;
    let ann = w.master("ann");
    let databases = &w.services.databases;
    databases.create(&ann, new("first")).await.unwrap();
    let (one, two) = tokio::join!(
        databases.create(&ann, new("second")),
        databases.create(&ann, new("third")),
    );
    let made = [&one, &two].iter().filter(|r| r.is_ok()).count();
    assert!(made <= 1, "{one:?} {two:?}");
    for refused in [one, two].into_iter().filter_map(Result::err) {
        assert!(
            matches!(refused, DatabaseError::QuotaExceeded { limit: 2, .. }),
            "{refused:?}"
        );
    }
    let live = w.store.live_databases(None).await.unwrap();
    assert_eq!(live.len(), 1 + made, "{live:?}");
    assert_eq!(cluster.databases().len(), 1 + made);
}

#[tokio::test]
async fn the_figures_count_every_project_and_not_what_is_being_deleted() {
    let cluster = counting(None);
    let w = world(5, 20_000_000, cluster).await;
    let ann = w.master("ann");
    let databases = &w.services.databases;
    let first = databases.create(&ann, new("first")).await.unwrap();
    let usage = databases.usage(&ann, None).await.unwrap();
    assert_eq!((usage.databases.used, usage.databases.limit), (1, Some(5)));
    assert_eq!(
        (usage.bytes.used, usage.bytes.limit),
        (SIZE, Some(20_000_000))
    );
    databases.create(&ann, new("second")).await.unwrap();
    // 16 MB of 20: a third may begin; then they hold 24 MB, and no fourth may.
    databases.create(&ann, new("third")).await.unwrap();
    let refused = databases.create(&ann, new("fourth")).await.unwrap_err();
    assert_eq!(
        refused,
        DatabaseError::StorageQuotaExceeded {
            used: 3 * SIZE,
            limit: 20_000_000
        }
    );
    assert_eq!(w.store.live_databases(None).await.unwrap().len(), 3);
    // Bob's figures are his own.
    let bob = databases.usage(&w.master("bob"), None).await.unwrap();
    assert_eq!((bob.databases.used, bob.bytes.used), (0, 0));
    // A database being deleted counts no more.
    let at = first.database.created_at;
    assert!(w.store.mark_deleting(first.database.id, at).await.unwrap());
    let usage = databases.usage(&ann, None).await.unwrap();
    assert_eq!((usage.databases.used, usage.bytes.used), (2, 2 * SIZE));
    let by_account = databases.usage_by_account().await.unwrap();
    assert_eq!(by_account.len(), 1);
    databases.create(&ann, new("fourth")).await.unwrap();
}
