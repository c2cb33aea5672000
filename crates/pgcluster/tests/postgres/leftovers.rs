//! What the owner's SQL leaves in the cluster once its request is over: nothing. `COPY` to
//! or from the client refused before it runs; a query that swallows its cancel terminated
//! after the deadline, and one whose request was dropped too; the owner role's connection
//! limit; the sweep of what a stopped replica left, the owner's and the authenticator's,
//! whatever their application name.

use std::time::{Duration, Instant};

use quire_databases::{Cluster, ClusterError, TenantAccess};
use quire_pgcluster::{PgCluster, PgClusterSettings, RoleTimeouts, TenantRole};
use tokio_postgres::Client;

use crate::{admin, admin_url, cluster, cluster_with, created, try_connect};

/// A loop that catches every cancel and lifts every limit the owner may lift, for at most a
/// minute (so a failing run does not leave it behind for good).
const SWALLOWS_CANCELS: &str = "set client_connection_check_interval = 0; \
     set statement_timeout = 0; \
     do $$ declare stop timestamptz := clock_timestamp() + interval '60 s'; begin \
       loop exit when clock_timestamp() > stop; \
         begin perform pg_sleep(0.2); exception when query_canceled then null; end; \
       end loop; end $$";

/// Settings whose owner's SQL is cut after about 2 s and terminated a second later.
fn short() -> PgClusterSettings {
    PgClusterSettings {
        timeouts: RoleTimeouts {
            owner: Duration::from_secs(1),
            ..RoleTimeouts::default()
        },
        connect_timeout: Duration::from_secs(2),
        sql_deadline_margin: Duration::from_secs(1),
        sql_cancel_grace: Duration::from_secs(1),
        sweep_margin: Duration::ZERO,
        ..PgClusterSettings::default()
    }
}

/// The backends of `role` that run something (`idle` ones are left out when `active`).
async fn backends(admin: &Client, role: &str, active: bool) -> i64 {
    admin
        .query_one(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE usename = $1 AND (NOT $2 OR state <> 'idle')",
            &[&role, &active],
        )
        .await
        .unwrap()
        .get(0)
}

