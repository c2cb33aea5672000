//! The database service's creation is all or nothing on this cluster: a failure at each
//! step leaves no database, no role and no record; a creation whose process died mid-way
//! (its future dropped, as a SIGKILL would) is undone by the janitor once its lease lapses;
//! an ephemeral database goes at its `expiresAt`. The service is the composition root's,
//! over the testkit's fakes but for the cluster, one of whose steps the testkit's
//! `FaultyCluster` makes go wrong.

use std::sync::Arc;
use std::time::Duration;

use quire_databases::{DatabaseError, DatabaseRecords as _, NewDatabase, Swept, TenantNames};
use quire_testkit::World;
use quire_testkit::databases::{ClusterStep as Step, Fault, FaultyCluster};
use quire_testkit::memory::Op;
use tokio_postgres::NoTls;

use crate::{admin_url as cluster_url, cluster};

/// The real cluster, its step `at` going wrong.
async fn faulty(at: Option<(Step, Fault)>) -> Arc<FaultyCluster> {
    Arc::new(FaultyCluster::new(Arc::new(cluster().await), at))
}

/// What the cluster holds of `names`: the database and each role that exists.
async fn left_in_cluster(names: &TenantNames) -> Vec<String> {
    let (client, conn) = tokio_postgres::connect(&cluster_url(), NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut left = Vec::new();
    let db: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_database WHERE datname = $1",
            &[&names.database],
        )
        .await
        .unwrap()
        .get(0);
    if db > 0 {
        left.push(names.database.clone());
    }
    for role in [&names.owner_role, &names.authenticator_role] {
        let n: i64 = client
            .query_one("SELECT count(*) FROM pg_roles WHERE rolname = $1", &[role])
            .await
            .unwrap()
            .get(0);
        if n > 0 {
            left.push(role.clone());
        }
    }
    left
}

fn new(slug: &str) -> NewDatabase {
    NewDatabase {
        slug: slug.into(),
        ..NewDatabase::default()
    }
}

async fn world(cluster: Arc<FaultyCluster>, failing: Option<Op>) -> World {
    let mut builder = World::builder().accounts(&["ann"]).cluster(cluster);
    if let Some(op) = failing {
        builder = builder.failing(op);
    }
    builder.build().await
}

/// After a failed creation: nothing in the cluster, no record, the slug free.
async fn nothing_is_left(world: &World, cluster: &FaultyCluster, what: &str) {
    let names = cluster.names()[0].clone();
    assert_eq!(
        left_in_cluster(&names).await,
        Vec::<String>::new(),
        "{what}"
    );
    let master = world.master("ann");
    let (listed, _) = world.services.databases.list(&master, None).await.unwrap();
    assert!(listed.is_empty(), "{what}");
    assert_eq!(
        world.services.databases.sweep().await.unwrap(),
        Swept::default(),
        "{what}: nothing was left for the janitor"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_failure_at_each_step_leaves_nothing() {
    for step in [Step::Roles, Step::Database, Step::Prepare] {
        let cluster = faulty(Some((step, Fault::AfterWork))).await;
        let world = world(cluster.clone(), None).await;
        let refused = world
            .services
            .databases
            .create(&world.master("ann"), new("shop"))
            .await;
        assert!(
            matches!(refused, Err(DatabaseError::Infra(_))),
            "{step:?}: {refused:?}"
        );
        nothing_is_left(&world, &cluster, &format!("{step:?}")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_record_that_cannot_be_marked_ready_undoes_the_cluster() {
    let cluster = faulty(None).await;
    let world = world(cluster.clone(), Some(Op::MarkDatabaseReady)).await;
    let refused = world
        .services
        .databases
        .create(&world.master("ann"), new("shop"))
        .await;
    assert!(
        matches!(refused, Err(DatabaseError::Infra(_))),
        "{refused:?}"
    );
    let names = cluster.names()[0].clone();
    assert_eq!(left_in_cluster(&names).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_creation_that_died_is_undone_by_the_janitor_after_its_lease() {
    for step in [Step::Roles, Step::Database, Step::Prepare] {
        let cluster = faulty(Some((step, Fault::Hang))).await;
        let world = world(cluster.clone(), None).await;
        let master = world.master("ann");
        // The request dies in the middle of the step: its future is dropped.
        let died = tokio::time::timeout(
            Duration::from_millis(500),
            world.services.databases.create(&master, new("shop")),
        )
        .await;
        assert!(died.is_err(), "{step:?}: the creation hung as injected");
        let names = cluster.names()[0].clone();
        assert!(
            !left_in_cluster(&names).await.is_empty(),
            "{step:?}: the dead request left work behind"
        );
        // Within its lease the janitor leaves it be: the request may still be running.
        assert_eq!(
            world.services.databases.sweep().await.unwrap(),
            Swept::default()
        );
        world.clock.advance(time::Duration::minutes(3));
        let swept = world.services.databases.sweep().await.unwrap();
        assert_eq!(swept.abandoned, 1, "{step:?}");
        assert_eq!(
            left_in_cluster(&names).await,
            Vec::<String>::new(),
            "{step:?}"
        );
        // The record went with it, so the slug is free again.
        assert!(
            world
                .store
                .database_by_slug("shop")
                .await
                .unwrap()
                .is_none(),
            "{step:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn an_ephemeral_database_goes_at_its_expiry() {
    let cluster = faulty(None).await;
    let world = world(cluster, None).await;
    let master = world.master("ann");
    let made = world
        .services
        .databases
        .create(
            &master,
            NewDatabase {
                slug: "scratch".into(),
                expires_at: Some("2026-01-01T01:00:00Z".into()),
                ..NewDatabase::default()
            },
        )
        .await
        .unwrap();
    let names = made.database.names();
    assert_eq!(
        world.services.databases.sweep().await.unwrap(),
        Swept::default()
    );
    world.clock.advance(time::Duration::hours(1));
    assert_eq!(world.services.databases.sweep().await.unwrap().expired, 1);
    assert_eq!(left_in_cluster(&names).await, Vec::<String>::new());
    assert!(matches!(
        world
            .services
            .databases
            .get(&master, made.database.id)
            .await,
        Err(DatabaseError::NotFound)
    ));
}
