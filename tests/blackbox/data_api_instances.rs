//! A database's data API instance over its life: it hears DDL by itself (the event
//! trigger's `NOTIFY`, not a reload caused by the request), and it lets go of its
//! connections once idle for `QUIRE_DATA_API_IDLE_SECS`.

use std::time::Duration;

use serde_json::{Value, json};
use tokio_postgres::NoTls;

use crate::databases::{DATABASES, cluster_url, create, sql, tenant_names, with_cluster};
use crate::harness::{Backend, Server, eventually, on_both_backends};

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    ddl_reaches_a_running_instance_by_its_notification,
    an_idle_instance_lets_go_of_its_connections
);

async fn get(srv: &Server, path: &str, anon: &str) -> (u16, Value) {
    let response = srv
        .http
        .get(format!("{}{path}", srv.base))
        .header("apikey", anon)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A database with the data API on and a table `first`; its id and anon key.
async fn database(srv: &Server, key: &str, slug: &str) -> (String, String) {
    let made = create(srv, key, json!({ "slug": slug })).await;
    let id = made["id"].as_str().unwrap().to_owned();
    sql(srv, key, &id, "create table first (id int primary key)")
        .await
        .assert_status(200);
    srv.post(&format!("{DATABASES}/{id}/data-api"), key, json!({}))
        .await
        .assert_status(202);
    let secret = srv.get(&format!("{DATABASES}/{id}/secret"), key).await;
    let anon = secret.assert_status(200)["anonKey"]
        .as_str()
        .unwrap()
        .to_owned();
    (id, anon)
}

async fn ddl_reaches_a_running_instance_by_its_notification(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let (id, anon) = database(&srv, &ann.key, "heard").await;
    let path = "/db/heard/rest/v1";
    assert_eq!(get(&srv, &format!("{path}/first"), &anon).await.0, 200);
    // A name the cache lacks loads the schema again, at most once a second: right after
    // such a miss, only the notification can bring the next table in.
    assert_eq!(get(&srv, &format!("{path}/nowhere"), &anon).await.0, 404);
    sql(
        &srv,
        &ann.key,
        &id,
        "create table second (id int primary key)",
    )
    .await
    .assert_status(200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, body) = get(&srv, &format!("{path}/second"), &anon).await;
    assert_eq!((status, body), (200, json!([])));
}

/// How many connections the database's authenticator holds.
async fn authenticator_connections(id: &str) -> i64 {
    let (_, _, authenticator) = tenant_names(id);
    let (client, conn) = tokio_postgres::connect(&cluster_url(), NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = $1",
            &[&authenticator],
        )
        .await
        .unwrap()
        .get(0)
}

async fn an_idle_instance_lets_go_of_its_connections(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[("QUIRE_DATA_API_IDLE_SECS", "1")]).await;
    let (id, anon) = database(&srv, &ann.key, "sleepy").await;
    assert_eq!(get(&srv, "/db/sleepy/rest/v1/first", &anon).await.0, 200);
    assert!(
        authenticator_connections(&id).await > 0,
        "the instance is up"
    );
    eventually("the idle instance closes its connections", || {
        let id = id.clone();
        async move { authenticator_connections(&id).await == 0 }
    })
    .await;
    // The next request starts it again.
    assert_eq!(get(&srv, "/db/sleepy/rest/v1/first", &anon).await.0, 200);
}
