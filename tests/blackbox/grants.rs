//! Project grants: create, update by repeating, delete, and every refusal.

use serde_json::json;

use crate::harness::{Backend, on_both_backends, setup};

async fn grants_are_created_updated_and_deleted(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let (project, _) = srv.project(&ann.key, "shared").await;
    let (_, key_id) = srv.mint(&ann.key, &["page"], None).await;
    let grants = format!("/api/platform/v1/projects/{project}/grants");

    let r = srv
        .post(
            &grants,
            &ann.key,
            json!({"key_id": key_id, "level": "read"}),
        )
        .await;
    let g = r.assert_status(201)["grant"].clone();
    assert_eq!(g["keyId"], key_id.as_str());
    assert_eq!(g["projectId"], project.as_str());
    assert_eq!(g["level"], "read");
    assert!(g["createdAt"].is_string());

    let r = srv
        .post(
            &grants,
            &ann.key,
            json!({"key_id": key_id, "level": "full"}),
        )
        .await;
    let updated = r.assert_status(201)["grant"].clone();
    assert_eq!(updated["level"], "full");
    assert_eq!(
        updated["createdAt"], g["createdAt"],
        "one grant per key and project"
    );

    srv.delete(
        &grants,
        &ann.key,
        Some(json!({"key_id": key_id, "level": "ignored"})),
    )
    .await
    .assert_status(204);
    srv.delete(&grants, &ann.key, Some(json!({"key_id": key_id})))
        .await
        .assert_error(404, "not_found");
}

async fn grant_errors(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob = db.create_account("bob", &[]);
    let (project, _) = srv.project(&ann.key, "shared").await;
    let (app, key_id) = srv.mint(&ann.key, &["page"], None).await;
    let (_, bob_key) = srv.mint(&bob.key, &["page"], None).await;
    let grants = format!("/api/platform/v1/projects/{project}/grants");

    srv.call("POST", &grants, Some(&ann.key), Some("{"))
        .await
        .assert_error(400, "invalid_json");
    for body in [
        json!({"key_id": key_id}),
        json!({"key_id": key_id, "level": "admin"}),
        json!({"level": "read"}),
        json!({"key_id": 5, "level": "read"}),
    ] {
        srv.post(&grants, &ann.key, body)
            .await
            .assert_error(400, "invalid_body");
    }
    srv.delete(&grants, &ann.key, Some(json!({"level": "read"})))
        .await
        .assert_error(400, "invalid_body");
    srv.post(
        &grants,
        &ann.key,
        json!({"key_id": bob_key, "level": "read"}),
    )
    .await
    .assert_error(404, "not_found");
    srv.post(
        &format!("/api/platform/v1/projects/{}/grants", bob.project_id),
        &ann.key,
        json!({"key_id": key_id, "level": "read"}),
    )
    .await
    .assert_error(404, "not_found");
    srv.post(
        &grants,
        &ann.key,
        json!({"key_id": uuid::Uuid::new_v4(), "level": "read"}),
    )
    .await
    .assert_error(404, "not_found");
    srv.post(&grants, &app, json!({"key_id": key_id, "level": "full"}))
        .await
        .assert_error(403, "insufficient_scope");
    srv.delete(&grants, &app, Some(json!({"key_id": key_id})))
        .await
        .assert_error(403, "insufficient_scope");
}

on_both_backends!(grants_are_created_updated_and_deleted, grant_errors);
