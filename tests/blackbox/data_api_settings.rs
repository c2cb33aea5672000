//! A database's data API settings (`PATCH /api/database/v1/databases/{id}/data-api`), on
//! both metadata databases, with two replicas on one metadata database: what PostgREST
//! leaves off by default (aggregates, EXPLAIN, `Prefer: tx=rollback`, a cap on rows, other
//! schemas than `public`) is off until the owner turns it on, then served by the replica
//! that changed it at once and by the other within its record check (1 s); the settings are
//! shown in the database; bad values are refused `400 invalid_request` and change nothing;
//! another account's database is 404, a key that may only read the project 403.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::databases::{DATABASES, cluster_url, create, enable_data_api, sql, with_cluster};
use crate::harness::{Backend, Server, on_both_backends};

/// The record check of another replica (`CHECK_HOLDS`, 1 s), with room for a loaded machine.
const OTHER_REPLICA_WITHIN: Duration = Duration::from_secs(5);

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    settings_are_shown_and_taken_by_every_replica,
    bad_settings_are_refused_and_change_nothing
);

const SCHEMA: &str = "create table items (id int primary key, qty int);
    insert into items values (1, 5), (2, 7), (3, 9);
    create schema api;
    grant usage on schema api to anon, authenticated, service_role;
    create table api.widgets (id int primary key, name text);
    grant select on api.widgets to anon, service_role;
    insert into api.widgets values (1, 'sprocket');";

