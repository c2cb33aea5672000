//! Keys: list, mint (with its prose validation errors) and revoke.

use serde_json::{Value, json};

use crate::harness::{Backend, on_both_backends, setup};

const KEYS: &str = "/api/platform/v1/keys";

async fn mint_returns_the_plaintext_once_and_list_never(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let (other, _) = srv.project(&ann.key, "other_proj").await;
    let r = srv
        .post(
            KEYS,
            &ann.key,
            json!({"name": "  deploy bot ", "apps": ["page", "link"], "project": "other_proj"}),
        )
        .await;
    let m = r.assert_status(201).clone();
    assert_eq!(r.headers["cache-control"], "no-store");
    let key = m["key"].as_str().unwrap();
    assert!(key.starts_with("qk_") && key.len() == 46, "{key}");
    assert_eq!(m["keyPrefix"], &key[..11]);
    assert_eq!(m["tier"], "app");
    assert_eq!(m["apps"], json!(["page", "link"]));
    assert_eq!(m["name"], "deploy bot");
    assert_eq!(m["projectId"], other.as_str());
    assert_eq!(m["project"], "other_proj");

    // The new key authenticates, within its scope.
    srv.get(&format!("/api/platform/v1/projects/{other}"), key)
        .await
        .assert_status(200);

    let list = srv.get(KEYS, &ann.key).await;
    let keys = list.assert_status(200)["keys"].as_array().unwrap().clone();
    assert_eq!(keys.len(), 2);
    assert!(!list.text.contains(key), "plaintext listed");
    let master = &keys[0];
    assert_eq!(master["tier"], "master");
    assert_eq!(master["apps"], Value::Null);
    assert_eq!(master["project"], "ann");
    let app = &keys[1];
    assert_eq!(app["id"], m["keyId"]);
    assert_eq!(app["keyPrefix"], m["keyPrefix"]);
    assert_eq!(app["project"], "other_proj");
    assert_eq!(app["projectId"], other.as_str());
    assert_eq!(app["revokedAt"], Value::Null);
    assert!(app.get("key").is_none() && app.get("keyHash").is_none());

    // Default project when `project` is omitted.
    let r = srv
        .post(KEYS, &ann.key, json!({"name": "d", "apps": ["base"]}))
        .await;
    assert_eq!(r.assert_status(201)["project"], "ann");
}

