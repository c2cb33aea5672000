//! The connection cap shared out among accounts: an account at its share is refused (and
//! told why) while others still start, idle connections and then the least recently used
//! idle instance make room at the cap, and an owner connection that does not come free is
//! a busy answer, not a failure.

use quire_data_runtime::Runtime;
use quire_dataapi::respond;
use quire_databases::{DataApiRuntime, DataApiSignals, InstanceError, KeyRole};
use quire_kernel::AccountId;

use crate::support::{Tenant, cluster, eventually, rpc, settings, started};

/// `hold()` waits for the advisory lock 7 the test holds.
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
    let plan = rpc(first.as_ref(), "hold");
    let request = tokio::spawn({
        let first = first.clone();
        async move {
            first
                .run(KeyRole::ServiceRole, "{}", &plan, respond)
                .await
                .is_ok()
        }
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
    let plan = rpc(instance.as_ref(), "hold");
    let request = tokio::spawn({
        let instance = instance.clone();
        async move {
            instance
                .run(KeyRole::ServiceRole, "{}", &plan, respond)
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
