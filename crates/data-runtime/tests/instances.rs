//! The runtime's instances against a real PostgreSQL (`QUIRE_TEST_POSTGRES_URL`, a
//! superuser; reported as ignored when unset, docs/decisions/test-skips.md): schema reloads
//! that a `NOTIFY` storm cannot multiply, payloads that ask for nothing, and the
//! connection cap shared out among accounts, with idle connections and instances making
//! room least recently used first.

#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_accounts::SealedSecret;
use quire_data_runtime::{Runtime, RuntimeSettings};
use quire_dataapi::RestRequest;
use quire_databases::{
    Cluster, DataApiInstance, DataApiRuntime, DataApiSignals, Database, DatabaseStatus,
    GatewayTarget, InstanceError, KeyRole, TenantAccess, TenantNames,
};
use quire_kernel::{AccountId, DatabaseId, ProjectId, ProjectSlug};
use quire_pgcluster::{PgCluster, PgClusterSettings, TenantRole};
use tokio_postgres::{Client, NoTls};

fn admin_url() -> String {
    std::env::var("QUIRE_TEST_POSTGRES_URL").expect("QUIRE_TEST_POSTGRES_URL")
}

async fn cluster() -> PgCluster {
    PgCluster::connect(&admin_url(), PgClusterSettings::default())
        .await
        .unwrap()
}

