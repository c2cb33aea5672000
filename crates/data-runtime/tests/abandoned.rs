//! What a data API request leaves in the cluster once it is over, against a real
//! PostgreSQL (`QUIRE_TEST_POSTGRES_URL`, a superuser; reported as ignored when unset,
//! docs/decisions/test-skips.md): nothing, whatever the tenant's function does. A request
//! dropped halfway (its client went away) and one past its deadline both end their backend,
//! even one that lifts its own timeouts and catches every cancel, and hold their place under
//! the cap until it is gone; the connection check is pinned whatever the owner sets; and a
//! request that read its record before the database's stop (a rotation) starts nothing.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_accounts::SealedSecret;
use quire_data_runtime::{Runtime, RuntimeSettings};
use quire_dataapi::{Plan, RestRequest};
use quire_databases::{
    Cluster, DataApiInstance, DataApiRuntime, DataApiSignals, Database, DatabaseStatus,
    GatewayTarget, InstanceError, KeyRole, RunError, TenantAccess, TenantNames,
};
use quire_kernel::{AccountId, DatabaseId, ProjectId, ProjectSlug};
use quire_pgcluster::{PgCluster, PgClusterSettings};
use tokio_postgres::{Client, NoTls};

/// A function that lifts what a function may lift for itself and catches every cancel,
/// for at most a minute (so a failing run does not leave it behind for good), and one that
/// says the connection check its session runs under.
const SPIN: &str = "create function spin() returns int language plpgsql \
       set statement_timeout = 0 set client_connection_check_interval = 0 as $$ \
     declare stop timestamptz := clock_timestamp() + interval '60 s'; begin \
       loop exit when clock_timestamp() > stop; \
         begin perform pg_sleep(0.2); exception when query_canceled then null; end; \
       end loop; return 1; end $$; \
     create function check_interval() returns text language sql \
       as $$ select current_setting('client_connection_check_interval') $$; \
     grant execute on function spin(), check_interval() to anon";

fn admin_url() -> String {
    std::env::var("QUIRE_TEST_POSTGRES_URL").expect("QUIRE_TEST_POSTGRES_URL")
}

async fn connect(config: &tokio_postgres::Config) -> Client {
    let (client, conn) = config.connect(NoTls).await.unwrap();
    tokio::spawn(conn);
    client
}

/// A tenant database made as the service makes one, with [`SPIN`]'s functions.
async fn tenant(cluster: &PgCluster, account: AccountId, slug: &str) -> GatewayTarget {
    let id = DatabaseId::new();
    let access = TenantAccess {
        names: TenantNames::of(id),
        owner_password: quire_kernel::secret::random_url_token(),
        authenticator_password: quire_kernel::secret::random_url_token(),
    };
    cluster.create_roles(&access).await.unwrap();
    cluster.create_database(&access.names).await.unwrap();
    cluster.prepare_database(&access).await.unwrap();
    cluster.run_sql(&access, SPIN, 1).await.unwrap();
    let now = time::OffsetDateTime::now_utc();
    let sealed = SealedSecret::stored(String::new());
    GatewayTarget {
        database: Database {
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
        },
        tenant: access,
        jwt_secret: "a secret of the test".to_owned(),
        stops_seen: 0,
    }
}

/// Requests cut at 1 s past a 1 s timeout, their backends given 2 s after the cancel, and
/// the cluster to terminate them.
fn settings(cluster: &Arc<PgCluster>) -> RuntimeSettings {
    RuntimeSettings {
        pool_size: 4,
        threads: 1,
        start_wait: Duration::from_secs(10),
        longest_statement: Duration::from_secs(1),
        deadline_margin: Duration::from_secs(1),
        cancel_grace: Duration::from_secs(2),
        backends: Some(cluster.clone()),
        client_check_interval: cluster.client_check_interval(),
        ..RuntimeSettings::default()
    }
}

