//! Authentication: every way a credential can be refused, and what a valid one grants.

use serde_json::json;

use crate::harness::{Backend, on_both_backends, setup};

const PROJECTS: &str = "/api/platform/v1/projects";

async fn missing_unknown_and_malformed_credentials_are_invalid_api_key(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let r = srv.call("GET", PROJECTS, None, None).await;
    r.assert_error(401, "invalid_api_key");
    assert!(r.headers.get("www-authenticate").is_some());

    let unknown = format!("qk_{}", "A".repeat(43));
    for credential in [unknown.as_str(), "nonsense", "qk_short", ""] {
        srv.get(PROJECTS, credential)
            .await
            .assert_error(401, "invalid_api_key");
    }
    // Another scheme carrying a real key is still refused.
    let mut req = srv.http.get(format!("{}{PROJECTS}", srv.base));
    req = req.header("authorization", format!("Basic {}", ann.key));
    assert_eq!(req.send().await.unwrap().status().as_u16(), 401);
    // The scheme is case-insensitive.
    let r = srv
        .http
        .get(format!("{}{PROJECTS}", srv.base))
        .header("authorization", format!("bearer {}", ann.key))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
}

async fn jwt_shaped_credentials_are_invalid_token(b: Backend) {
    let Some((_db, srv, _ann)) = setup(b).await else {
        return;
    };
    let r = srv
        .get(
            PROJECTS,
            "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl",
        )
        .await;
    r.assert_error(401, "invalid_token");
    assert_eq!(r.body["error_description"], "malformed bearer token");
    let challenge = r.headers["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains("invalid_token"), "{challenge}");
}

async fn revoked_keys_are_refused(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let (key, id) = srv.mint(&ann.key, &["page"], None).await;
    let home = format!("{PROJECTS}/{}", ann.project_id);
    srv.get(&home, &key).await.assert_status(200);
    srv.delete(&format!("/api/platform/v1/keys/{id}"), &ann.key, None)
        .await
        .assert_status(204);
    srv.get(&home, &key)
        .await
        .assert_error(401, "invalid_api_key");
}

async fn accounts_not_activated_get_not_activated(b: Backend) {
    let Some((db, srv, _ann)) = setup(b).await else {
        return;
    };
    let dormant = db.create_account("dormant", &["--not-activated"]);
    srv.get(PROJECTS, &dormant.key)
        .await
        .assert_error(403, "not_activated");
    srv.post(PROJECTS, &dormant.key, json!({}))
        .await
        .assert_error(403, "not_activated");
}

async fn app_keys_lack_master_scope(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let (app, _) = srv.mint(&ann.key, &["page", "link"], None).await;
    srv.get(PROJECTS, &app)
        .await
        .assert_error(403, "insufficient_scope");
    srv.post(
        PROJECTS,
        &app,
        json!({"name": "x", "tag": "t", "color": "red", "slug": "xyz"}),
    )
    .await
    .assert_error(403, "insufficient_scope");
    srv.get("/api/platform/v1/keys", &app)
        .await
        .assert_error(403, "insufficient_scope");
    srv.post(
        "/api/platform/v1/keys",
        &app,
        json!({"name": "n", "apps": ["page"]}),
    )
    .await
    .assert_error(403, "insufficient_scope");
}

on_both_backends!(
    missing_unknown_and_malformed_credentials_are_invalid_api_key,
    jwt_shaped_credentials_are_invalid_token,
    revoked_keys_are_refused,
    accounts_not_activated_get_not_activated,
    app_keys_lack_master_scope,
);