/// Waits for `done`, polling, for at most 30 s.
async fn eventually<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done().await {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A tenant database made as the service makes one, and the gateway's view of it.
struct Tenant {
    access: TenantAccess,
    target: GatewayTarget,
}

impl Tenant {
    async fn new(cluster: &PgCluster, account: AccountId, slug: &str, setup: &str) -> Self {
        let id = DatabaseId::new();
        let access = TenantAccess {
            names: TenantNames::of(id),
            owner_password: quire_kernel::secret::random_url_token(),
            authenticator_password: quire_kernel::secret::random_url_token(),
        };
        cluster.create_roles(&access).await.unwrap();
        cluster.create_database(&access.names).await.unwrap();
        cluster.prepare_database(&access).await.unwrap();
        if !setup.is_empty() {
            cluster.run_sql(&access, setup, 1).await.unwrap();
        }
        let now = time::OffsetDateTime::now_utc();
        let sealed = SealedSecret::stored(String::new());
        let database = Database {
            id,
            account_id: account,
            project_id: ProjectId::new(),
            slug: ProjectSlug::parse(slug).unwrap(),
            name: slug.to_owned(),
            status: DatabaseStatus::Ready,
            lease_until: None,
            expires_at: None,
            owner_secret: sealed.clone(),
            authenticator_secret: sealed.clone(),
            jwt_secret: Some(sealed),
            data_api_enabled: true,
            created_at: now,
            updated_at: now,
        };
        let target = GatewayTarget {
            database,
            tenant: access.clone(),
            jwt_secret: "a secret of the test".to_owned(),
            stops_seen: 0,
        };
        Self { access, target }
    }

    fn slug(&self) -> &str {
        self.target.database.slug.as_str()
    }

    /// A connection as the database's owner, as its SQL runs.
    async fn owner(&self, cluster: &PgCluster) -> Client {
        let config = cluster.tenant_config(&self.access, TenantRole::Owner);
        let (client, conn) = config.connect(NoTls).await.unwrap();
        tokio::spawn(conn);
        client
    }

    /// A superuser's connection to the database.
    async fn superuser(&self) -> Client {
        let mut config: tokio_postgres::Config = admin_url().parse().unwrap();
        config.dbname(&self.access.names.database);
        let (client, conn) = config.connect(NoTls).await.unwrap();
        tokio::spawn(conn);
        client
    }

    async fn drop_from(self, cluster: &PgCluster) {
        cluster.drop_tenant(&self.access.names).await.unwrap();
    }
}

/// The instance, once started (a start may take longer than a request waits, and a
/// refused one is answered so for a second before it is tried again).
async fn started(runtime: &Runtime, tenant: &Tenant) -> Arc<dyn DataApiInstance> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match runtime.instance(tenant.target.clone()).await {
            Ok(instance) => return instance,
            Err(InstanceError::Unavailable) => panic!("{} did not start", tenant.slug()),
            Err(e) => {
                assert!(
                    Instant::now() < deadline,
                    "{} did not start: {e}",
                    tenant.slug()
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

fn settings(max: usize, share: usize) -> RuntimeSettings {
    RuntimeSettings {
        pool_size: 1,
        threads: 1,
        max_connections: max,
        account_connections: share,
        start_wait: Duration::from_secs(10),
        acquire_wait: Duration::from_millis(300),
        ..RuntimeSettings::default()
    }
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_notify_storm_costs_a_load_a_second_and_the_cache_ends_right() {
    let cluster = cluster().await;
    let tenant = Tenant::new(&cluster, AccountId::new(), "stormy", "").await;
    let runtime = Runtime::start(cluster.base_config(), RuntimeSettings::default());
    let instance = started(&runtime, &tenant).await;
    let before = runtime.figures();

    // The owner commits each notification, so none is folded into another.
    let owner = tenant.owner(&cluster).await;
    let storm = Instant::now();
    owner
        .batch_execute(
            "do $$ begin for i in 1..5000 loop \
             perform pg_notify('pgrst', 'reload schema'); commit; end loop; end $$",
        )
        .await
        .unwrap();
    owner
        .batch_execute("create table after_storm (id int primary key)")
        .await
        .unwrap();
    eventually(
        "every notification is heard and the last table is loaded",
        || {
            let (runtime, instance) = (runtime.clone(), instance.clone());
            async move {
                runtime.figures().notifications >= 5001
                    && instance.schema().table("after_storm").is_some()
            }
        },
    )
    .await;
    let seconds = storm.elapsed().as_secs_f64().ceil();
    let loads = runtime.figures().schema_loads - before.schema_loads;
    println!("5001 notifications in {seconds} s: {loads} loads");
    #[allow(clippy::cast_precision_loss)]
    let bound = seconds + 2.0;
    assert!((loads as f64) <= bound, "{loads} loads in {seconds} s");
    assert!(loads >= 1);
    drop(instance);
    tenant.drop_from(&cluster).await;
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn payloads_other_than_postgrests_load_nothing() {
    let cluster = cluster().await;
    let tenant = Tenant::new(&cluster, AccountId::new(), "choosy", "").await;
    let runtime = Runtime::start(cluster.base_config(), RuntimeSettings::default());
    let instance = started(&runtime, &tenant).await;
    let owner = tenant.owner(&cluster).await;
    let before = runtime.figures();
    let foreign = [
        "reload config",
        "hello",
        "reload schema please",
        "RELOAD SCHEMA",
    ];
    for payload in foreign {
        owner
            .execute("select pg_notify('pgrst', $1)", &[&payload])
            .await
            .unwrap();
    }
    eventually("the foreign notifications are heard", || {
        let runtime = runtime.clone();
        async move { runtime.figures().notifications >= before.notifications + 4 }
    })
    .await;
    let after = runtime.figures();
    assert_eq!(
        after.notifications_ignored,
        before.notifications_ignored + 4
    );
    assert_eq!(after.schema_loads, before.schema_loads);
    // PostgREST's empty payload loads. The table is made with the DDL trigger off, so
    // only that notification announces it.
    tenant
        .superuser()
        .await
        .batch_execute("set session_replication_role = replica; create table seen (id int)")
        .await
        .unwrap();
    owner.batch_execute("notify pgrst").await.unwrap();
    eventually("an empty payload loads the schema", || {
        let instance = instance.clone();
        async move { instance.schema().table("seen").is_some() }
    })
    .await;
    assert!(runtime.figures().schema_loads > before.schema_loads);
    drop(instance);
    tenant.drop_from(&cluster).await;
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_request_right_after_ddl_waits_for_the_announced_load_instead_of_missing() {
    let cluster = cluster().await;
    let tenant = Tenant::new(&cluster, AccountId::new(), "hasty", "").await;
    let runtime = Runtime::start(cluster.base_config(), RuntimeSettings::default());
    let instance = started(&runtime, &tenant).await;
    let owner = tenant.owner(&cluster).await;
    let heard = runtime.figures().notifications;
    // The DDL trigger announces the table within the second after the start's load, when
    // no load may begin yet.
    owner
        .batch_execute("create table hasty (id int)")
        .await
        .unwrap();
    eventually("the DDL's notification is heard", || {
        let runtime = runtime.clone();
        async move { runtime.figures().notifications > heard }
    })
    .await;
    // The request that names it waits for that load rather than answer 404.
    assert!(instance.reload_schema().await);
    assert!(instance.schema().table("hasty").is_some());
    drop(instance);
    tenant.drop_from(&cluster).await;
}

/// A plan calling `hold()`, which waits for the advisory lock 7 the test holds.
fn holding(instance: &dyn DataApiInstance) -> quire_dataapi::Plan {
    quire_dataapi::plan(
        &RestRequest {
            method: "POST",
            path: "rpc/hold",
            query: "",
            prefer: None,
            accept: None,
            range: None,
            content_type: Some("application/json"),
            body: b"{}",
        },
        &instance.schema(),
    )
    .unwrap()
}

const HOLD: &str = "create function hold() returns int language sql \
    as 'select pg_advisory_xact_lock(7); select 1'";

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn an_account_at_its_share_is_refused_and_others_still_start() {
    let cluster = cluster().await;
    let (ann, bob) = (AccountId::new(), AccountId::new());
    let busy = Tenant::new(&cluster, ann, "ann_busy", HOLD).await;
    // Its request waits for the test, not for its timeout.
    busy.superuser()
        .await
        .batch_execute(&format!(
            "alter role service_role in database {} set statement_timeout = '120s'",
            busy.access.names.database
        ))
        .await
        .unwrap();
    let more = Tenant::new(&cluster, ann, "ann_more", "").await;
    let bobs = Tenant::new(&cluster, bob, "bob_first", "").await;
    // The cap has room for both accounts' shares of three.
    let runtime = Runtime::start(cluster.base_config(), settings(6, 3));

    let first = started(&runtime, &busy).await;
    assert_eq!(
        runtime.connections(ann),
        (3, 3),
        "listener, owner, authenticator"
    );
    let lock = busy.superuser().await;
    lock.execute("select pg_advisory_lock(7)", &[])
        .await
        .unwrap();
    let plan = holding(first.as_ref());
    let request = tokio::spawn({
        let first = first.clone();
        async move { first.run(KeyRole::ServiceRole, "{}", &plan).await.is_ok() }
    });
    eventually("the request holds its connection", || {
        let runtime = runtime.clone();
        async move { runtime.figures().in_use == 1 }
    })
    .await;

    // Ann's next database: her idle owner connection makes room for its listener, and
    // then nothing of hers is idle: refused, and told why.
    let refused = runtime.instance(more.target.clone()).await;
    assert!(
        matches!(refused, Err(InstanceError::AccountBusy)),
        "{refused:?}"
    );
    assert!(runtime.connections(ann).1 <= 3);
    assert!(runtime.figures().refusals >= 1);
    // Bob's starts and serves meanwhile.
    let bobs_instance = started(&runtime, &bobs).await;
    assert!(runtime.serves(bobs.slug()));

    // Once Ann's request ends, her second database starts, in the room her first one's
    // idle connection leaves.
    lock.execute("select pg_advisory_unlock(7)", &[])
        .await
        .unwrap();
    assert!(request.await.unwrap());
    started(&runtime, &more).await;
    assert!(runtime.serves(busy.slug()) && runtime.serves(more.slug()));
    assert!(runtime.connections(ann).1 <= 3);
    assert!(runtime.figures().evictions >= 1);

    drop((first, bobs_instance, lock));
    for tenant in [busy, more, bobs] {
        runtime.stop(tenant.target.database.id);
        tenant.drop_from(&cluster).await;
    }
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn at_the_cap_idle_connections_then_the_least_recently_used_idle_instance_make_room() {
    let cluster = cluster().await;
    let (ann, bob) = (AccountId::new(), AccountId::new());
    let b1 = Tenant::new(&cluster, bob, "bob_one", "").await;
    let b2 = Tenant::new(&cluster, bob, "bob_two", "").await;
    let a1 = Tenant::new(&cluster, ann, "ann_one", "").await;
    let a2 = Tenant::new(&cluster, ann, "ann_two", "").await;
    // Four connections: room for four listeners and nothing else.
    let runtime = Runtime::start(cluster.base_config(), settings(4, 4));

    for tenant in [&b1, &b2, &a1] {
        started(&runtime, tenant).await;
        assert!(runtime.connections(ann).0 <= 4);
    }
    // Three instances fit: idle pooled connections made room, no instance went.
    for tenant in [&b1, &b2, &a1] {
        assert!(runtime.serves(tenant.slug()), "{}", tenant.slug());
    }
    assert_eq!(runtime.figures().instances, 3);
    // The fourth needs a listener's place and one to load its schema on: nothing pooled is
    // idle any more, so the least recently used idle instance (Bob's first) is stopped.
    started(&runtime, &a2).await;
    assert!(!runtime.serves(b1.slug()));
    for tenant in [&b2, &a1, &a2] {
        assert!(runtime.serves(tenant.slug()), "{}", tenant.slug());
    }
    assert!(runtime.connections(ann).0 <= 4);
    let figures = runtime.figures();
    assert_eq!(figures.instances, 3);
    assert!(figures.evictions >= 2, "{figures:?}");
    // What went starts again when asked for: Bob is under his share, so Ann's least
    // recently used idle instance makes room, though his own is older.
    started(&runtime, &b1).await;
    assert!(!runtime.serves(a1.slug()));
    assert!(runtime.serves(b2.slug()) && runtime.serves(a2.slug()));

    for tenant in [b1, b2, a1, a2] {
        runtime.stop(tenant.target.database.id);
        tenant.drop_from(&cluster).await;
    }
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_tenants_idle_timeouts_do_not_close_the_data_apis_connections() {
    let cluster = cluster().await;
    let tenant = Tenant::new(
        &cluster,
        AccountId::new(),
        "sleepy",
        "create table items (id int primary key)",
    )
    .await;
    // The owner may set these on its database; they apply at every login after.
    tenant
        .owner(&cluster)
        .await
        .batch_execute(&format!(
            "alter database {0} set idle_in_transaction_session_timeout = '1ms'; \
             alter database {0} set idle_session_timeout = '1ms'",
            tenant.access.names.database
        ))
        .await
        .unwrap();
    let runtime = Runtime::start(cluster.base_config(), RuntimeSettings::default());
    let instance = started(&runtime, &tenant).await;
    for id in 0..20 {
        let body = format!("{{\"id\":{id}}}");
        let plan = quire_dataapi::plan(
            &RestRequest {
                method: "POST",
                path: "items",
                query: "",
                prefer: None,
                accept: None,
                range: None,
                content_type: Some("application/json"),
                body: body.as_bytes(),
            },
            &instance.schema(),
        )
        .unwrap();
        // Long enough for either timeout to end an idle session or transaction.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let written = instance.run(KeyRole::ServiceRole, "{}", &plan).await;
        assert!(written.is_ok(), "write {id}: {written:?}");
    }
    let count = tenant
        .superuser()
        .await
        .query_one("select count(*) from items", &[])
        .await
        .unwrap();
    assert_eq!(count.get::<_, i64>(0), 20);
    drop(instance);
    runtime.stop(tenant.target.database.id);
    tenant.drop_from(&cluster).await;
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn an_owner_connection_that_does_not_come_free_is_busy_not_a_failure() {
    let cluster = cluster().await;
    let ann = AccountId::new();
    let tenant = Tenant::new(&cluster, ann, "ann_users", HOLD).await;
    tenant
        .superuser()
        .await
        .batch_execute(&format!(
            "alter role service_role in database {} set statement_timeout = '120s'",
            tenant.access.names.database
        ))
        .await
        .unwrap();
    // A share of three: the listener, one connection as the authenticator, one as the owner.
    let runtime = Runtime::start(cluster.base_config(), settings(6, 3));
    let instance = started(&runtime, &tenant).await;

    // The authenticator's connection waits on the test's advisory lock...
    let lock = tenant.superuser().await;
    lock.execute("select pg_advisory_lock(7)", &[])
        .await
        .unwrap();
    let plan = holding(instance.as_ref());
    let request = tokio::spawn({
        let instance = instance.clone();
        async move {
            instance
                .run(KeyRole::ServiceRole, "{}", &plan)
                .await
                .is_ok()
        }
    });
    // ...and the owner's on a lock of the users' table.
    let mut table = tenant.superuser().await;
    let held = table.transaction().await.unwrap();
    held.batch_execute("lock table auth.users in access exclusive mode")
        .await
        .unwrap();
    let reading = tokio::spawn({
        let instance = instance.clone();
        async move { instance.users().user(uuid::Uuid::nil()).await.is_ok() }
    });
    eventually("both connections are in use", || {
        let runtime = runtime.clone();
        async move { runtime.figures().in_use >= 2 }
    })
    .await;

    let refused = instance.users().user(uuid::Uuid::nil()).await;
    let Err(cause) = refused else {
        panic!("a third connection was found: {refused:?}");
    };
    assert_eq!(
        cause.kind(),
        quire_kernel::InfraKind::Unavailable,
        "{cause}"
    );
    // What the auth routes answer for it: GoTrue's shape, a retry, not an internal failure.
    let answered = quire_databases::AuthError::Infra(cause);
    assert_eq!(
        (answered.status(), answered.error_code()),
        (503, "request_timeout")
    );

    held.rollback().await.unwrap();
    lock.execute("select pg_advisory_unlock(7)", &[])
        .await
        .unwrap();
    assert!(reading.await.unwrap());
    assert!(request.await.unwrap());
    drop(instance);
    runtime.stop(tenant.target.database.id);
    tenant.drop_from(&cluster).await;
}