async fn mint_validation(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob = db.create_account("bob", &[]);
    // name and apps: 400 with prose in `error`.
    for (body, needle) in [
        (json!({"apps": ["page"]}), "name"),
        (json!({"name": "", "apps": ["page"]}), "name"),
        (json!({"name": "x".repeat(61), "apps": ["page"]}), "name"),
        (json!({"name": 3, "apps": ["page"]}), "name"),
        (json!({"name": "k"}), "apps"),
        (json!({"name": "k", "apps": []}), "apps"),
        (json!({"name": "k", "apps": ["page", "mail"]}), "mail"),
        (json!({"name": "k", "apps": ["page", "page"]}), "twice"),
        (json!({"name": "k", "apps": "page"}), "apps"),
    ] {
        let r = srv.post(KEYS, &ann.key, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.text);
        let error = r.body["error"].as_str().unwrap();
        assert!(
            error.contains(needle) && error.contains(' '),
            "{body}: {error}"
        );
    }
    let r = srv
        .post(
            KEYS,
            &ann.key,
            json!({"name": "x".repeat(60), "apps": ["serve"]}),
        )
        .await;
    r.assert_status(201);

    srv.post(
        KEYS,
        &ann.key,
        json!({"name": "k", "apps": ["page"], "app_id": "legacy"}),
    )
    .await
    .assert_error(400, "invalid_body");
    srv.post(
        KEYS,
        &ann.key,
        json!({"name": "k", "apps": ["page"], "project": 12}),
    )
    .await
    .assert_error(400, "invalid_body");
    srv.post(
        KEYS,
        &ann.key,
        json!({"name": "k", "apps": ["page"], "project": "Not A Slug"}),
    )
    .await
    .assert_error(400, "invalid_body");
    srv.post(
        KEYS,
        &ann.key,
        json!({"name": "k", "apps": ["page"], "project": bob.project_slug}),
    )
    .await
    .assert_error(403, "insufficient_scope");
    srv.post(
        KEYS,
        &ann.key,
        json!({"name": "k", "apps": ["page"], "project": "nobody_has_this"}),
    )
    .await
    .assert_error(403, "insufficient_scope");
    srv.call("POST", KEYS, Some(&ann.key), Some("name=k"))
        .await
        .assert_error(400, "invalid_json");
    // Only the one good mint above exists besides the master key.
    let keys = srv.get(KEYS, &ann.key).await.body["keys"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(keys, 2);
}

async fn revoke(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob = db.create_account("bob", &[]);
    let (key, id) = srv.mint(&ann.key, &["page"], None).await;
    let path = format!("{KEYS}/{id}");
    let (_, bob_key) = srv.mint(&bob.key, &["page"], None).await;

    srv.delete(&format!("{KEYS}/not-a-uuid"), &ann.key, None)
        .await
        .assert_error(404, "not_found");
    srv.delete(&format!("{KEYS}/{bob_key}"), &ann.key, None)
        .await
        .assert_error(404, "not_found");
    srv.delete(&path, &key, None)
        .await
        .assert_error(403, "insufficient_scope");
    let master_id = srv.get(KEYS, &ann.key).await.body["keys"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    srv.delete(&format!("{KEYS}/{master_id}"), &ann.key, None)
        .await
        .assert_error(400, "cannot_revoke_current_key");

    // Used (so held in the key cache) before it is revoked: refused at once.
    srv.get("/api/page/v1/pages", &key).await.assert_status(200);
    srv.delete(&path, &ann.key, None).await.assert_status(204);
    srv.delete(&path, &ann.key, None).await.assert_status(204);
    let listed = srv.get(KEYS, &ann.key).await;
    assert!(listed.body["keys"][1]["revokedAt"].is_string());
    srv.get("/api/platform/v1/projects", &key)
        .await
        .assert_error(401, "invalid_api_key");
}

/// `DELETE /keys/current`: any API key revokes itself (how the CLI logs out), while
/// `DELETE /keys/{id}` keeps refusing the calling key.
async fn a_key_revokes_itself(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let (app_key, app_id) = srv.mint(&ann.key, &["page"], None).await;
    let master_id = srv.get(KEYS, &ann.key).await.body["keys"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = srv
        .delete(&format!("{KEYS}/{master_id}"), &ann.key, None)
        .await;
    r.assert_error(400, "cannot_revoke_current_key");
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("/keys/current"),
        "{}",
        r.text
    );

    // An app key, used first (so the key cache holds it): refused at once afterwards.
    srv.get("/api/page/v1/pages", &app_key)
        .await
        .assert_status(200);
    let r = srv.delete(&format!("{KEYS}/current"), &app_key, None).await;
    assert_eq!(r.status, 204, "{}", r.text);
    assert!(r.text.is_empty());
    srv.get("/api/page/v1/pages", &app_key)
        .await
        .assert_error(401, "invalid_api_key");
    srv.delete(&format!("{KEYS}/current"), &app_key, None)
        .await
        .assert_error(401, "invalid_api_key");
    let keys = srv.get(KEYS, &ann.key).await;
    let listed = keys.assert_status(200)["keys"].as_array().unwrap().clone();
    let revoked = listed.iter().find(|k| k["id"] == app_id.as_str()).unwrap();
    assert!(revoked["revokedAt"].is_string(), "{}", keys.text);

    // The master key too; no credential at all is 401.
    srv.delete(&format!("{KEYS}/current"), &ann.key, None)
        .await
        .assert_status(204);
    srv.get(KEYS, &ann.key)
        .await
        .assert_error(401, "invalid_api_key");
    let r = srv
        .call("DELETE", &format!("{KEYS}/current"), None, None)
        .await;
    assert_eq!(r.status, 401, "{}", r.text);
}

on_both_backends!(
    mint_returns_the_plaintext_once_and_list_never,
    mint_validation,
    revoke,
    a_key_revokes_itself
);
