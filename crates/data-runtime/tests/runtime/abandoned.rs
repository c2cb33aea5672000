//! What a data API request leaves in the cluster once it is over: nothing, whatever the
//! tenant's function does. A request dropped halfway (its client went away) and one past its
//! deadline both end their backend, even one that lifts its own timeouts and catches every
//! cancel, and hold their place under the cap until it is gone; the connection check is
//! pinned whatever the owner sets; and a request that read its record before the database's
//! stop (a rotation) starts nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_data_runtime::{Runtime, RuntimeSettings};
use quire_dataapi::respond;
use quire_databases::{
    Cluster, DataApiRuntime, DataApiSignals, GatewayTarget, InstanceError, KeyRole, RunError,
};
use quire_kernel::AccountId;
use quire_pgcluster::PgCluster;
use tokio_postgres::Client;

use crate::support::{Tenant, admin_url, cluster, connect, polled, rpc, started_for};

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

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_request_dropped_halfway_ends_its_backend_and_holds_its_place_until_then() {
    let cluster = Arc::new(cluster().await);
    let admin = connect(&admin_url().parse().unwrap()).await;
    let account = AccountId::new();
    let target = Tenant::new(&cluster, account, "dropped_halfway", SPIN)
        .await
        .target;
    let role = target.tenant.names.authenticator_role.clone();
    let runtime = Runtime::start(cluster.base_config(), settings(&cluster));
    let instance = started_for(&runtime, &target).await;
    let plan = rpc(&*instance, "spin");
    let at_rest = runtime.connections(account).1;
    // Three clients that give up: each request's future is dropped mid-answer.
    for _ in 0..3 {
        let dropped = tokio::time::timeout(
            Duration::from_millis(300),
            instance.run(KeyRole::Anon, "{}", &plan, respond),
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
        std::future::ready(runtime.figures().abandoned == 3)
    })
    .await;
    // Only the terminate ends a loop that lifts its check and swallows its cancel.
    assert_eq!(runtime.figures().terminated, 3);
    assert_eq!(runtime.connections(account).1, at_rest - 1);
    // The instance still serves.
    let check = rpc(&*instance, "check_interval");
    assert!(
        instance
            .run(KeyRole::Anon, "{}", &check, respond)
            .await
            .is_ok()
    );
    drop(instance);
    runtime.stop(target.database.id);
    cluster.drop_tenant(&target.tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_request_past_its_deadline_is_answered_and_its_backend_ended() {
    let cluster = Arc::new(cluster().await);
    let admin = connect(&admin_url().parse().unwrap()).await;
    let target = Tenant::new(&cluster, AccountId::new(), "past_deadline", SPIN)
        .await
        .target;
    let role = target.tenant.names.authenticator_role.clone();
    let runtime = Runtime::start(cluster.base_config(), settings(&cluster));
    let instance = started_for(&runtime, &target).await;
    let plan = rpc(&*instance, "spin");
    let started = Instant::now();
    let answered = tokio::time::timeout(
        Duration::from_secs(15),
        instance.run(KeyRole::Anon, "{}", &plan, respond),
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
    let cluster = Arc::new(cluster().await);
    let target = Tenant::new(&cluster, AccountId::new(), "unchecked", SPIN)
        .await
        .target;
    // Applied at every login after; a connection's startup options outrank it.
    let sql = format!(
        "alter database {} set client_connection_check_interval = 0",
        target.tenant.names.database
    );
    cluster.run_sql(&target.tenant, &sql, 1).await.unwrap();
    let runtime = Runtime::start(cluster.base_config(), settings(&cluster));
    let instance = started_for(&runtime, &target).await;
    let answer = instance
        .run(
            KeyRole::Anon,
            "{}",
            &rpc(&*instance, "check_interval"),
            respond,
        )
        .await
        .unwrap();
    assert_eq!(answer.body.as_deref(), Some(r#""1s""#));
    drop(instance);
    runtime.stop(target.database.id);
    cluster.drop_tenant(&target.tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_target_read_before_its_databases_stop_starts_nothing() {
    let cluster = Arc::new(cluster().await);
    let target = Tenant::new(&cluster, AccountId::new(), "rotated", SPIN)
        .await
        .target;
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
    let instance = started_for(&runtime, &read_after).await;
    assert!(runtime.serves(target.database.slug.as_str()));
    drop(instance);
    runtime.stop(target.database.id);
    cluster.drop_tenant(&target.tenant.names).await.unwrap();
}
