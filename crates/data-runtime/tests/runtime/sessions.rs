//! What a tenant sets on its database against the data API's sessions: its idle timeouts
//! do not close the data API's connections, and its `search_path` is not a request's, which
//! is the request's schema, then `public`, as PostgREST sets it.

use std::time::Duration;

use quire_data_runtime::{Runtime, RuntimeSettings};
use quire_dataapi::{RestRequest, respond};
use quire_databases::{DataApiSettings, DataApiSignals, KeyRole};
use quire_kernel::AccountId;

use crate::support::{Tenant, cluster, rpc, started, started_for};

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
                ..RestRequest::default()
            },
            &instance.schema(),
        )
        .unwrap();
        // Long enough for either timeout to end an idle session or transaction.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let written = instance
            .run(KeyRole::ServiceRole, "{}", &plan, respond)
            .await;
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
async fn a_request_s_search_path_is_its_schema_then_public() {
    let cluster = cluster().await;
    // `path` and `counted` in `public` and in `api`, each naming `items` unqualified.
    let tenant = Tenant::new(
        &cluster,
        AccountId::new(),
        "pathed",
        "create table items (id int primary key);
         insert into items values (1), (2);
         create function path() returns text language sql stable
           as $$ select current_setting('search_path') $$;
         create function counted() returns bigint language sql stable
           as $$ select count(*) from items $$;
         create schema api;
         grant usage on schema api to anon;
         create table api.items (id int primary key);
         insert into api.items values (1), (2), (3);
         grant select on api.items to anon;
         set check_function_bodies = off;
         create function api.path() returns text language sql stable
           as $$ select current_setting('search_path') $$;
         create function api.counted() returns bigint language sql stable
           as $$ select count(*) from items $$;",
    )
    .await;
    // A schema of the owner's first in the database's own path, with a table of the same
    // name: a request must not find it.
    tenant
        .owner(&cluster)
        .await
        .batch_execute(&format!(
            "create schema decoy; create table decoy.items (id int); \
             grant usage on schema decoy to anon; grant select on decoy.items to anon; \
             alter database {} set search_path = decoy, public",
            tenant.access.names.database
        ))
        .await
        .unwrap();
    let runtime = Runtime::start(cluster.base_config(), RuntimeSettings::default());
    // Exposing `api` first makes it the schema of a request without a profile.
    let mut exposing_api = tenant.target.clone();
    exposing_api.database.data_api_settings = DataApiSettings {
        exposed_schemas: vec!["api".into(), "public".into()],
        ..DataApiSettings::default()
    };
    for (target, path, count) in [
        (&tenant.target, "\"\\\"public\\\"\"", "2"),
        (&exposing_api, "\"\\\"api\\\", \\\"public\\\"\"", "3"),
    ] {
        let instance = started_for(&runtime, target).await;
        for (function, body) in [("path", path), ("counted", count)] {
            let plan = rpc(instance.as_ref(), function);
            let answer = instance.run(KeyRole::Anon, "{}", &plan, respond).await;
            assert_eq!(
                answer.unwrap().body.as_deref(),
                Some(body),
                "{function} in {:?}",
                target.database.data_api_settings.exposed_schemas
            );
        }
    }
    runtime.stop(tenant.target.database.id);
    tenant.drop_from(&cluster).await;
}
