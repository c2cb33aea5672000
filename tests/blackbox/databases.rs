//! The database service end to end (`/api/database/v1`), on both metadata databases, with
//! tenant databases on the test PostgreSQL cluster: creation, the owner's SQL, the data
//! API's switch, secret and reload, deletion and expiry leaving nothing in the cluster, and
//! a server with no cluster saying what to set.

use std::time::Duration;

use serde_json::{Value, json};
use tokio_postgres::NoTls;

use crate::harness::{Backend, Server, TestDb, eventually, on_both_backends, setup};

pub const DATABASES: &str = "/api/database/v1/databases";

/// The cluster tenant databases go on: the test PostgreSQL (a superuser).
pub fn cluster_url() -> String {
    std::env::var("QUIRE_TEST_POSTGRES_URL").expect("QUIRE_TEST_POSTGRES_URL")
}

/// A server on `backend`'s metadata database with the database service on the test cluster.
pub async fn with_cluster(
    backend: Backend,
    env: &[(&str, &str)],
) -> (TestDb, Server, crate::harness::Account) {
    let db = TestDb::create(backend)
        .await
        .expect("PostgreSQL is configured (the test is ignored otherwise)");
    let account = db.create_account("ann", &[]);
    let url = cluster_url();
    let mut all = vec![("QUIRE_DATABASES_URL", url.as_str())];
    all.extend_from_slice(env);
    let server = db.start_with(&all);
    (db, server, account)
}

/// Whether the cluster has a database or role of that name.
pub async fn cluster_has(kind: &str, name: &str) -> bool {
    let (client, conn) = tokio_postgres::connect(&cluster_url(), NoTls)
        .await
        .expect("connect to the cluster");
    tokio::spawn(conn);
    let sql = match kind {
        "database" => "SELECT count(*) FROM pg_database WHERE datname = $1",
        _ => "SELECT count(*) FROM pg_roles WHERE rolname = $1",
    };
    let n: i64 = client.query_one(sql, &[&name]).await.expect("count").get(0);
    n > 0
}

/// The cluster's names of a database, from its id (`TenantNames` in `quire-databases`).
pub fn tenant_names(id: &str) -> (String, String, String) {
    let hex = id.replace('-', "");
    (
        format!("q_{hex}"),
        format!("q_{hex}_owner"),
        format!("q_{hex}_auth"),
    )
}

pub async fn create(srv: &Server, key: &str, body: Value) -> Value {
    srv.post(DATABASES, key, body)
        .await
        .assert_status(201)
        .clone()
}

/// Turns database `id`'s data API on and returns its secret (`url`, the keys, `jwtSecret`).
pub async fn enable_data_api(srv: &Server, key: &str, id: &str) -> Value {
    srv.post(&format!("{DATABASES}/{id}/data-api"), key, json!({}))
        .await
        .assert_status(202);
    srv.get(&format!("{DATABASES}/{id}/secret"), key)
        .await
        .assert_status(200)
        .clone()
}

pub async fn sql(srv: &Server, key: &str, id: &str, sql: &str) -> crate::harness::Reply {
    srv.post(
        &format!("{DATABASES}/{id}/query"),
        key,
        json!({ "sql": sql }),
    )
    .await
}

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    a_server_without_a_cluster_says_what_to_set,
    a_database_is_made_used_and_dropped_whole,
    the_data_api_is_switched_and_its_keys_kept_secret,
    an_ephemeral_database_is_dropped_when_it_lapses,
    databases_are_held_moved_and_counted_by_projects
);

async fn a_server_without_a_cluster_says_what_to_set(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let listed = srv.get(DATABASES, &ann.key).await;
    assert_eq!(
        listed.assert_status(200),
        &json!({ "databases": [], "project": "ann", "available": false })
    );
    let refused = srv
        .post(DATABASES, &ann.key, json!({ "slug": "shop" }))
        .await;
    refused.assert_error(503, "database_service_unavailable");
    let message = refused.body["message"].as_str().unwrap();
    assert!(message.contains("QUIRE_DATABASES_URL"), "{message}");
    let id = uuid::Uuid::new_v4();
    for path in [
        format!("{DATABASES}/{id}"),
        format!("{DATABASES}/{id}/secret"),
    ] {
        srv.get(&path, &ann.key)
            .await
            .assert_error(503, "database_service_unavailable");
    }
    sql(&srv, &ann.key, &id.to_string(), "select 1")
        .await
        .assert_error(503, "database_service_unavailable");
}