/// A request to `/db/tuned/rest/v1/{path}` as `service_role`, with `headers`.
async fn rest(
    srv: &Server,
    key: &str,
    method: reqwest::Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = srv
        .http
        .request(method, format!("{}/db/tuned/rest/v1/{path}", srv.base))
        .header("apikey", key);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("gateway answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, headers, body)
}

async fn get(srv: &Server, key: &str, path: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    let (status, _, body) = rest(srv, key, reqwest::Method::GET, path, headers, None).await;
    (status, body)
}

fn defaults() -> Value {
    json!({
        "exposedSchemas": ["public"],
        "maxRows": null,
        "aggregates": false,
        "explain": false,
        "txRollback": false
    })
}

/// Waits until `srv` answers `path` with `status`.
async fn until_status(srv: &Server, key: &str, path: &str, status: u16) {
    let start = Instant::now();
    loop {
        let (got, body) = get(srv, key, path, &[]).await;
        if got == status {
            return;
        }
        assert!(
            start.elapsed() < OTHER_REPLICA_WITHIN,
            "{path} still answers {got} {body}, not {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn settings_are_shown_and_taken_by_every_replica(b: Backend) {
    let (db, first, ann) = with_cluster(b, &[]).await;
    let cluster = cluster_url();
    let second = db.start_with(&[("QUIRE_DATABASES_URL", cluster.as_str())]);
    let made = create(&first, &ann.key, json!({ "slug": "tuned" })).await;
    assert_eq!(made["dataApi"]["settings"], defaults());
    let id = made["id"].as_str().unwrap().to_owned();
    sql(&first, &ann.key, &id, SCHEMA).await.assert_status(200);
    let secret = enable_data_api(&first, &ann.key, &id).await;
    let key = secret["serviceRoleKey"].as_str().unwrap().to_owned();

    // Off, as PostgREST leaves them: each refused or ignored as it refuses or ignores it.
    for srv in [&first, &second] {
        let (status, body) = get(srv, &key, "items?select=qty.sum()", &[]).await;
        assert_eq!((status, &body["code"]), (400, &json!("PGRST123")), "{body}");
        let plan = [("accept", "application/vnd.pgrst.plan")];
        let (status, body) = get(srv, &key, "items", &plan).await;
        assert_eq!((status, &body["code"]), (406, &json!("PGRST107")), "{body}");
        let api = [("accept-profile", "api")];
        let (status, body) = get(srv, &key, "widgets", &api).await;
        assert_eq!((status, &body["code"]), (406, &json!("PGRST106")), "{body}");
        assert_eq!(
            get(srv, &key, "items?select=id", &[])
                .await
                .1
                .as_array()
                .map(Vec::len),
            Some(3)
        );
    }

    let path = format!("{DATABASES}/{id}/data-api");
    let changed = first
        .patch(
            &path,
            &ann.key,
            json!({
                "exposedSchemas": ["public", "api", "later"],
                "maxRows": 2,
                "aggregates": true,
                "explain": true,
                "txRollback": true
            }),
        )
        .await;
    let body = changed.assert_status(200);
    let on = json!({
        "exposedSchemas": ["public", "api", "later"],
        "maxRows": 2,
        "aggregates": true,
        "explain": true,
        "txRollback": true
    });
    assert_eq!(body["dataApi"]["settings"], on);
    assert_eq!(body["dataApi"]["missingSchemas"], json!(["later"]));
    assert_eq!(body["dataApi"]["enabled"], true);
    // Shown wherever the database is.
    let fetched = first.get(&format!("{DATABASES}/{id}"), &ann.key).await;
    assert_eq!(fetched.assert_status(200)["dataApi"]["settings"], on);
    assert!(fetched.body["dataApi"].get("missingSchemas").is_none());
    let listed = second.get(DATABASES, &ann.key).await;
    assert_eq!(
        listed.assert_status(200)["databases"][0]["dataApi"]["settings"],
        on
    );

    // The replica that changed them serves them at once; the other within its check.
    until_status(&first, &key, "items?select=qty.sum()", 200).await;
    until_status(&second, &key, "items?select=qty.sum()", 200).await;
    for srv in [&first, &second] {
        assert_eq!(
            get(srv, &key, "items?select=total:qty.sum(),n:count()", &[]).await,
            (200, json!([{ "total": 21, "n": 3 }]))
        );
        let (status, headers, body) = rest(
            srv,
            &key,
            reqwest::Method::GET,
            "items?select=id&order=id",
            &[],
            None,
        )
        .await;
        assert_eq!((status, body), (200, json!([{ "id": 1 }, { "id": 2 }])));
        assert_eq!(headers["content-range"], "0-1/*");
        let (status, headers, body) = rest(
            srv,
            &key,
            reqwest::Method::GET,
            "items",
            &[("accept", "application/vnd.pgrst.plan+json")],
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert!(body[0]["Plan"].is_object(), "{body}");
        assert_eq!(
            headers["content-type"],
            "application/vnd.pgrst.plan+json; for=\"application/json\"; charset=utf-8"
        );
        assert_eq!(
            get(srv, &key, "widgets", &[("accept-profile", "api")]).await,
            (200, json!([{ "id": 1, "name": "sprocket" }]))
        );
        let (status, headers, body) = rest(
            srv,
            &key,
            reqwest::Method::POST,
            "items",
            &[("prefer", "return=representation, tx=rollback")],
            Some(json!({ "id": 4, "qty": 1 })),
        )
        .await;
        assert_eq!((status, body), (201, json!([{ "id": 4, "qty": 1 }])));
        assert_eq!(
            headers["preference-applied"],
            "return=representation, tx=rollback"
        );
        assert_eq!(
            get(srv, &key, "items?select=id&id=eq.4", &[]).await,
            (200, json!([]))
        );
    }

    // Turned off again: refused at once here, within the check there.
    first
        .patch(
            &path,
            &ann.key,
            json!({ "aggregates": false, "maxRows": null }),
        )
        .await
        .assert_status(200);
    let (status, _) = get(&first, &key, "items?select=count()", &[]).await;
    assert_eq!(status, 400);
    until_status(&second, &key, "items?select=count()", 400).await;
    let (_, rows) = get(&second, &key, "items?select=id", &[]).await;
    assert_eq!(rows.as_array().map(Vec::len), Some(3), "the cap is gone");
}

async fn bad_settings_are_refused_and_change_nothing(b: Backend) {
    let (db, srv, ann) = with_cluster(b, &[]).await;
    let (shared, _) = srv.project(&ann.key, "shared").await;
    let made = create(
        &srv,
        &ann.key,
        json!({ "slug": "tuned", "project": "shared" }),
    )
    .await;
    let id = made["id"].as_str().unwrap().to_owned();
    let path = format!("{DATABASES}/{id}/data-api");
    for (body, says) in [
        (
            json!({ "exposedSchemas": [] }),
            "exposedSchemas must name 1 to 16",
        ),
        (
            json!({ "aggregates": true, "exposedSchemas": ["auth"] }),
            "exposedSchemas: \"auth\"",
        ),
        (
            json!({ "explain": true, "exposedSchemas": ["public", "public"] }),
            "names \"public\" twice",
        ),
        (
            json!({ "exposedSchemas": ["pg_catalog"] }),
            "PostgreSQL's own schema",
        ),
        (
            json!({ "exposedSchemas": ["my-schema"] }),
            "is not a schema name",
        ),
        (
            json!({ "txRollback": true, "maxRows": 0 }),
            "maxRows must be a whole number from 1 to 1000000",
        ),
        (json!({ "maxRows": 1_000_001 }), "maxRows must be"),
        (json!({ "maxRows": "ten" }), "maxRows"),
        (json!({ "aggregates": "yes" }), "aggregates"),
        (json!({ "exposedSchemas": "public" }), "exposedSchemas"),
        (json!({ "aggregate": true }), "unknown field `aggregate`"),
    ] {
        let refused = srv.patch(&path, &ann.key, body.clone()).await;
        refused.assert_error(400, "invalid_request");
        let message = refused.body["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{body}: {message}");
    }
    let not_json = srv
        .http
        .patch(format!("{}{path}", srv.base))
        .bearer_auth(&ann.key)
        .header("content-type", "application/json")
        .body("{")
        .send()
        .await
        .unwrap();
    assert_eq!(not_json.status().as_u16(), 400);
    let body: Value = not_json.json().await.unwrap();
    assert_eq!(body["error"], "invalid_json");

    // Another account's database is not found; so is an id that names none.
    let bob = db.create_account("bob", &[]);
    let on = json!({ "aggregates": true });
    srv.patch(&path, &bob.key, on.clone())
        .await
        .assert_error(404, "not_found");
    srv.patch(
        &format!("{DATABASES}/{}/data-api", uuid::Uuid::new_v4()),
        &ann.key,
        on.clone(),
    )
    .await
    .assert_error(404, "not_found");
    // A key that reads the database's project but may not write it: 403.
    let (reader, reader_id) = srv.mint(&ann.key, &["base"], None).await;
    srv.post(
        &format!("/api/platform/v1/projects/{shared}/grants"),
        &ann.key,
        json!({ "key_id": reader_id, "level": "read" }),
    )
    .await
    .assert_status(201);
    srv.patch(&path, &reader, on.clone())
        .await
        .assert_error(403, "insufficient_scope");

    // None of them changed anything.
    let after = srv.get(&format!("{DATABASES}/{id}"), &ann.key).await;
    assert_eq!(after.assert_status(200)["dataApi"]["settings"], defaults());
    // An empty change changes nothing and answers the database.
    let same = srv.patch(&path, &ann.key, json!({})).await;
    assert_eq!(same.assert_status(200)["dataApi"]["settings"], defaults());
}
