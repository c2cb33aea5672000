//! Rotating a database's data API secret (`POST …/secret/rotate`), on both metadata
//! databases, with two replicas on one metadata database: the old `anon` and `service_role`
//! keys and an end user's access token signed under the old secret are refused at once on
//! the replica that rotated and within the record check (1 s) on the other; the new keys
//! work on both; the end user's refresh token still works and its new access token is the
//! new secret's; switching the data API off and on keeps the rotated secret; another
//! account's database is 404, a key that may only read the project 403, a database whose
//! data API was never on 400.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::databases::{DATABASES, cluster_url, create, enable_data_api, sql, with_cluster};
use crate::harness::{Backend, Server, on_both_backends};

/// The record check of another replica (`CHECK_HOLDS`, 1 s), with room for a loaded machine.
const OTHER_REPLICA_WITHIN: Duration = Duration::from_secs(5);

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    a_rotated_secret_refuses_the_old_keys_and_tokens_on_every_replica,
    rotation_is_refused_as_the_secret_is
);

/// A request to `/db/vault/{path}` with `apikey`, and `bearer` when given.
async fn call(
    srv: &Server,
    method: reqwest::Method,
    path: &str,
    apikey: &str,
    bearer: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = srv
        .http
        .request(method, format!("{}/db/vault/{path}", srv.base))
        .header("apikey", apikey);
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("gateway answers");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// The rows of `secrets` as `apikey` (and `bearer`) sees them.
async fn read(srv: &Server, apikey: &str, bearer: Option<&str>) -> (u16, Value) {
    call(
        srv,
        reqwest::Method::GET,
        "rest/v1/secrets?select=body",
        apikey,
        bearer,
        None,
    )
    .await
}

fn invalid_api_key() -> (u16, Value) {
    (
        401,
        json!({ "message": "Invalid API key", "code": "401", "hint": null, "details": null }),
    )
}

fn key<'a>(secret: &'a Value, name: &str) -> &'a str {
    secret[name].as_str().unwrap()
}

