//! The OAuth client registry: every route and error, for the platform admin account only;
//! a client's home project per account; deletion as a tombstone; the CLI commands.

use serde_json::{Value, json};

use crate::cli::User;
use crate::harness::{Backend, on_both_backends, setup};

const CLIENTS: &str = "/api/platform/v1/oauth-clients";
const PROJECTS: &str = "/api/platform/v1/projects";

fn registration(client_type: &str, uris: &[&str]) -> Value {
    json!({ "name": "  Photo Printer ", "client_type": client_type, "redirect_uris": uris })
}

async fn only_the_admin_accounts_master_keys_manage_clients(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let root = db.create_account("root", &["--platform-admin"]);
    let (root_app, _) = srv.mint(&root.key, &["page"], None).await;
    let body = registration("public", &["http://127.0.0.1/cb"]);
    for path in [CLIENTS.to_owned(), format!("{CLIENTS}/qc_x")] {
        srv.get(&path, &ann.key)
            .await
            .assert_error(403, "forbidden");
        srv.get(&path, &root_app)
            .await
            .assert_error(403, "insufficient_scope");
        srv.call("GET", &path, None, None)
            .await
            .assert_error(401, "invalid_api_key");
    }
    srv.post(CLIENTS, &ann.key, body.clone())
        .await
        .assert_error(403, "forbidden");
    srv.post(CLIENTS, &root_app, body.clone())
        .await
        .assert_error(403, "insufficient_scope");
    srv.delete(&format!("{CLIENTS}/qc_x"), &ann.key, None)
        .await
        .assert_error(403, "forbidden");
    srv.post(&format!("{CLIENTS}/qc_x/secret"), &ann.key, json!({}))
        .await
        .assert_error(403, "forbidden");
    // The scope is refused before the body is read.
    srv.call("POST", CLIENTS, Some(&ann.key), Some("{"))
        .await
        .assert_error(403, "forbidden");
    let list = srv.get(CLIENTS, &root.key).await;
    assert_eq!(list.assert_status(200)["clients"], json!([]));
}

