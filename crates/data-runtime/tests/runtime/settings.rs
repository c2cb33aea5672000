//! A database's data API settings on its instance: a target under other settings starts an
//! instance of its own that loads the schemas they expose (a name made later in one of
//! them is found on a miss, as in `public`); a plan is answered as its lines, and a write
//! under `tx=rollback` is answered and undone, a deferred constraint still refusing it.

use quire_data_runtime::{Runtime, RuntimeSettings};
use quire_dataapi::{RestRequest, Settings, plan_with, respond};
use quire_databases::{DataApiInstance, DataApiSettings, KeyRole, Missing, RunError};
use quire_kernel::AccountId;

use crate::support::{Tenant, cluster, started, started_for};

const SETUP: &str = "create schema api;
    grant usage on schema api to anon, authenticated, service_role;
    create table api.widgets (id int primary key, name text);
    grant all on api.widgets to service_role;
    create table public.notes (id int primary key);
    create table public.kids (id int primary key, parent int references public.notes
        deferrable initially deferred);
    grant all on public.notes, public.kids to service_role;";

async fn run(
    instance: &dyn DataApiInstance,
    request: &RestRequest<'_>,
    settings: Settings,
) -> Result<quire_dataapi::RestAnswer, RunError> {
    let plan = plan_with(request, &instance.schema(), settings).unwrap();
    instance
        .run(KeyRole::ServiceRole, "{}", &plan, respond)
        .await
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn other_settings_start_an_instance_that_loads_the_schemas_they_expose() {
    let cluster = cluster().await;
    let tenant = Tenant::new(&cluster, AccountId::new(), "tuned", SETUP).await;
    let runtime = Runtime::start(cluster.base_config(), RuntimeSettings::default());
    let before = started(&runtime, &tenant).await;
    assert_eq!(before.schema().schemas(), ["public"]);
    assert!(before.schema().table_in("api", "widgets").is_none());

    let mut target = tenant.target.clone();
    target.database.data_api_settings = DataApiSettings {
        exposed_schemas: vec!["api".into(), "public".into()],
        ..DataApiSettings::default()
    };
    let after = started_for(&runtime, &target).await;
    assert!(
        !std::sync::Arc::ptr_eq(&before, &after),
        "an instance under other settings is not reused"
    );
    let schema = after.schema();
    assert_eq!(schema.schemas(), ["api", "public"]);
    assert_eq!(schema.default_schema(), "api");
    assert!(schema.table_in("api", "widgets").is_some());
    assert!(schema.table_in("public", "notes").is_some());

    // A table made in the other schema after the load is found on a miss.
    let owner = tenant.owner(&cluster).await;
    owner
        .batch_execute("create table api.gadgets (id int)")
        .await
        .unwrap();
    if after.schema().table_in("api", "gadgets").is_none() {
        after.reload_schema(Missing::Table).await;
    }
    assert!(after.schema().table_in("api", "gadgets").is_some());
    drop((before, after));
    tenant.drop_from(&cluster).await;
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_plan_is_answered_as_its_lines_and_tx_rollback_undoes_the_write() {
    let cluster = cluster().await;
    let tenant = Tenant::new(&cluster, AccountId::new(), "dry_run", SETUP).await;
    let runtime = Runtime::start(cluster.base_config(), RuntimeSettings::default());
    let instance = started(&runtime, &tenant).await;
    let on = Settings {
        explain: true,
        tx_override: true,
        ..Settings::default()
    };
    let explained = run(
        instance.as_ref(),
        &RestRequest {
            method: "GET",
            path: "notes",
            accept: Some("application/vnd.pgrst.plan"),
            ..RestRequest::default()
        },
        on,
    )
    .await
    .unwrap();
    let text = explained.body.unwrap_or_default();
    assert!(text.starts_with("Aggregate  (cost="), "{text}");
    assert!(text.lines().count() > 1, "one line a row: {text}");

    let insert = RestRequest {
        method: "POST",
        path: "notes",
        prefer: Some("return=representation, tx=rollback"),
        content_type: Some("application/json"),
        body: br#"{"id": 1}"#,
        ..RestRequest::default()
    };
    let answer = run(instance.as_ref(), &insert, on).await.unwrap();
    assert_eq!(
        (answer.status, answer.body.as_deref()),
        (201, Some(r#"[{"id":1}]"#))
    );
    let owner = tenant.owner(&cluster).await;
    let count = |sql: &'static str| {
        let owner = &owner;
        async move { owner.query_one(sql, &[]).await.unwrap().get::<_, i64>(0) }
    };
    assert_eq!(count("select count(*) from notes").await, 0);
    // The connection is fine for the next request, which commits.
    run(instance.as_ref(), &insert, Settings::default())
        .await
        .unwrap();
    assert_eq!(count("select count(*) from notes").await, 1);
    // A deferred foreign key is checked before the rollback.
    let orphan = RestRequest {
        path: "kids",
        body: br#"{"id": 1, "parent": 99}"#,
        ..insert
    };
    match run(instance.as_ref(), &orphan, on).await {
        Err(RunError::Refused(pg)) => assert_eq!(pg.sqlstate, "23503"),
        other => panic!("{other:?}"),
    }
    assert_eq!(count("select count(*) from kids").await, 0);
    drop(instance);
    tenant.drop_from(&cluster).await;
}