async fn a_database_is_made_used_and_dropped_whole(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let made = create(&srv, &ann.key, json!({ "slug": "shop", "name": "Shop" })).await;
    assert_eq!(made["slug"], "shop");
    assert_eq!(made["name"], "Shop");
    assert_eq!(made["status"], "ready");
    assert_eq!(made["project"], "ann");
    assert_eq!(made["dataApi"]["enabled"], false);
    assert_eq!(
        made["dataApi"]["restUrl"],
        format!("{}/db/shop/rest/v1", srv.base)
    );
    let id = made["id"].as_str().unwrap().to_owned();
    let (database, owner, authenticator) = tenant_names(&id);
    for (kind, name) in [
        ("database", &database),
        ("role", &owner),
        ("role", &authenticator),
    ] {
        assert!(cluster_has(kind, name).await, "{kind} {name} exists");
    }

    let listed = srv.get(DATABASES, &ann.key).await;
    let listed = listed.assert_status(200);
    assert_eq!(listed["available"], true);
    assert_eq!(listed["databases"][0]["id"], id.as_str());
    assert!(listed["databases"][0]["sizeBytes"].as_u64().unwrap() > 0);

    // SQL runs as the owner, several statements at once; the answer is the last one's.
    let answer = sql(
        &srv,
        &ann.key,
        &id,
        "create table items (id serial primary key, name text, price numeric, tags jsonb, ok boolean);
         insert into items (name, price, tags, ok) values ('tea', 2.50, '[\"hot\"]', true), ('cake', null, null, false);
         select id, name, price, tags, ok, current_user as who from items order by id",
    )
    .await;
    let answer = answer.assert_status(200);
    assert_eq!(
        answer["columns"],
        json!(["id", "name", "price", "tags", "ok", "who"])
    );
    assert_eq!(answer["rowCount"], 2);
    assert_eq!(answer["rows"][0][0], 1);
    assert_eq!(answer["rows"][0][1], "tea");
    assert_eq!(answer["rows"][0][3], json!(["hot"]));
    assert_eq!(answer["rows"][0][4], true);
    assert_eq!(answer["rows"][0][5], owner.as_str());
    assert_eq!(answer["rows"][1][2], Value::Null);

    // PostgreSQL's refusal, with its SQLSTATE and where it happened.
    let refused = sql(&srv, &ann.key, &id, "select * from nowhere").await;
    refused.assert_error(400, "sql_error");
    assert_eq!(refused.body["sqlstate"], "42P01");
    assert_eq!(refused.body["position"], 15);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .contains("\"nowhere\" does not exist")
    );

    // The owner is no administrator, and cannot become one.
    for (statement, sqlstate) in [
        ("select rolname from pg_authid", "42501"),
        ("create database elsewhere", "42501"),
        ("set role postgres", "42501"),
        ("alter role current_user superuser", "42501"),
    ] {
        let refused = sql(&srv, &ann.key, &id, statement).await;
        refused.assert_error(400, "sql_error");
        assert_eq!(refused.body["sqlstate"], sqlstate, "{statement}");
    }
    let reset = sql(&srv, &ann.key, &id, "reset role; select current_user").await;
    assert_eq!(reset.assert_status(200)["rows"][0][0], owner.as_str());

    // Refusals of the routes themselves.
    srv.post(DATABASES, &ann.key, json!({ "slug": "shop" }))
        .await
        .assert_error(409, "slug_taken");
    srv.post(DATABASES, &ann.key, json!({ "slug": "No-Caps" }))
        .await
        .assert_error(400, "invalid_slug");
    srv.post(
        DATABASES,
        &ann.key,
        json!({ "slug": "ok_slug", "expiresAt": "yesterday" }),
    )
    .await
    .assert_error(400, "invalid_request");
    sql(&srv, &ann.key, &id, "  ")
        .await
        .assert_error(400, "invalid_request");
    let (page_key, _) = srv.mint(&ann.key, &["page"], None).await;
    srv.get(&format!("{DATABASES}/{id}"), &page_key)
        .await
        .assert_error(403, "insufficient_scope");
    let (base_key, _) = srv.mint(&ann.key, &["base"], None).await;
    srv.get(&format!("{DATABASES}/{id}"), &base_key)
        .await
        .assert_status(200);
    let bob = _db.create_account("bob", &[]);
    srv.get(&format!("{DATABASES}/{id}"), &bob.key)
        .await
        .assert_error(404, "not_found");
    sql(&srv, &bob.key, &id, "drop table items")
        .await
        .assert_error(404, "not_found");

    srv.delete(&format!("{DATABASES}/{id}"), &ann.key, None)
        .await
        .assert_status(204);
    srv.get(&format!("{DATABASES}/{id}"), &ann.key)
        .await
        .assert_error(404, "not_found");
    for (kind, name) in [
        ("database", &database),
        ("role", &owner),
        ("role", &authenticator),
    ] {
        assert!(!cluster_has(kind, name).await, "{kind} {name} is gone");
    }
    // The slug is free again.
    let again = create(&srv, &ann.key, json!({ "slug": "shop" })).await;
    srv.delete(
        &format!("{DATABASES}/{}", again["id"].as_str().unwrap()),
        &ann.key,
        None,
    )
    .await
    .assert_status(204);
}

