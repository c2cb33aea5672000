//! A data API request nesting `and`/`or` trees or embedded resources 10,000 deep is refused
//! with PostgREST's `400 PGRST100`, and the server answers the next request: such a query
//! string once overflowed the worker's stack and aborted the process.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::databases::{create, enable_data_api, sql, with_cluster};
use crate::harness::{Backend, Server};

const DEEP: usize = 10_000;

async fn get(srv: &Server, anon: &str, query: &str) -> (u16, Value) {
    let response = srv
        .http
        .get(format!("{}/db/nest/rest/v1/notes?{query}", srv.base))
        .header("apikey", anon)
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_request_nested_10_000_deep_is_a_400_and_the_server_stays_up() {
    let (_db, srv, ann) = with_cluster(Backend::Sqlite, &[]).await;
    let made = create(&srv, &ann.key, json!({ "slug": "nest" })).await;
    let id = made["id"].as_str().unwrap().to_owned();
    sql(
        &srv,
        &ann.key,
        &id,
        "create table notes (id int primary key); insert into notes values (1);",
    )
    .await
    .assert_status(200);
    let secret = enable_data_api(&srv, &ann.key, &id).await;
    let anon = secret["anonKey"].as_str().unwrap();
    let began = Instant::now();
    while get(&srv, anon, "select=id").await.0 == 503 {
        assert!(began.elapsed() < Duration::from_secs(30), "never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let deep_tree = format!("({}id.eq.1{})", "or(".repeat(DEEP), ")".repeat(DEEP));
    let deep_select = format!("{}id{}", "a(".repeat(DEEP), ")".repeat(DEEP));
    for (query, details) in [
        (
            format!("or={deep_tree}"),
            "logic trees nested more than 32 deep",
        ),
        (
            format!("select={deep_select}"),
            "resources nested more than 32 deep",
        ),
    ] {
        let (status, body) = get(&srv, anon, &query).await;
        assert_eq!(
            (status, &body["code"], &body["details"], &body["hint"]),
            (400, &json!("PGRST100"), &json!(details), &Value::Null),
            "{:.200}",
            body.to_string()
        );
        assert_eq!(get(&srv, anon, "id=eq.1").await, (200, json!([{"id": 1}])));
    }
}
