//! The data API's schema cache right after DDL, on every replica: two servers on one
//! metadata database and one cluster, each with its own instance of the database. In each
//! of 20 rounds, a request for a table that does not exist misses on both (`404
//! PGRST205`), the owner's SQL makes a table, and at once each replica answers a request
//! for it `200`, whenever the DDL's notification reaches its listener.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::databases::{cluster_url, create, enable_data_api, sql, with_cluster};
use crate::harness::{Backend, Server, on_both_backends};

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    a_table_made_by_sql_answers_at_once_on_every_replica
);

/// `GET /db/swift/rest/v1/{table}` with the anon key: the status and the body.
async fn read(srv: &Server, anon: &str, table: &str) -> (u16, Value) {
    let response = srv
        .http
        .get(format!("{}/db/swift/rest/v1/{table}", srv.base))
        .header("apikey", anon)
        .send()
        .await
        .expect("the gateway answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn a_table_made_by_sql_answers_at_once_on_every_replica(b: Backend) {
    let (db, first, ann) = with_cluster(b, &[]).await;
    let cluster = cluster_url();
    let second = db.start_with(&[("QUIRE_DATABASES_URL", cluster.as_str())]);
    let made = create(&first, &ann.key, json!({ "slug": "swift" })).await;
    let id = made["id"].as_str().unwrap().to_owned();
    let secret = enable_data_api(&first, &ann.key, &id).await;
    let anon = secret["anonKey"].as_str().unwrap();
    // Each replica's instance started (the first request may meet it starting).
    for srv in [&first, &second] {
        let began = Instant::now();
        while read(srv, anon, "nowhere").await.0 == 503 {
            assert!(began.elapsed() < Duration::from_secs(30), "never started");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    for round in 0..20 {
        for srv in [&first, &second] {
            let (status, body) = read(srv, anon, "nowhere").await;
            assert_eq!((status, &body["code"]), (404, &json!("PGRST205")), "{body}");
        }
        let table = format!("made_{round}");
        sql(
            &first,
            &ann.key,
            &id,
            &format!("create table {table} (id int)"),
        )
        .await
        .assert_status(200);
        for (replica, srv) in [&first, &second].into_iter().enumerate() {
            assert_eq!(
                read(srv, anon, &table).await,
                (200, json!([])),
                "round {round}, replica {replica}: {table} right after it was made"
            );
        }
    }
}