async fn the_data_api_is_switched_and_its_keys_kept_secret(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let made = create(&srv, &ann.key, json!({ "slug": "notes" })).await;
    let id = made["id"].as_str().unwrap();
    let path = |tail: &str| format!("{DATABASES}/{id}{tail}");

    srv.get(&path("/secret"), &ann.key)
        .await
        .assert_error(400, "data_api_not_enabled");
    srv.post(&path("/reload"), &ann.key, json!({}))
        .await
        .assert_error(409, "data_api_disabled");

    let on = srv.post(&path("/data-api"), &ann.key, json!({})).await;
    assert_eq!(on.assert_status(202)["dataApi"]["enabled"], true);
    let secret = srv.get(&path("/secret"), &ann.key).await;
    assert_eq!(
        secret.headers.get("cache-control").unwrap(),
        "no-store",
        "a secret is never cached"
    );
    let secret = secret.assert_status(200).clone();
    assert!(secret["jwtSecret"].as_str().unwrap().len() >= 43);
    for key in ["anonKey", "serviceRoleKey"] {
        assert_eq!(secret[key].as_str().unwrap().split('.').count(), 3, "{key}");
    }
    assert_eq!(secret["url"], format!("{}/db/notes", srv.base));
    srv.post(&path("/reload"), &ann.key, json!({}))
        .await
        .assert_status(204);

    srv.delete(&path("/data-api"), &ann.key, None)
        .await
        .assert_status(204);
    srv.post(&path("/reload"), &ann.key, json!({}))
        .await
        .assert_error(409, "data_api_disabled");
    // Off is not never: the secret (and so every key handed out) is kept for the next on.
    let kept = srv.get(&path("/secret"), &ann.key).await;
    assert_eq!(kept.assert_status(200)["jwtSecret"], secret["jwtSecret"]);
    let again = srv.post(&path("/data-api"), &ann.key, json!({})).await;
    again.assert_status(202);
    let same = srv.get(&path("/secret"), &ann.key).await;
    assert_eq!(same.assert_status(200)["anonKey"], secret["anonKey"]);
    srv.delete(&path(""), &ann.key, None)
        .await
        .assert_status(204);
}

async fn an_ephemeral_database_is_dropped_when_it_lapses(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[("QUIRE_JANITOR_INTERVAL_SECS", "1")]).await;
    let at = time::OffsetDateTime::now_utc() + Duration::from_secs(2);
    let at = at
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let made = create(
        &srv,
        &ann.key,
        json!({ "slug": "scratch", "expiresAt": at }),
    )
    .await;
    assert!(made["expiresAt"].is_string());
    let id = made["id"].as_str().unwrap().to_owned();
    let (database, owner, _) = tenant_names(&id);
    assert!(cluster_has("database", &database).await);
    // The database goes first and its roles in the next statement: wait for both.
    eventually("the lapsed database and its roles are dropped", || {
        let (database, owner) = (database.clone(), owner.clone());
        async move {
            !cluster_has("database", &database).await && !cluster_has("role", &owner).await
        }
    })
    .await;
    srv.get(&format!("{DATABASES}/{id}"), &ann.key)
        .await
        .assert_error(404, "not_found");
    assert_eq!(
        srv.get(DATABASES, &ann.key).await.assert_status(200)["databases"],
        json!([])
    );
}

