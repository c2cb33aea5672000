//! A request's miss: a table, column or function made by the owner's SQL is found by the
//! request right after it, on every replica's instance, whenever the DDL's notification
//! comes and without one; a name that does not exist costs questions to the catalog, never
//! a load, and the questions are bounded however many requests name it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_data_runtime::{Runtime, RuntimeSettings};
use quire_databases::{DataApiInstance, Missing};
use quire_kernel::AccountId;

use crate::support::{Tenant, cluster, started};

/// What the gateway does for a request naming `name`: plan against the cache, and on a
/// miss bring it up to date and plan again. Whether the table is then known.
async fn table_found(instance: &dyn DataApiInstance, name: &str) -> bool {
    if instance.schema().table(name).is_some() {
        return true;
    }
    instance.reload_schema(Missing::Table).await;
    instance.schema().table(name).is_some()
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_table_made_right_after_a_miss_is_found_at_once_on_every_replica() {
    let cluster = cluster().await;
    let tenant = Tenant::new(&cluster, AccountId::new(), "prompt", "").await;
    // Two replicas: a runtime each, so an instance and a listener each on one database.
    let replicas =
        [0, 1].map(|_| Runtime::start(cluster.base_config(), RuntimeSettings::default()));
    let instances = [
        started(&replicas[0], &tenant).await,
        started(&replicas[1], &tenant).await,
    ];
    let owner = tenant.owner(&cluster).await;
    for round in 0..20 {
        let name = format!("made_{round}");
        // Another request missed just before, on each replica.
        for instance in &instances {
            assert!(!table_found(instance.as_ref(), "nowhere").await);
        }
        owner
            .batch_execute(&format!("create table {name} (id int)"))
            .await
            .unwrap();
        for (replica, instance) in instances.iter().enumerate() {
            assert!(
                table_found(instance.as_ref(), &name).await,
                "round {round}, replica {replica}: {name} was not found right after it was made"
            );
        }
    }
    drop(instances);
    tenant.drop_from(&cluster).await;
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn columns_and_functions_are_found_too_with_no_notification_at_all() {
    let cluster = cluster().await;
    let tenant = Tenant::new(
        &cluster,
        AccountId::new(),
        "quiet",
        "create table t (id int)",
    )
    .await;
    let runtime = Runtime::start(cluster.base_config(), RuntimeSettings::default());
    let instance = started(&runtime, &tenant).await;
    let heard = runtime.figures().notifications;
    // DDL with the event trigger off, as on a cluster whose admin is no superuser: no
    // notification ever comes.
    let quiet = tenant.superuser().await;
    quiet
        .batch_execute(
            "set session_replication_role = replica;
             create table hushed (id int);
             alter table t add column added text;
             create function public.answer() returns int language sql as 'select 42';",
        )
        .await
        .unwrap();
    assert!(table_found(instance.as_ref(), "hushed").await);
    let has_column = |instance: &Arc<dyn DataApiInstance>, column: &str| {
        let table = instance.schema().table("t").cloned();
        table.is_some_and(|t| t.columns.iter().any(|c| c.name == column))
    };
    // A table's load brought the others too; a rename comes after it.
    assert!(has_column(&instance, "added"));
    let hushed = |sql: &str| format!("set session_replication_role = replica; {sql}");
    quiet
        .batch_execute(&hushed("alter table t rename column added to renamed"))
        .await
        .unwrap();
    assert!(!has_column(&instance, "renamed"));
    instance.reload_schema(Missing::Column).await;
    assert!(has_column(&instance, "renamed"));
    quiet
        .batch_execute(&hushed(
            "create function public.later() returns int language sql as 'select 1'",
        ))
        .await
        .unwrap();
    assert!(instance.schema().functions("later").is_empty());
    instance.reload_schema(Missing::Function).await;
    assert_eq!(instance.schema().functions("later").len(), 1);
    assert_eq!(runtime.figures().notifications, heard, "none came");
    drop(instance);
    tenant.drop_from(&cluster).await;
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn unknown_names_cost_bounded_questions_and_no_load() {
    let cluster = cluster().await;
    let tenant = Tenant::new(
        &cluster,
        AccountId::new(),
        "probed",
        "create table t (id int)",
    )
    .await;
    let runtime = Runtime::start(cluster.base_config(), RuntimeSettings::default());
    let instance = started(&runtime, &tenant).await;
    let before = runtime.figures();

    // One request at a time, each after the questions' spacing: what one costs.
    let mut one = Vec::new();
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(30)).await;
        let asked = Instant::now();
        instance.reload_schema(Missing::Table).await;
        one.push(asked.elapsed());
    }
    one.sort();
    println!(
        "a miss on an unknown table: median {:?}, slowest {:?}",
        one[one.len() / 2],
        one[one.len() - 1]
    );

    // Many at once, for a second: the questions are spaced, each answering those waiting.
    let flood = Instant::now();
    let mut callers = Vec::new();
    for _ in 0..16 {
        let instance = instance.clone();
        callers.push(tokio::spawn(async move {
            let mut misses = 0u32;
            while flood.elapsed() < Duration::from_secs(1) {
                instance.reload_schema(Missing::Table).await;
                misses += 1;
            }
            misses
        }));
    }
    let mut misses = 0;
    for caller in callers {
        misses += caller.await.unwrap();
    }
    let seconds = flood.elapsed().as_secs_f64();
    let after = runtime.figures();
    let checks = after.schema_checks - before.schema_checks - 20;
    println!("{misses} misses in {seconds:.2} s: {checks} questions, no load");
    assert_eq!(after.schema_loads, before.schema_loads, "nothing changed");
    // At most one question every 20 ms, and one more at the edges.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let bound = (seconds / 0.020).ceil() as u64 + 2;
    assert!(checks <= bound, "{checks} questions in {seconds} s");
    assert!(u64::from(misses) > checks, "questions were shared");
    drop(instance);
    tenant.drop_from(&cluster).await;
}
