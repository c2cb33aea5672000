//! A database's creation is all or nothing, on a real cluster (`QUIRE_TEST_POSTGRES_URL`;
//! reported as ignored when unset, docs/decisions/test-skips.md): a failure at each step
//! leaves no database, no role and no record; a creation whose process died mid-way (its
//! future dropped, as a SIGKILL would) is undone by the janitor once its lease lapses; an
//! ephemeral database goes at its `expiresAt`.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use quire_databases::{
    Cluster, ClusterError, DatabaseError, DatabaseRecords as _, NewDatabase, SqlOutcome, Swept,
    TenantAccess, TenantNames,
};
use quire_kernel::InfraError;
use quire_pgcluster::{PgCluster, PgClusterSettings};
use quire_testkit::World;
use quire_testkit::memory::Op;
use tokio_postgres::NoTls;

/// The cluster's steps, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Roles,
    Database,
    Prepare,
}

/// How a step goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// The step did its work, then reported a failure (the worst case for an undo).
    AfterWork,
    /// The step never returns: the request dies there.
    Hang,
}

/// The real cluster, with one step made to go wrong; it remembers the names it was given.
#[derive(Debug)]
struct Faulty {
    inner: PgCluster,
    at: Option<(Step, Fault)>,
    names: Mutex<Vec<TenantNames>>,
}

impl Faulty {
    async fn step(&self, step: Step) -> Result<(), InfraError> {
        match self.at {
            Some((s, Fault::AfterWork)) if s == step => {
                Err(InfraError::new(format!("injected failure after {step:?}")))
            }
            Some((s, Fault::Hang)) if s == step => std::future::pending().await,
            _ => Ok(()),
        }
    }
}

#[async_trait]
impl Cluster for Faulty {
    async fn create_roles(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        self.names.lock().unwrap().push(tenant.names.clone());
        self.inner.create_roles(tenant).await?;
        self.step(Step::Roles).await
    }

    async fn create_database(&self, names: &TenantNames) -> Result<(), InfraError> {
        self.inner.create_database(names).await?;
        self.step(Step::Database).await
    }

    async fn prepare_database(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        self.inner.prepare_database(tenant).await?;
        self.step(Step::Prepare).await
    }

    async fn drop_tenant(&self, names: &TenantNames) -> Result<(), InfraError> {
        self.inner.drop_tenant(names).await
    }

    async fn run_sql(
        &self,
        tenant: &TenantAccess,
        sql: &str,
        max_rows: usize,
    ) -> Result<SqlOutcome, ClusterError> {
        self.inner.run_sql(tenant, sql, max_rows).await
    }

    async fn announce_reload(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        self.inner.announce_reload(tenant).await
    }

    async fn sizes(&self, names: &[TenantNames]) -> Result<HashMap<String, u64>, InfraError> {
        self.inner.sizes(names).await
    }
}

/// The test cluster's URL; the tests are reported as ignored where PostgreSQL is not
/// configured (docs/decisions/test-skips.md), so here it is.
fn cluster_url() -> String {
    std::env::var("QUIRE_TEST_POSTGRES_URL").expect("QUIRE_TEST_POSTGRES_URL")
}

async fn faulty(at: Option<(Step, Fault)>) -> Arc<Faulty> {
    let inner = PgCluster::connect(&cluster_url(), PgClusterSettings::default())
        .await
        .unwrap();
    Arc::new(Faulty {
        inner,
        at,
        names: Mutex::new(Vec::new()),
    })
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

async fn world(cluster: Arc<Faulty>, failing: Option<Op>) -> World {
    let mut builder = World::builder().accounts(&["ann"]).cluster(cluster);
    if let Some(op) = failing {
        builder = builder.failing(op);
    }
    builder.build().await
}

/// After a failed creation: nothing in the cluster, no record, the slug free.
async fn nothing_is_left(world: &World, cluster: &Faulty, what: &str) {
    let names = cluster.names.lock().unwrap()[0].clone();
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
    let names = cluster.names.lock().unwrap()[0].clone();
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
        let names = cluster.names.lock().unwrap()[0].clone();
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