async fn databases_are_held_moved_and_counted_by_projects(b: Backend) {
    const PROJECTS: &str = "/api/platform/v1/projects";
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let (campaign, _) = srv.project(&ann.key, "campaign").await;
    let made = create(
        &srv,
        &ann.key,
        json!({ "slug": "crm", "name": "CRM", "project": "campaign" }),
    )
    .await;
    assert_eq!(made["project"], "campaign");
    let id = made["id"].as_str().unwrap().to_owned();
    let held = srv
        .get(&format!("{PROJECTS}/{campaign}/resources"), &ann.key)
        .await;
    let held = held.assert_status(200)["resources"]["databases"].clone();
    assert_eq!(held[0]["id"], id.as_str(), "{held}");
    assert!(held[0]["createdAt"].is_string());

    let (home_key, _) = srv.mint(&ann.key, &["base"], None).await;
    srv.get(&format!("{DATABASES}/{id}"), &home_key)
        .await
        .assert_error(403, "insufficient_scope");
    srv.delete(
        &format!("{PROJECTS}/{campaign}"),
        &ann.key,
        Some(json!({ "confirm": campaign })),
    )
    .await
    .assert_error(409, "project_not_empty");

    let (home, _) = srv.project(&ann.key, "archive").await;
    srv.post(
        &format!("{PROJECTS}/{home}/assign"),
        &ann.key,
        json!({ "resource_type": "database", "resource_id": id }),
    )
    .await
    .assert_status(204);
    let moved = srv.get(&format!("{DATABASES}/{id}"), &ann.key).await;
    assert_eq!(moved.assert_status(200)["project"], "archive");
    srv.delete(
        &format!("{PROJECTS}/{campaign}"),
        &ann.key,
        Some(json!({ "confirm": campaign })),
    )
    .await
    .assert_status(204);
    srv.delete(&format!("{DATABASES}/{id}"), &ann.key, None)
        .await
        .assert_status(204);
}

/// `QUIRE_DATABASES=local`: Quire runs a private cluster under its data folder with the
/// machine's PostgreSQL binaries, and stops it when it stops.
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL's server binaries")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_cluster_runs_and_stops_with_quire() {
    let db = TestDb::create(Backend::Sqlite).await.unwrap();
    let ann = db.create_account("ann", &[]);
    let folder = db.dir.path().join("postgres");
    let mut srv = db.start_with(&[
        ("QUIRE_DATABASES", "local"),
        ("QUIRE_DATABASES_DIR", folder.to_str().unwrap()),
    ]);
    let made = create(&srv, &ann.key, json!({ "slug": "local_one" })).await;
    let id = made["id"].as_str().unwrap();
    let answer = sql(&srv, &ann.key, id, "select 6 * 7 as answer").await;
    assert_eq!(answer.assert_status(200)["rows"], json!([[42]]));
    // The data API's own connections log in as the authenticator by SCRAM over the
    // cluster's unix socket (the cluster asks every role for its password).
    sql(
        &srv,
        &ann.key,
        id,
        "create table notes (id int primary key, body text); insert into notes values (1, 'hi');",
    )
    .await
    .assert_status(200);
    let secret = enable_data_api(&srv, &ann.key, id).await;
    let anon = secret["anonKey"].as_str().unwrap().to_owned();
    let url = format!("{}/db/local_one/rest/v1/notes?id=eq.1", srv.base);
    // The first request may meet the instance starting (503).
    let mut rows = Value::Null;
    for _ in 0..100 {
        let response = srv
            .http
            .get(&url)
            .header("apikey", &anon)
            .send()
            .await
            .unwrap();
        if response.status() == 200 {
            rows = response.json().await.unwrap();
            break;
        }
        assert_eq!(response.status(), 503, "{}", srv.logs());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(rows, json!([{ "id": 1, "body": "hi" }]));
    let pid_file = std::fs::read_to_string(folder.join("postgres/postmaster.pid"))
        .expect("the private cluster's postmaster.pid");
    let postgres: i32 = pid_file.lines().next().unwrap().trim().parse().unwrap();
    assert!(std::path::Path::new(&format!("/proc/{postgres}")).exists());
    // A clean stop of Quire stops its cluster.
    let quire = i32::try_from(srv.child.id()).unwrap();
    std::process::Command::new("kill")
        .args(["-TERM", &quire.to_string()])
        .status()
        .unwrap();
    let stopped = srv.child.wait().unwrap();
    assert!(stopped.success(), "{stopped:?}\n{}", srv.logs());
    crate::harness::eventually("the private cluster is stopped", || async {
        !std::path::Path::new(&format!("/proc/{postgres}")).exists()
            || std::fs::read_to_string(format!("/proc/{postgres}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    })
    .await;
}
