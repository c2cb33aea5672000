//! Schema reloads a notification asks for: a `NOTIFY` storm costs at most a load a second
//! and the cache ends right, and payloads that ask for nothing load nothing. (A request's
//! miss: `misses`.)

use std::time::Instant;

use quire_data_runtime::{Runtime, RuntimeSettings};
use quire_kernel::AccountId;

use crate::support::{Tenant, cluster, eventually, started};

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