async fn registration_checks_every_field_and_shows_the_secret_once(b: Backend) {
    let Some((db, srv, _ann)) = setup(b).await else {
        return;
    };
    let root = db.create_account("root", &["--platform-admin"]);
    let r = srv
        .post(
            CLIENTS,
            &root.key,
            registration(
                "confidential",
                &["https://print.example/cb", "http://[::1]/cb"],
            ),
        )
        .await;
    let c = r.assert_status(201)["client"].clone();
    let id = c["client_id"].as_str().unwrap().to_owned();
    let secret = c["client_secret"].as_str().unwrap().to_owned();
    assert!(id.starts_with("qc_") && id.len() == 25, "{id}");
    assert_eq!(secret.len(), 43, "256 bits, base64url");
    assert_eq!(c["name"], "Photo Printer");
    assert_eq!(c["client_type"], "confidential");
    assert_eq!(
        c["redirect_uris"],
        json!(["https://print.example/cb", "http://[::1]/cb"])
    );
    assert!(c["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(r.headers["cache-control"], "no-store");

    let public = srv
        .post(
            CLIENTS,
            &root.key,
            registration("public", &["com.example.printer:/cb"]),
        )
        .await;
    let p = public.assert_status(201)["client"].clone();
    assert!(p.get("client_secret").is_none(), "{p}");

    // Every refusal is 400 invalid_body naming the field, and stores nothing.
    let refused: [(Value, &str); 11] = [
        (
            json!({"name": "   ", "client_type": "public", "redirect_uris": ["https://a.example/"]}),
            "name",
        ),
        (
            json!({"name": "x".repeat(61), "client_type": "public", "redirect_uris": ["https://a.example/"]}),
            "name",
        ),
        (
            json!({"name": "A", "client_type": "secret", "redirect_uris": ["https://a.example/"]}),
            "client_type",
        ),
        (
            json!({"name": "A", "client_type": "public", "redirect_uris": []}),
            "redirect_uris",
        ),
        (
            registration("public", &["https://a.example/cb#top"]),
            "redirect_uris[0]",
        ),
        (
            registration("public", &["https://a.example/", "http://a.example/cb"]),
            "redirect_uris[1]",
        ),
        (
            registration("confidential", &["com.example.app:/cb"]),
            "redirect_uris[0]",
        ),
        (
            registration("public", &["https://u:p@a.example/cb"]),
            "redirect_uris[0]",
        ),
        (
            registration("public", &["https://a.example/", "https://a.example/"]),
            "redirect_uris[1]",
        ),
        (
            json!({"name": "A", "client_type": "public"}),
            "redirect_uris",
        ),
        (
            json!({"name": "A", "client_type": "public", "redirect_uris": "https://a.example/"}),
            "redirect_uris",
        ),
    ];
    for (body, field) in refused {
        let r = srv.post(CLIENTS, &root.key, body.clone()).await;
        r.assert_error(400, "invalid_body");
        let message = r.body["message"].as_str().unwrap();
        assert!(message.contains(field), "{body}: {message}");
    }
    srv.call("POST", CLIENTS, Some(&root.key), Some("{"))
        .await
        .assert_error(400, "invalid_json");

    let list = srv.get(CLIENTS, &root.key).await;
    let clients = list.assert_status(200)["clients"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(clients.len(), 2);
    assert_eq!(clients[0]["client_id"], id.as_str());
    assert!(!list.text.contains(&secret), "a secret was listed");
    let one = srv.get(&format!("{CLIENTS}/{id}"), &root.key).await;
    assert_eq!(one.assert_status(200)["client"]["name"], "Photo Printer");
    assert!(!one.text.contains(&secret));
    srv.get(&format!("{CLIENTS}/qc_unknown"), &root.key)
        .await
        .assert_error(404, "not_found");
    srv.get(&format!("{CLIENTS}/not%20an%20id"), &root.key)
        .await
        .assert_error(404, "not_found");
}

async fn secrets_rotate_and_deleted_clients_leave_projects(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob = db.create_account("bob", &[]);
    let root = db.create_account("root", &["--platform-admin"]);
    let client = srv.register_client(&root.key, "Printer").await;
    let first = srv
        .post(&format!("{CLIENTS}/{client}/secret"), &root.key, json!({}))
        .await;
    let first = first.assert_status(200)["client"]["client_secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = srv
        .post(&format!("{CLIENTS}/{client}/secret"), &root.key, json!({}))
        .await;
    let second = second.assert_status(200)["client"]["client_secret"].clone();
    assert_ne!(second, first.as_str());
    let public = srv
        .post(
            CLIENTS,
            &root.key,
            registration("public", &["http://127.0.0.1/cb"]),
        )
        .await;
    let public = public.assert_status(201)["client"]["client_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = srv
        .post(&format!("{CLIENTS}/{public}/secret"), &root.key, json!({}))
        .await;
    r.assert_error(400, "invalid_body");
    srv.post(
        &format!("{CLIENTS}/qc_unknown/secret"),
        &root.key,
        json!({}),
    )
    .await
    .assert_error(404, "not_found");

    // One home project per client in each account.
    let attach = |slug: &str| json!({"name": slug, "tag": "t", "color": "blue", "slug": slug, "oauth_client_id": client});
    let r = srv.post(PROJECTS, &ann.key, attach("ann_printer")).await;
    let ann_project = r.assert_status(201)["project"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    srv.post(PROJECTS, &ann.key, attach("ann_printer_two"))
        .await
        .assert_error(409, "client_already_attached");
    let r = srv.post(PROJECTS, &bob.key, attach("bob_printer")).await;
    let bob_project = r.assert_status(201)["project"]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    srv.delete(&format!("{CLIENTS}/{client}"), &root.key, None)
        .await
        .assert_status(204);
    srv.delete(&format!("{CLIENTS}/{client}"), &root.key, None)
        .await
        .assert_error(404, "not_found");
    srv.get(&format!("{CLIENTS}/{client}"), &root.key)
        .await
        .assert_error(404, "not_found");
    srv.post(&format!("{CLIENTS}/{client}/secret"), &root.key, json!({}))
        .await
        .assert_error(404, "not_found");
    let left = srv.get(CLIENTS, &root.key).await;
    assert_eq!(
        left.assert_status(200)["clients"].as_array().unwrap().len(),
        1
    );
    for (key, project) in [(&ann.key, &ann_project), (&bob.key, &bob_project)] {
        let p = srv.get(&format!("{PROJECTS}/{project}"), key).await;
        assert_eq!(
            p.assert_status(200)["project"]["oauthClientId"],
            Value::Null
        );
    }
    // A deleted client cannot be attached again.
    srv.patch(
        &format!("{PROJECTS}/{ann_project}"),
        &ann.key,
        json!({"oauth_client_id": client}),
    )
    .await
    .assert_error(400, "invalid_project");
}

async fn the_cli_manages_clients(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let root = db.create_account("root", &["--platform-admin"]);
    let admin = User::new(&srv);
    let run = |key: &str, args: &[&str]| {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        admin.command(&all).env("QUIRE_KEY", key).output().unwrap()
    };
    let out = run(
        &root.key,
        &[
            "oauth-clients",
            "create",
            "--name",
            "Printer",
            "--redirect-uri",
            "https://print.example/cb",
            "--redirect-uri",
            "http://127.0.0.1/cb",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let created: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = created["client"]["client_id"].as_str().unwrap().to_owned();
    let secret = created["client"]["client_secret"]
        .as_str()
        .unwrap()
        .to_owned();

    let out = run(&root.key, &["oauth-clients", "list"]);
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["clients"][0]["client_id"], id.as_str());
    assert_eq!(
        listed["clients"][0]["redirect_uris"],
        json!(["https://print.example/cb", "http://127.0.0.1/cb"])
    );

    let out = run(&root.key, &["oauth-clients", "rotate-secret", &id]);
    let rotated: Value = serde_json::from_slice(&out.stdout).unwrap();
    let new_secret = rotated["client"]["client_secret"].as_str().unwrap();
    assert_ne!(new_secret, secret);

    // Text output names the id and shows the secret once.
    let text = admin
        .command(&["oauth-clients", "rotate-secret", &id])
        .env("QUIRE_KEY", &root.key)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains(&id) && text.contains("shown once"), "{text}");

    // Another account's master key is refused with the API's code.
    let out = run(&ann.key, &["oauth-clients", "list"]);
    assert_eq!(out.status.code(), Some(1));
    let refused: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(refused["error"], "forbidden");

    let out = run(&root.key, &["oauth-clients", "delete", &id]);
    assert!(out.status.success());
    let out = run(&root.key, &["oauth-clients", "list"]);
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["clients"], json!([]));
}

on_both_backends!(
    only_the_admin_accounts_master_keys_manage_clients,
    registration_checks_every_field_and_shows_the_secret_once,
    secrets_rotate_and_deleted_clients_leave_projects,
    the_cli_manages_clients,
);