async fn started(runtime: &Runtime, target: &GatewayTarget) -> Arc<dyn DataApiInstance> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match runtime.instance(target.clone()).await {
            Ok(instance) => return instance,
            Err(e) => assert!(Instant::now() < deadline, "did not start: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn rpc(instance: &dyn DataApiInstance, name: &str) -> Plan {
    let path = format!("rpc/{name}");
    quire_dataapi::plan(
        &RestRequest {
            method: "POST",
            path: &path,
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

/// The backends of `role` running something (or holding a transaction).
async fn active(admin: &Client, role: &str) -> i64 {
    admin
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = $1 AND state <> 'idle'",
            &[&role],
        )
        .await
        .unwrap()
        .get(0)
}

/// Waits up to `wait` for `role` to run nothing; how long it took.
async fn idle_within(admin: &Client, role: &str, wait: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let now = active(admin, role).await;
        if now == 0 {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < wait,
            "{role} still runs {now} backends after {wait:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn polled(what: &str, wait: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + wait;
    while !done() {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_request_dropped_halfway_ends_its_backend_and_holds_its_place_until_then() {
    let cluster = Arc::new(
        PgCluster::connect(&admin_url(), PgClusterSettings::default())
            .await
            .unwrap(),
    );
    let admin = connect(&admin_url().parse().unwrap()).await;
    let account = AccountId::new();
    let target = tenant(&cluster, account, "dropped_halfway").await;
    let role = target.tenant.names.authenticator_role.clone();
    let runtime = Runtime::start(cluster.base_config(), settings(&cluster));
    let instance = started(&runtime, &target).await;
    let plan = rpc(&*instance, "spin");
    let at_rest = runtime.connections(account).1;
    // Three clients that give up: each request's future is dropped mid-answer.
    for _ in 0..3 {
        let dropped = tokio::time::timeout(
            Duration::from_millis(300),
            instance.run(KeyRole::Anon, "{}", &plan),
        )
        .await;
        assert!(dropped.is_err(), "{dropped:?}");
    }
    // Their places are held while their backends may run (the first used the idle
    // connection the start left).
    assert_eq!(runtime.connections(account).1, at_rest + 2);
    let gone = idle_within(&admin, &role, Duration::from_secs(10)).await;
    println!("the dropped requests' backends were gone {gone:?} after the last");
    polled("every leftover counted", Duration::from_secs(10), || {
        runtime.figures().abandoned == 3
    })
    .await;
    // Only the terminate ends a loop that lifts its check and swallows its cancel.
    assert_eq!(runtime.figures().terminated, 3);
    assert_eq!(runtime.connections(account).1, at_rest - 1);
    // The instance still serves.
    let check = rpc(&*instance, "check_interval");
    assert!(instance.run(KeyRole::Anon, "{}", &check).await.is_ok());
    drop(instance);
    runtime.stop(target.database.id);
    cluster.drop_tenant(&target.tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_request_past_its_deadline_is_answered_and_its_backend_ended() {
    let cluster = Arc::new(
        PgCluster::connect(&admin_url(), PgClusterSettings::default())
            .await
            .unwrap(),
    );
    let admin = connect(&admin_url().parse().unwrap()).await;
    let target = tenant(&cluster, AccountId::new(), "past_deadline").await;
    let role = target.tenant.names.authenticator_role.clone();
    let runtime = Runtime::start(cluster.base_config(), settings(&cluster));
    let instance = started(&runtime, &target).await;
    let plan = rpc(&*instance, "spin");
    let started = Instant::now();
    let answered = tokio::time::timeout(
        Duration::from_secs(15),
        instance.run(KeyRole::Anon, "{}", &plan),
    )
    .await
    .expect("answered at its deadline");
    let took = started.elapsed();
    match answered {
        Err(RunError::Refused(pg)) => {
            assert_eq!(pg.sqlstate, "57014", "{pg:?}");
            assert!(pg.message.contains("Quire allows (2 s)"), "{pg:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(took < Duration::from_secs(4), "answered after {took:?}");
    let gone = idle_within(&admin, &role, Duration::from_secs(10)).await;
    println!("answered after {took:?}, its backend gone {gone:?} later");
    drop(instance);
    runtime.stop(target.database.id);
    cluster.drop_tenant(&target.tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_connection_check_is_pinned_whatever_the_owner_sets() {
    let cluster = Arc::new(
        PgCluster::connect(&admin_url(), PgClusterSettings::default())
            .await
            .unwrap(),
    );
    let target = tenant(&cluster, AccountId::new(), "unchecked").await;
    // Applied at every login after; a connection's startup options outrank it.
    let sql = format!(
        "alter database {} set client_connection_check_interval = 0",
        target.tenant.names.database
    );
    cluster.run_sql(&target.tenant, &sql, 1).await.unwrap();
    let runtime = Runtime::start(cluster.base_config(), settings(&cluster));
    let instance = started(&runtime, &target).await;
    let row = instance
        .run(KeyRole::Anon, "{}", &rpc(&*instance, "check_interval"))
        .await
        .unwrap();
    assert_eq!(row.body.as_deref(), Some(r#""1s""#));
    drop(instance);
    runtime.stop(target.database.id);
    cluster.drop_tenant(&target.tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_target_read_before_its_databases_stop_starts_nothing() {
    let cluster = Arc::new(
        PgCluster::connect(&admin_url(), PgClusterSettings::default())
            .await
            .unwrap(),
    );
    let target = tenant(&cluster, AccountId::new(), "rotated").await;
    let runtime = Runtime::start(cluster.base_config(), settings(&cluster));
    // A request reads the record, then the secret is rotated here (which stops the
    // database), then the request asks for its instance.
    let read_before = GatewayTarget {
        stops_seen: runtime.stops(),
        ..target.clone()
    };
    runtime.stop(target.database.id);
    match runtime.instance(read_before).await {
        Err(InstanceError::Starting) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(runtime.running(), 0);
    assert!(runtime.fresh(target.database.slug.as_str()).is_none());
    // A request that read the record since is served.
    let read_after = GatewayTarget {
        stops_seen: runtime.stops(),
        ..target.clone()
    };
    let instance = started(&runtime, &read_after).await;
    assert!(runtime.serves(target.database.slug.as_str()));
    drop(instance);
    runtime.stop(target.database.id);
    cluster.drop_tenant(&target.tenant.names).await.unwrap();
}
