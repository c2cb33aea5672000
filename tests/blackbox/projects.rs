//! Project create, list, get, patch, delete, resources, assign and unassign.

use serde_json::{Value, json};

use crate::harness::{Backend, on_both_backends, setup};

const PROJECTS: &str = "/api/platform/v1/projects";

fn new_project(slug: &str) -> Value {
    json!({ "name": "Marketing site", "tag": "web", "color": "emerald", "slug": slug })
}

async fn create_list_and_get(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let r = srv.post(PROJECTS, &ann.key, new_project("marketing")).await;
    let p = r.assert_status(201)["project"].clone();
    assert_eq!(p["name"], "Marketing site");
    assert_eq!(p["tag"], "web");
    assert_eq!(p["color"], "emerald");
    assert_eq!(p["slug"], "marketing");
    assert_eq!(p["status"], "active");
    assert_eq!(p["oauthClientId"], Value::Null);
    assert!(p["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(p["createdAt"], p["updatedAt"]);
    let id = p["id"].as_str().unwrap();

    let list = srv.get(PROJECTS, &ann.key).await;
    let slugs: Vec<&str> = list.assert_status(200)["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, vec!["ann", "marketing"]);

    let got = srv.get(&format!("{PROJECTS}/{id}"), &ann.key).await;
    assert_eq!(got.assert_status(200)["project"], p);
}

async fn get_is_not_found_for_malformed_foreign_or_non_home(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob = db.create_account("bob", &[]);
    srv.get(&format!("{PROJECTS}/not-a-uuid"), &ann.key)
        .await
        .assert_error(404, "not_found");
    srv.get(&format!("{PROJECTS}/{}", bob.project_id), &ann.key)
        .await
        .assert_error(404, "not_found");
    srv.get(&format!("{PROJECTS}/{}", uuid::Uuid::new_v4()), &ann.key)
        .await
        .assert_error(404, "not_found");
    // An app key sees its own home project and nothing else.
    let (other, _) = srv.project(&ann.key, "other_one").await;
    let (app, _) = srv.mint(&ann.key, &["page"], None).await;
    srv.get(&format!("{PROJECTS}/{}", ann.project_id), &app)
        .await
        .assert_status(200);
    srv.get(&format!("{PROJECTS}/{other}"), &app)
        .await
        .assert_error(404, "not_found");
    srv.get(&format!("{PROJECTS}/{other}/resources"), &app)
        .await
        .assert_error(404, "not_found");
}

async fn create_validates_every_field(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let _bob = db.create_account("bob", &[]);
    srv.call("POST", PROJECTS, Some(&ann.key), Some("{not json"))
        .await
        .assert_error(400, "invalid_json");
    srv.post(PROJECTS, &ann.key, json!(["a"]))
        .await
        .assert_error(400, "invalid_body");
    for missing in ["name", "tag", "color", "slug"] {
        let mut body = new_project("fine_slug");
        body.as_object_mut().unwrap().remove(missing);
        let r = srv.post(PROJECTS, &ann.key, body).await;
        r.assert_error(400, "invalid_project");
        assert!(r.body["message"].as_str().unwrap().contains(missing));
    }
    let mut body = new_project("fine_slug");
    body["name"] = json!(42);
    srv.post(PROJECTS, &ann.key, body)
        .await
        .assert_error(400, "invalid_project");
    let mut body = new_project("fine_slug");
    body["color"] = json!("mauve");
    let r = srv.post(PROJECTS, &ann.key, body).await;
    r.assert_error(400, "invalid_project");
    assert!(r.body["message"].as_str().unwrap().contains("emerald"));
    let mut body = new_project("fine_slug");
    body["name"] = json!("   ");
    srv.post(PROJECTS, &ann.key, body)
        .await
        .assert_error(400, "invalid_project");
    let mut body = new_project("fine_slug");
    body["oauth_client_id"] = json!("bad id with spaces");
    srv.post(PROJECTS, &ann.key, body)
        .await
        .assert_error(400, "invalid_project");
    for slug in ["ab", "Has-Caps", "with-dash", &"x".repeat(31)] {
        srv.post(PROJECTS, &ann.key, new_project(slug))
            .await
            .assert_error(400, "invalid_slug");
    }
    // Slugs are unique across the whole service: bob's default project holds "bob".
    srv.post(PROJECTS, &ann.key, new_project("bob"))
        .await
        .assert_error(409, "slug_taken");
    srv.post(PROJECTS, &ann.key, new_project("ann"))
        .await
        .assert_error(409, "slug_taken");
    // A client id must name a registered client.
    let mut body = new_project("with_client");
    body["oauth_client_id"] = json!("client-1");
    let r = srv.post(PROJECTS, &ann.key, body).await;
    r.assert_error(400, "invalid_project");
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("oauth_client_id")
    );
    let root = db.create_account("root", &["--platform-admin"]);
    let client = srv.register_client(&root.key, "Client one").await;
    let mut body = new_project("with_client");
    body["oauth_client_id"] = json!(client);
    srv.post(PROJECTS, &ann.key, body).await.assert_status(201);
    let mut body = new_project("with_client_two");
    body["oauth_client_id"] = json!(client);
    srv.post(PROJECTS, &ann.key, body)
        .await
        .assert_error(409, "client_already_attached");
    // None of the refused attempts created anything.
    let list = srv.get(PROJECTS, &ann.key).await;
    assert_eq!(list.body["projects"].as_array().unwrap().len(), 2);
}

async fn patch_changes_only_supplied_fields(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let _bob = db.create_account("bob", &[]);
    let root = db.create_account("root", &["--platform-admin"]);
    let cli_9 = srv.register_client(&root.key, "Nine").await;
    let cli_1 = srv.register_client(&root.key, "One").await;
    let (id, _) = srv.project(&ann.key, "site").await;
    let path = format!("{PROJECTS}/{id}");
    let before = srv.get(&path, &ann.key).await.body["project"].clone();

    let r = srv
        .patch(
            &path,
            &ann.key,
            json!({"name": "Renamed", "oauth_client_id": cli_9}),
        )
        .await;
    let after = r.assert_status(200)["project"].clone();
    assert_eq!(after["name"], "Renamed");
    assert_eq!(after["oauthClientId"], cli_9.as_str());
    assert_eq!(after["slug"], before["slug"]);
    assert_eq!(after["color"], before["color"]);
    assert_eq!(after["createdAt"], before["createdAt"]);
    assert_ne!(after["updatedAt"], before["updatedAt"]);

    let r = srv
        .patch(&path, &ann.key, json!({"status": "archived"}))
        .await;
    assert_eq!(r.assert_status(200)["project"]["status"], "archived");
    let r = srv
        .patch(
            &path,
            &ann.key,
            json!({"status": "active", "oauth_client_id": null}),
        )
        .await;
    let p = &r.assert_status(200)["project"];
    assert_eq!(p["status"], "active");
    assert_eq!(p["oauthClientId"], Value::Null);

    srv.patch(&path, &ann.key, json!({"status": "deleted"}))
        .await
        .assert_error(400, "invalid_project");
    srv.patch(&path, &ann.key, json!({"color": "mauve"}))
        .await
        .assert_error(400, "invalid_project");
    srv.patch(&path, &ann.key, json!({"tag": 7}))
        .await
        .assert_error(400, "invalid_project");
    srv.patch(&path, &ann.key, json!({"slug": "NO"}))
        .await
        .assert_error(400, "invalid_slug");
    srv.patch(&path, &ann.key, json!({"slug": "bob"}))
        .await
        .assert_error(409, "slug_taken");
    let (_, _) = srv.project(&ann.key, "other_site").await;
    srv.patch(
        &format!("{PROJECTS}/{}", ann.project_id),
        &ann.key,
        json!({"oauth_client_id": cli_1}),
    )
    .await
    .assert_status(200);
    srv.patch(&path, &ann.key, json!({"oauth_client_id": cli_1}))
        .await
        .assert_error(409, "client_already_attached");
    srv.patch(&path, &ann.key, json!({"oauth_client_id": "qc_unknown"}))
        .await
        .assert_error(400, "invalid_project");
    srv.call("PATCH", &path, Some(&ann.key), Some("{"))
        .await
        .assert_error(400, "invalid_json");
    srv.patch(
        &format!("{PROJECTS}/{}", uuid::Uuid::new_v4()),
        &ann.key,
        json!({"name": "x"}),
    )
    .await
    .assert_error(404, "not_found");
    let (app, _) = srv.mint(&ann.key, &["page"], None).await;
    srv.patch(&path, &app, json!({"name": "x"}))
        .await
        .assert_error(403, "insufficient_scope");
    // The failed patches changed nothing.
    let now = srv.get(&path, &ann.key).await.body["project"].clone();
    assert_eq!(now["name"], "Renamed");
    assert_eq!(now["slug"], "site");
}

async fn delete_checks_confirm_move_to_and_contents(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob = db.create_account("bob", &[]);
    let (id, _) = srv.project(&ann.key, "doomed").await;
    let path = format!("{PROJECTS}/{id}");
    let (_, key_id) = srv.mint(&ann.key, &["page"], Some("doomed")).await;

    srv.delete(&path, &ann.key, Some(json!({"confirm": "something else"})))
        .await
        .assert_error(400, "invalid_body");
    srv.delete(&path, &ann.key, Some(json!({})))
        .await
        .assert_error(400, "invalid_body");
    srv.call("DELETE", &path, Some(&ann.key), Some("nope"))
        .await
        .assert_error(400, "invalid_json");
    for bad in ["doomed", &bob.project_slug, "no_such_project"] {
        srv.delete(
            &path,
            &ann.key,
            Some(json!({"confirm": id, "move_to": bad})),
        )
        .await
        .assert_error(400, "invalid_body");
    }
    srv.delete(&path, &ann.key, Some(json!({"confirm": id})))
        .await
        .assert_error(409, "project_not_empty");
    srv.delete(
        &format!("{PROJECTS}/{}", bob.project_id),
        &ann.key,
        Some(json!({"confirm": bob.project_id})),
    )
    .await
    .assert_error(404, "not_found");
    let (app, _) = srv.mint(&ann.key, &["page"], None).await;
    srv.delete(&path, &app, Some(json!({"confirm": id})))
        .await
        .assert_error(403, "insufficient_scope");
    srv.get(&path, &ann.key).await.assert_status(200);

    srv.delete(
        &path,
        &ann.key,
        Some(json!({"confirm": id, "move_to": "ann"})),
    )
    .await
    .assert_status(204);
    srv.get(&path, &ann.key)
        .await
        .assert_error(404, "not_found");
    let res = srv
        .get(
            &format!("{PROJECTS}/{}/resources", ann.project_id),
            &ann.key,
        )
        .await;
    let keys = res.assert_status(200)["resources"]["keys"]
        .as_array()
        .unwrap()
        .clone();
    assert!(keys.iter().any(|k| k["id"] == key_id.as_str()), "{keys:?}");

    // The only project left cannot go.
    let bob_path = format!("{PROJECTS}/{}", bob.project_id);
    srv.delete(
        &bob_path,
        &bob.key,
        Some(json!({"confirm": bob.project_id})),
    )
    .await
    .assert_error(409, "last_project");
}

async fn deleting_the_default_project_promotes_the_oldest(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let (second, _) = srv.project(&ann.key, "second").await;
    let (_third, _) = srv.project(&ann.key, "third").await;
    srv.delete(
        &format!("{PROJECTS}/{}", ann.project_id),
        &ann.key,
        Some(json!({"confirm": ann.project_id})),
    )
    .await
    .assert_status(204);
    // The master key still works, and new keys land in the new default project.
    let r = srv
        .post(
            "/api/platform/v1/keys",
            &ann.key,
            json!({"name": "after", "apps": ["page"]}),
        )
        .await;
    let minted = r.assert_status(201);
    assert_eq!(minted["projectId"], second.as_str());
    assert_eq!(minted["project"], "second");
}

async fn resources_assign_and_unassign(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob = db.create_account("bob", &[]);
    let (dest, _) = srv.project(&ann.key, "dest").await;
    let (_, key_id) = srv.mint(&ann.key, &["page"], None).await;
    let resources = |project: String| {
        let srv = &srv;
        let key = ann.key.clone();
        async move {
            let r = srv
                .get(&format!("{PROJECTS}/{project}/resources"), &key)
                .await;
            r.assert_status(200)["resources"].clone()
        }
    };
    let home = resources(ann.project_id.clone()).await;
    for kind in ["pages", "objects", "links", "databases"] {
        assert_eq!(home[kind], json!([]), "{kind}");
    }
    assert_eq!(home["keys"][0]["id"], key_id.as_str());
    assert_eq!(home["keys"][0]["name"], "test key");

    let assign = format!("{PROJECTS}/{dest}/assign");
    srv.post(
        &assign,
        &ann.key,
        json!({"resource_type": "key", "resource_id": key_id}),
    )
    .await
    .assert_status(204);
    assert_eq!(
        resources(dest.clone()).await["keys"][0]["id"],
        key_id.as_str()
    );
    assert_eq!(resources(ann.project_id.clone()).await["keys"], json!([]));

    srv.post(
        &assign,
        &ann.key,
        json!({"resource_type": "widget", "resource_id": key_id}),
    )
    .await
    .assert_error(400, "invalid_resource_type");
    srv.post(&assign, &ann.key, json!({"resource_type": "key"}))
        .await
        .assert_error(400, "invalid_body");
    srv.post(
        &assign,
        &ann.key,
        json!({"resource_type": "key", "resource_id": "nope"}),
    )
    .await
    .assert_error(404, "not_found");
    srv.post(
        &assign,
        &ann.key,
        json!({"resource_type": "page", "resource_id": uuid::Uuid::new_v4()}),
    )
    .await
    .assert_error(404, "not_found");
    let (_, bob_key) = srv.mint(&bob.key, &["page"], None).await;
    srv.post(
        &assign,
        &ann.key,
        json!({"resource_type": "key", "resource_id": bob_key}),
    )
    .await
    .assert_error(404, "not_found");
    srv.post(
        &format!("{PROJECTS}/{}/assign", bob.project_id),
        &ann.key,
        json!({"resource_type": "key", "resource_id": key_id}),
    )
    .await
    .assert_error(404, "not_found");
    srv.post(
        &format!("{PROJECTS}/not-a-uuid/assign"),
        &ann.key,
        json!({"resource_type": "key", "resource_id": key_id}),
    )
    .await
    .assert_error(404, "not_found");

    // Unassign goes to the default project whatever {id} says.
    let unassign = format!("{PROJECTS}/{}/unassign", uuid::Uuid::new_v4());
    srv.post(
        &unassign,
        &ann.key,
        json!({"resource_type": "key", "resource_id": key_id}),
    )
    .await
    .assert_status(204);
    assert_eq!(
        resources(ann.project_id.clone()).await["keys"][0]["id"],
        key_id.as_str()
    );
    srv.post(
        &format!("{PROJECTS}/bad/unassign"),
        &ann.key,
        json!({"resource_type": "key", "resource_id": key_id}),
    )
    .await
    .assert_error(404, "not_found");
    srv.post(
        &unassign,
        &ann.key,
        json!({"resource_type": "thing", "resource_id": key_id}),
    )
    .await
    .assert_error(400, "invalid_resource_type");
    let (app, _) = srv.mint(&ann.key, &["page"], None).await;
    srv.post(
        &unassign,
        &app,
        json!({"resource_type": "key", "resource_id": key_id}),
    )
    .await
    .assert_error(403, "insufficient_scope");
}

on_both_backends!(
    create_list_and_get,
    get_is_not_found_for_malformed_foreign_or_non_home,
    create_validates_every_field,
    patch_changes_only_supplied_fields,
    delete_checks_confirm_move_to_and_contents,
    deleting_the_default_project_promotes_the_oldest,
    resources_assign_and_unassign,
);