/// Waits up to `wait` for `role` to have no backend; how long it took, or `None`.
async fn gone_within(admin: &Client, role: &str, wait: Duration) -> Option<Duration> {
    let started = Instant::now();
    loop {
        if backends(admin, role, false).await == 0 {
            return Some(started.elapsed());
        }
        if started.elapsed() > wait {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn refused(
    cluster: &PgCluster,
    tenant: &TenantAccess,
    sql: &str,
) -> quire_databases::SqlRefusal {
    match cluster.run_sql(tenant, sql, 10).await {
        Err(ClusterError::Refused(r)) => r,
        other => panic!("{sql}: {other:?}"),
    }
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn copy_to_or_from_the_client_is_refused_and_leaves_no_backend() {
    let cluster = cluster().await;
    let admin = admin().await;
    let tenant = created(&cluster).await;
    cluster
        .run_sql(&tenant, "create table t (x text)", 1)
        .await
        .unwrap();
    for (sql, position) in [
        ("copy t from stdin", 1),
        ("create temp table x (a int); copy x from stdin", 30),
        ("copy t to stdout", 1),
        ("copy (select 1) to stdout with (format csv)", 1),
    ] {
        for _ in 0..10 {
            let r = refused(&cluster, &tenant, sql).await;
            assert_eq!(r.sqlstate, "0A000", "{sql}: {r:?}");
            assert!(r.message.contains("STDIN"), "{r:?}");
            assert!(
                r.hint.as_deref().unwrap_or_default().contains("INSERT"),
                "{r:?}"
            );
            assert_eq!(r.position, Some(position), "{sql}");
        }
    }
    assert!(
        gone_within(&admin, &tenant.names.owner_role, Duration::from_secs(5))
            .await
            .is_some(),
        "no backend of the owner is left"
    );
    // Nothing ran: the statements before the copy did not either.
    let tables = cluster
        .run_sql(
            &tenant,
            "select count(*) from pg_tables where tablename = 'x'",
            1,
        )
        .await
        .unwrap();
    assert_eq!(tables.rows, [[serde_json::json!(0)]]);
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

/// Runs the cancel-swallowing loop: answered at the deadline, its backend gone within a few
/// seconds after.
async fn a_swallowed_cancel_is_terminated(cluster: &PgCluster) {
    let admin = admin().await;
    let tenant = created(cluster).await;
    let started = Instant::now();
    let r = refused(cluster, &tenant, SWALLOWS_CANCELS).await;
    let answered = started.elapsed();
    assert_eq!(r.sqlstate, "57014", "{r:?}");
    assert!(r.message.contains("Quire allows (2 s)"), "{r:?}");
    assert!(
        answered < Duration::from_secs(4),
        "answered after {answered:?}"
    );
    let gone = gone_within(&admin, &tenant.names.owner_role, Duration::from_secs(5)).await;
    println!("answered after {answered:?}, backend gone {gone:?} later");
    assert!(
        gone.is_some(),
        "the loop's backend is gone within 5 s of the answer"
    );
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_query_that_swallows_its_cancel_ends_soon_after_the_deadline() {
    let cluster = cluster_with(short()).await;
    a_swallowed_cancel_is_terminated(&cluster).await;
}

/// Without the terminate (a grace far longer than the wait), the connection check alone ends
/// a backend whose client has gone: a loop that leaves the interval as it is.
#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_connection_check_ends_a_loop_whose_client_has_gone() {
    let cluster = cluster_with(PgClusterSettings {
        sql_cancel_grace: Duration::from_secs(60),
        ..short()
    })
    .await;
    let admin = admin().await;
    let tenant = created(&cluster).await;
    // The owner's settings cannot take back what the connection's startup options say.
    cluster
        .run_sql(
            &tenant,
            "alter role current_user set standard_conforming_strings = off; \
             alter role current_user set client_connection_check_interval = 0",
            1,
        )
        .await
        .unwrap();
    let shown = cluster
        .run_sql(
            &tenant,
            "select current_setting('standard_conforming_strings'), \
                    current_setting('client_connection_check_interval')",
            1,
        )
        .await
        .unwrap();
    assert_eq!(
        shown.rows,
        [[serde_json::json!("on"), serde_json::json!("1s")]]
    );
    let keeps_the_check =
        SWALLOWS_CANCELS.replace("set client_connection_check_interval = 0; ", "");
    let r = refused(&cluster, &tenant, &keeps_the_check).await;
    assert_eq!(r.sqlstate, "57014", "{r:?}");
    let gone = gone_within(&admin, &tenant.names.owner_role, Duration::from_secs(5)).await;
    assert!(
        gone.is_some(),
        "the loop's backend noticed its client had gone"
    );
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

/// The admin may be no superuser: as a member of the owner role it may still terminate the
/// owner's backends.
#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn an_admin_without_superuser_terminates_the_owners_backend_too() {
    let url = admin_url();
    let admin = admin().await;
    let name = format!("quire_test_admin_{}", uuid::Uuid::new_v4().simple());
    let password = quire_kernel::secret::random_url_token();
    admin
        .batch_execute(&format!(
            "CREATE ROLE {name} LOGIN CREATEDB CREATEROLE PASSWORD '{password}'"
        ))
        .await
        .unwrap();
    let cluster = PgCluster::connect(&crate::as_user(&url, &name, &password), short())
        .await
        .unwrap();
    a_swallowed_cancel_is_terminated(&cluster).await;
    drop(cluster);
    admin
        .batch_execute(&format!("DROP ROLE {name}"))
        .await
        .unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_query_whose_request_is_dropped_ends_too() {
    let cluster = cluster_with(short()).await;
    let admin = admin().await;
    let tenant = created(&cluster).await;
    // The client went away: the request's future is dropped half way.
    let dropped = tokio::time::timeout(
        Duration::from_millis(500),
        cluster.run_sql(&tenant, SWALLOWS_CANCELS, 1),
    )
    .await;
    assert!(dropped.is_err(), "{dropped:?}");
    assert!(
        gone_within(&admin, &tenant.names.owner_role, Duration::from_secs(5))
            .await
            .is_some(),
        "the dropped query's backend is gone"
    );
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_owner_role_is_limited_and_existing_roles_are_brought_up_to_date() {
    let url = admin_url();
    let one = PgClusterSettings {
        owner_connection_limit: 1,
        ..PgClusterSettings::default()
    };
    // Made under a limit of 1: one connection held, the owner's SQL is busy, not failed.
    let cluster = PgCluster::connect(&url, one.clone()).await.unwrap();
    let admin = admin().await;
    let tenant = created(&cluster).await;
    // The creation's own owner connection may take a moment to end.
    let config = cluster.tenant_config(&tenant, TenantRole::Owner);
    let started = Instant::now();
    let held = loop {
        match try_connect(&config).await {
            Ok(client) => break client,
            Err(e) if started.elapsed() < Duration::from_secs(5) => {
                assert_eq!(e.code().map(|c| c.code()), Some("53300"), "{e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{e}"),
        }
    };
    match cluster.run_sql(&tenant, "select 1", 1).await {
        Err(ClusterError::Busy(message)) => {
            assert!(message.contains("connection limit"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    drop(held);
    // A role made before the limit existed is given it when the adapter connects.
    admin
        .batch_execute(&format!(
            "ALTER ROLE \"{}\" CONNECTION LIMIT -1",
            tenant.names.owner_role
        ))
        .await
        .unwrap();
    let again = PgCluster::connect(&url, PgClusterSettings::default())
        .await
        .unwrap();
    let now: i32 = admin
        .query_one(
            "SELECT rolconnlimit FROM pg_roles WHERE rolname = $1",
            &[&tenant.names.owner_role],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(now, 10);
    again.drop_tenant(&tenant.names).await.unwrap();
}

/// Runs `sql` on a connection of its own as `config` says, named `name`, until it ends;
/// the SQLSTATE that ended it, if any.
fn left_running(
    config: &tokio_postgres::Config,
    name: &str,
    sql: &'static str,
) -> tokio::task::JoinHandle<Option<String>> {
    let mut config = config.clone();
    config.application_name(name);
    tokio::spawn(async move {
        let client = connect_ok(&config).await;
        let ended = client.batch_execute(sql).await;
        ended
            .err()
            .and_then(|e| e.code().map(|c| c.code().to_owned()))
    })
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_sweep_ends_what_a_stopped_replica_left_whatever_its_name_and_nothing_else() {
    // Every role's timeout 1 s: the owner's sessions and the authenticator's are both
    // abandoned 3 s after they began (the timeout, the margin and the grace).
    let one = Duration::from_secs(1);
    let cluster = cluster_with(PgClusterSettings {
        timeouts: RoleTimeouts {
            owner: one,
            anon: one,
            authenticated: one,
            service_role: one,
            authenticator: one,
        },
        ..short()
    })
    .await;
    let admin = admin().await;
    let tenant = created(&cluster).await;
    let (owner_role, authenticator_role) = (
        tenant.names.owner_role.as_str(),
        tenant.names.authenticator_role.as_str(),
    );
    assert_eq!(cluster.settings().abandoned_after(), Duration::from_secs(3));
    assert_eq!(
        cluster.settings().data_api_abandoned_after(),
        Duration::from_secs(3)
    );
    // A replica that stopped mid-request: its sessions run on (here a test's connection
    // keeps them, as a dead process's socket would not). The application name is the
    // tenant's to choose, so one named as the data API's is no less abandoned, and the
    // authenticator's (a data API request's function that swallows its cancel) too.
    let owner = cluster.tenant_config(&tenant, TenantRole::Owner);
    let authenticator = cluster.tenant_config(&tenant, TenantRole::Authenticator);
    let left = [
        left_running(&owner, "quire-sql", SWALLOWS_CANCELS),
        left_running(&owner, "quire data api auth", SWALLOWS_CANCELS),
        left_running(&authenticator, "quire data api", SWALLOWS_CANCELS),
    ];
    let _idle_owner = connect_ok(&owner).await;
    let _idle_authenticator = connect_ok(&authenticator).await;
    // Old enough: past the deadline and its grace.
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    // One that began just now is some request's, still within its bound.
    let recent = left_running(
        &authenticator,
        "quire data api",
        "set statement_timeout = 0; select pg_sleep(4)",
    );
    let started = Instant::now();
    while backends(&admin, authenticator_role, true).await != 2 {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the recent one runs"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(backends(&admin, owner_role, true).await, 2);
    let ended = cluster.end_abandoned_sessions().await.unwrap();
    assert!(ended >= 3, "{ended}");
    // Terminated (admin_shutdown), which no exception handler catches.
    for run in left {
        assert_eq!(run.await.unwrap().as_deref(), Some("57P01"));
    }
    // The idle ones and the recent one are not the sweep's.
    let started = Instant::now();
    while (
        backends(&admin, owner_role, false).await,
        backends(&admin, authenticator_role, false).await,
    ) != (1, 2)
    {
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "the swept sessions are gone and the others stay"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(recent.await.unwrap(), None);
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

/// A connection as the owner, waiting out a moment at the connection limit.
async fn connect_ok(config: &tokio_postgres::Config) -> Client {
    let started = Instant::now();
    loop {
        match try_connect(config).await {
            Ok(client) => return client,
            Err(_) if started.elapsed() < Duration::from_secs(5) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{e}"),
        }
    }
}