async fn a_rotated_secret_refuses_the_old_keys_and_tokens_on_every_replica(b: Backend) {
    let (db, first, ann) = with_cluster(b, &[]).await;
    let cluster = cluster_url();
    let second = db.start_with(&[("QUIRE_DATABASES_URL", cluster.as_str())]);
    let made = create(&first, &ann.key, json!({ "slug": "vault" })).await;
    let id = made["id"].as_str().unwrap().to_owned();
    sql(
        &first,
        &ann.key,
        &id,
        "create table secrets (id int primary key, body text);
         alter table secrets enable row level security;
         create policy signed_in on secrets for select to authenticated using (true);
         insert into secrets values (1, 'hidden');",
    )
    .await
    .assert_status(200);
    let old = enable_data_api(&first, &ann.key, &id).await;
    let row = json!([{ "body": "hidden" }]);

    // An end user signed in under the old secret; both replicas serve the old keys.
    let (status, session) = call(
        &first,
        reqwest::Method::POST,
        "auth/v1/signup",
        key(&old, "anonKey"),
        None,
        Some(json!({ "email": "ada@example.com", "password": "correct horse" })),
    )
    .await;
    assert_eq!(status, 200, "{session}");
    let access = session["access_token"].as_str().unwrap().to_owned();
    let refresh = session["refresh_token"].as_str().unwrap().to_owned();
    for srv in [&first, &second] {
        assert_eq!(
            read(srv, key(&old, "serviceRoleKey"), None).await,
            (200, row.clone())
        );
        assert_eq!(
            read(srv, key(&old, "anonKey"), Some(&access)).await,
            (200, row.clone())
        );
        assert_eq!(
            read(srv, key(&old, "anonKey"), None).await,
            (200, json!([]))
        );
    }

    let rotated = first
        .post(
            &format!("{DATABASES}/{id}/secret/rotate"),
            &ann.key,
            json!({}),
        )
        .await;
    assert_eq!(
        rotated.headers.get("cache-control").unwrap(),
        "no-store",
        "a secret is never cached"
    );
    let new = rotated.assert_status(200).clone();
    for field in ["jwtSecret", "anonKey", "serviceRoleKey"] {
        assert_ne!(new[field], old[field], "{field}");
    }
    assert_eq!(new["url"], old["url"]);
    let shown = first
        .get(&format!("{DATABASES}/{id}/secret"), &ann.key)
        .await;
    assert_eq!(
        shown.assert_status(200),
        &new,
        "the secret shown is the new one"
    );

    // At once on the replica that rotated: the old keys as apikey, the old access token as
    // the bearer of REST and of the auth API.
    for name in ["anonKey", "serviceRoleKey"] {
        assert_eq!(
            read(&first, key(&old, name), None).await,
            invalid_api_key(),
            "{name}"
        );
    }
    let (status, body) = read(&first, key(&new, "anonKey"), Some(&access)).await;
    assert_eq!((status, &body["code"]), (401, &json!("PGRST301")), "{body}");
    assert_eq!(body["message"], "No suitable key or wrong key type");
    let (status, body) = call(
        &first,
        reqwest::Method::GET,
        "auth/v1/user",
        key(&new, "anonKey"),
        Some(&access),
        None,
    )
    .await;
    assert_eq!(
        (status, &body["error_code"]),
        (403, &json!("bad_jwt")),
        "{body}"
    );

    // On the other replica within its record check.
    let started = Instant::now();
    loop {
        let got = read(&second, key(&old, "serviceRoleKey"), None).await;
        if got == invalid_api_key() {
            break;
        }
        assert_eq!(got, (200, row.clone()), "until then, the old instance");
        assert!(
            started.elapsed() < OTHER_REPLICA_WITHIN,
            "the other replica still takes the old key after {:?}",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "the other replica refused the old key after {:?}",
        started.elapsed()
    );
    assert_eq!(
        read(&second, key(&old, "anonKey"), None).await,
        invalid_api_key()
    );
    let (status, _) = read(&second, key(&new, "anonKey"), Some(&access)).await;
    assert_eq!(status, 401);

    // The new keys work on both; the session's refresh token still works, and its new access
    // token is the new secret's.
    for srv in [&first, &second] {
        assert_eq!(
            read(srv, key(&new, "serviceRoleKey"), None).await,
            (200, row.clone())
        );
        assert_eq!(
            read(srv, key(&new, "anonKey"), None).await,
            (200, json!([]))
        );
    }
    let (status, renewed) = call(
        &second,
        reqwest::Method::POST,
        "auth/v1/token?grant_type=refresh_token",
        key(&new, "anonKey"),
        None,
        Some(json!({ "refresh_token": refresh })),
    )
    .await;
    assert_eq!(status, 200, "{renewed}");
    let fresh = renewed["access_token"].as_str().unwrap();
    for srv in [&first, &second] {
        assert_eq!(
            read(srv, key(&new, "anonKey"), Some(fresh)).await,
            (200, row.clone())
        );
    }

    // Off and on again keeps the rotated secret (switching is not revoking).
    first
        .delete(&format!("{DATABASES}/{id}/data-api"), &ann.key, None)
        .await
        .assert_status(204);
    enable_data_api(&first, &ann.key, &id).await;
    let again = first
        .get(&format!("{DATABASES}/{id}/secret"), &ann.key)
        .await;
    assert_eq!(again.assert_status(200), &new);
    assert_eq!(
        read(&first, key(&new, "serviceRoleKey"), None).await,
        (200, row)
    );
}

async fn rotation_is_refused_as_the_secret_is(b: Backend) {
    let (db, srv, ann) = with_cluster(b, &[]).await;
    let (shared, _) = srv.project(&ann.key, "shared").await;
    let made = create(
        &srv,
        &ann.key,
        json!({ "slug": "vault", "project": "shared" }),
    )
    .await;
    let id = made["id"].as_str().unwrap().to_owned();
    let rotate = |id: &str| format!("{DATABASES}/{id}/secret/rotate");

    // Never enabled: nothing to rotate.
    srv.post(&rotate(&id), &ann.key, json!({}))
        .await
        .assert_error(400, "data_api_not_enabled");
    let before = enable_data_api(&srv, &ann.key, &id).await;

    // Another account's database is not found; so is an id that names none.
    let bob = db.create_account("bob", &[]);
    srv.post(&rotate(&id), &bob.key, json!({}))
        .await
        .assert_error(404, "not_found");
    srv.post(
        &rotate(&uuid::Uuid::new_v4().to_string()),
        &ann.key,
        json!({}),
    )
    .await
    .assert_error(404, "not_found");
    srv.post(&rotate("not-an-id"), &ann.key, json!({}))
        .await
        .assert_error(404, "not_found");

    // A key that reads the database's project but may not write it: 403, as the secret.
    let (reader, reader_id) = srv.mint(&ann.key, &["base"], None).await;
    srv.post(
        &format!("/api/platform/v1/projects/{shared}/grants"),
        &ann.key,
        json!({ "key_id": reader_id, "level": "read" }),
    )
    .await
    .assert_status(201);
    srv.get(&format!("{DATABASES}/{id}"), &reader)
        .await
        .assert_status(200);
    srv.get(&format!("{DATABASES}/{id}/secret"), &reader)
        .await
        .assert_error(403, "insufficient_scope");
    srv.post(&rotate(&id), &reader, json!({}))
        .await
        .assert_error(403, "insufficient_scope");
    // A key without `base` is refused before the database is looked at.
    let (pages_only, _) = srv.mint(&ann.key, &["page"], None).await;
    srv.post(&rotate(&id), &pages_only, json!({}))
        .await
        .assert_error(403, "insufficient_scope");

    // None of them rotated anything.
    let after = srv.get(&format!("{DATABASES}/{id}/secret"), &ann.key).await;
    assert_eq!(after.assert_status(200), &before);
}
