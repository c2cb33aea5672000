//! The page API over HTTP: every route and error code. Races and storage failures are in
//! `page_failures`.

use serde_json::{Value, json};

use crate::harness::{Backend, on_both_backends, setup};

pub(crate) const PAGES: &str = "/api/page/v1/pages";

pub(crate) fn site(title: &str) -> Value {
    json!({
        "title": title,
        "files": [
            {"path": "index.html", "content": "<h1>Hello</h1>"},
            {"path": "css/site.css", "content": "h1{color:red}", "encoding": "utf8"},
            {"path": "img/dot.png", "content": "iVBORw0KGgo=", "encoding": "base64"}
        ]
    })
}

pub(crate) fn with(mut body: Value, key: &str, value: Value) -> Value {
    body[key] = value;
    body
}

async fn publish_get_list_and_files(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let body = with(
        with(site("Launch Day!"), "access", json!("public")),
        "maxViews",
        json!(100),
    );
    let r = srv.post(PAGES, &ann.key, body).await;
    let p = r.assert_status(201).clone();
    assert_eq!(p["slug"], "launch-day");
    assert_eq!(p["access"], "public");
    assert_eq!(p["fileCount"], 3);
    assert_eq!(p["sizeBytes"], 14 + 13 + 8);
    assert_eq!(p["project"], "ann");
    assert_eq!(p["url"], srv.page("/ann/launch-day/"));
    let public_id = p["public_id"].as_str().unwrap();
    assert_eq!(public_id.len(), 10);
    assert_eq!(p["shortUrl"], format!("{}/s/{public_id}", srv.pages));
    let id = p["id"].as_str().unwrap();

    let got = srv.get(&format!("{PAGES}/{id}"), &ann.key).await;
    let g = got.assert_status(200);
    for field in ["id", "public_id", "url", "shortUrl", "slug", "access"] {
        assert_eq!(g[field], p[field], "{field}");
    }
    assert_eq!(g["title"], "Launch Day!");
    assert_eq!(g["entrypoint"], "index.html");
    assert_eq!(g["status"], "active");
    assert_eq!(g["maxViews"], 100);
    assert_eq!(g["viewCount"], 0);
    assert_eq!(g["expiresAt"], Value::Null);
    assert_eq!(g["archivedAt"], Value::Null);
    assert!(g["createdAt"].is_string() && g["updatedAt"].is_string());

    let list = srv.get(PAGES, &ann.key).await;
    let l = list.assert_status(200);
    assert_eq!(l["project"], "ann");
    assert_eq!(l["pages"].as_array().unwrap().len(), 1);
    assert_eq!(l["pages"][0]["id"], id);

    let files = srv.get(&format!("{PAGES}/{id}/files"), &ann.key).await;
    let f = files.assert_status(200)["files"]
        .as_array()
        .unwrap()
        .clone();
    let paths: Vec<&str> = f.iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(paths, vec!["css/site.css", "img/dot.png", "index.html"]);
    assert_eq!(f[1]["contentType"], "image/png");
    assert_eq!(f[1]["sizeBytes"], 8);
    assert_eq!(f[2]["contentType"], "text/html; charset=utf-8");
    assert_eq!(f[2]["sha256"].as_str().unwrap().len(), 64);

    // Resources of the project list the page; its link is held through it (`links` lists
    // the project's links of their own).
    let res = srv
        .get(
            &format!("/api/platform/v1/projects/{}/resources", ann.project_id),
            &ann.key,
        )
        .await;
    let r = res.assert_status(200)["resources"].clone();
    assert_eq!(r["pages"][0]["id"], id);
    assert_eq!(r["links"], json!([]), "not {public_id}'s own link");
}

async fn patch_archive_restore_and_errors(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob = db.create_account("bob", &[]);
    let a = srv.post(PAGES, &ann.key, site("Alpha")).await.body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let other = srv
        .post(
            PAGES,
            &ann.key,
            with(site("Beta"), "alias", json!("beta-alias")),
        )
        .await;
    other.assert_status(201);
    let path = format!("{PAGES}/{a}");

    let r = srv
        .patch(
            &path,
            &ann.key,
            json!({
                "title": "Alpha 2", "slug": "alpha-two", "access": "password", "password": "s3cret-words",
                "expiresAt": "2099-12-31T23:59:59Z", "maxViews": 5, "alias": "alpha"
            }),
        )
        .await;
    let p = r.assert_status(200).clone();
    assert_eq!(p["title"], "Alpha 2");
    assert_eq!(p["slug"], "alpha-two");
    assert_eq!(p["access"], "password");
    assert_eq!(p["expiresAt"], "2099-12-31T23:59:59Z");
    assert_eq!(p["maxViews"], 5);
    assert_eq!(p["shortUrl"], format!("{}/s/alpha", srv.pages));
    assert_eq!(p["url"], srv.page("/ann/alpha-two/"));
    assert!(!r.text.contains("s3cret-words"), "password echoed");

    let r = srv
        .patch(&path, &ann.key, json!({"status": "archived"}))
        .await;
    let archived = r.assert_status(200).clone();
    assert_eq!(archived["status"], "archived");
    assert!(archived["archivedAt"].is_string());
    let active = srv.get(PAGES, &ann.key).await.body["pages"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(active, 1);
    let listed = srv.get(&format!("{PAGES}?status=archived"), &ann.key).await;
    assert_eq!(listed.body["pages"][0]["id"], a.as_str());
    let r = srv
        .patch(
            &path,
            &ann.key,
            json!({"status": "active", "expiresAt": null, "maxViews": null, "alias": null}),
        )
        .await;
    let restored = r.assert_status(200).clone();
    assert_eq!(restored["status"], "active");
    assert_eq!(restored["archivedAt"], Value::Null);
    assert_eq!(restored["expiresAt"], Value::Null);
    assert_eq!(restored["maxViews"], Value::Null);
    assert_eq!(
        restored["shortUrl"],
        format!(
            "{}/s/{}",
            srv.pages,
            restored["public_id"].as_str().unwrap()
        )
    );

    srv.get(&format!("{PAGES}?status=deleted"), &ann.key)
        .await
        .assert_error(400, "invalid_request");
    srv.patch(&path, &ann.key, json!({"slug": "beta"}))
        .await
        .assert_error(409, "slug_taken");
    srv.patch(&path, &ann.key, json!({"alias": "beta-alias"}))
        .await
        .assert_error(409, "alias_conflict");
    srv.patch(&path, &ann.key, json!({"password": null}))
        .await
        .assert_error(400, "password_required");
    srv.patch(&path, &ann.key, json!({"status": "gone"}))
        .await
        .assert_error(400, "invalid_request");
    srv.patch(&path, &ann.key, json!({"title": 7}))
        .await
        .assert_error(400, "invalid_request");
    srv.call("PATCH", &path, Some(&ann.key), Some("{"))
        .await
        .assert_error(400, "invalid_json");
    srv.patch(
        &format!("{PAGES}/{}", uuid::Uuid::new_v4()),
        &ann.key,
        json!({"title": "x"}),
    )
    .await
    .assert_error(404, "not_found");
    // Another account's page does not exist for this caller.
    srv.patch(&path, &bob.key, json!({"title": "x"}))
        .await
        .assert_error(404, "not_found");
    srv.get(&path, &bob.key)
        .await
        .assert_error(404, "not_found");
    // The refused patches changed nothing.
    let now = srv.get(&path, &ann.key).await.body;
    assert_eq!(now["slug"], "alpha-two");
    assert_eq!(now["access"], "password");
}

async fn project_grants_decide_page_access(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let (project, _) = srv.project(&ann.key, "team_site").await;
    let page = srv
        .post(
            PAGES,
            &ann.key,
            with(site("Team"), "project", json!("team_site")),
        )
        .await;
    let id = page.body["id"].as_str().unwrap().to_owned();
    let (key, key_id) = srv.mint(&ann.key, &["page"], None).await;
    let path = format!("{PAGES}/{id}");
    srv.get(&path, &key)
        .await
        .assert_error(403, "insufficient_scope");
    srv.get(&format!("{PAGES}?project=team_site"), &key)
        .await
        .assert_error(403, "insufficient_scope");
    let grants = format!("/api/platform/v1/projects/{project}/grants");
    srv.post(
        &grants,
        &ann.key,
        json!({"key_id": key_id, "level": "read"}),
    )
    .await
    .assert_status(201);
    srv.get(&path, &key).await.assert_status(200);
    srv.get(&format!("{PAGES}?project=team_site"), &key)
        .await
        .assert_status(200);
    srv.patch(&path, &key, json!({"title": "x"}))
        .await
        .assert_error(403, "insufficient_scope");
    srv.post(
        PAGES,
        &key,
        with(site("Mine"), "project", json!("team_site")),
    )
    .await
    .assert_error(403, "insufficient_scope");
    srv.post(
        &grants,
        &ann.key,
        json!({"key_id": key_id, "level": "full"}),
    )
    .await
    .assert_status(201);
    srv.patch(&path, &key, json!({"title": "x"}))
        .await
        .assert_status(200);
    srv.post(
        PAGES,
        &key,
        with(site("Mine"), "project", json!("team_site")),
    )
    .await
    .assert_status(201);
}

async fn add_files_and_delete(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let id = srv.post(PAGES, &ann.key, site("Files")).await.body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let files = format!("{PAGES}/{id}/files");
    let r = srv
        .post(
            &files,
            &ann.key,
            json!({"files": [
                {"path": "index.html", "content": "<h1>v2</h1>"},
                {"path": "about/index.html", "content": "about"}
            ]}),
        )
        .await;
    let a = r.assert_status(200);
    assert_eq!(a["id"], id.as_str());
    assert_eq!(a["fileCount"], 4);
    assert_eq!(a["sizeBytes"], 11 + 13 + 8 + 5);
    let listed = srv.get(&files, &ann.key).await.body["files"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(listed, 4);
    for (body, code, status) in [
        (json!({"files": []}), "invalid_request", 400),
        (
            json!({"files": [{"path": "ok.txt", "content": "x"}, {"path": "a//b", "content": "x"}]}),
            "invalid_request",
            400,
        ),
        (
            json!({"files": [{"path": "x", "content": "%%", "encoding": "base64"}]}),
            "invalid_request",
            400,
        ),
        (json!({}), "invalid_request", 400),
    ] {
        srv.post(&files, &ann.key, body)
            .await
            .assert_error(status, code);
    }
    srv.call("POST", &files, Some(&ann.key), Some("["))
        .await
        .assert_error(400, "invalid_json");
    assert_eq!(
        srv.get(&files, &ann.key).await.body["files"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    srv.post(
        &format!("{PAGES}/{}/files", uuid::Uuid::new_v4()),
        &ann.key,
        json!({"files": [{"path": "a", "content": "b"}]}),
    )
    .await
    .assert_error(404, "not_found");
    srv.get(&format!("{PAGES}/not-a-uuid/files"), &ann.key)
        .await
        .assert_error(404, "not_found");

    srv.delete(&format!("{PAGES}/{id}"), &ann.key, None)
        .await
        .assert_status(204);
    srv.get(&format!("{PAGES}/{id}"), &ann.key)
        .await
        .assert_error(404, "not_found");
    srv.delete(&format!("{PAGES}/{id}"), &ann.key, None)
        .await
        .assert_error(404, "not_found");
    srv.get(&files, &ann.key)
        .await
        .assert_error(404, "not_found");
}

async fn shared_pages_match_account_and_email(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob = db.create_account("bob", &[]);
    let carol = db.create_account("carol", &[]);
    let body = with(
        with(site("For Bob"), "access", json!("allow_list")),
        "allow",
        json!(["bob", "carol@example.com"]),
    );
    let p = srv.post(PAGES, &ann.key, body).await;
    let id = p.assert_status(201)["id"].as_str().unwrap().to_owned();
    srv.post(PAGES, &ann.key, site("Not shared"))
        .await
        .assert_status(201);
    for who in [&bob, &carol] {
        let r = srv.get("/api/page/v1/shared", &who.key).await;
        let pages = r.assert_status(200)["pages"].as_array().unwrap().clone();
        assert_eq!(pages.len(), 1, "{}", r.text);
        let s = &pages[0];
        assert_eq!(s["pageId"], id.as_str());
        assert_eq!(s["title"], "For Bob");
        assert_eq!(s["slug"], "for-bob");
        assert_eq!(s["ownerHandle"], "ann");
        assert_eq!(s["url"], srv.page("/ann/for-bob/"));
        assert!(s["sharedAt"].is_string() && s["public_id"].is_string());
        assert_eq!(s["expiresAt"], Value::Null);
        assert_eq!(s["maxViews"], Value::Null);
    }
    let r = srv.get("/api/page/v1/shared", &ann.key).await;
    assert_eq!(r.assert_status(200)["pages"], json!([]));
}

async fn project_delete_with_pages(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let (project, _) = srv.project(&ann.key, "old_site").await;
    let id = srv
        .post(
            PAGES,
            &ann.key,
            with(site("Old"), "project", json!("old_site")),
        )
        .await
        .body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/api/platform/v1/projects/{project}");
    srv.delete(&path, &ann.key, Some(json!({"confirm": project})))
        .await
        .assert_error(409, "project_not_empty");
    srv.delete(
        &path,
        &ann.key,
        Some(json!({"confirm": project, "move_to": "ann"})),
    )
    .await
    .assert_status(204);
    let listed = srv.get(PAGES, &ann.key).await;
    assert_eq!(listed.body["pages"][0]["id"], id.as_str());
    // Assign and unassign move a page (with its link).
    let (dest, _) = srv.project(&ann.key, "dest_site").await;
    srv.post(
        &format!("/api/platform/v1/projects/{dest}/assign"),
        &ann.key,
        json!({"resource_type": "page", "resource_id": id}),
    )
    .await
    .assert_status(204);
    let moved = srv
        .get(&format!("{PAGES}?project=dest_site"), &ann.key)
        .await;
    assert_eq!(moved.body["pages"][0]["id"], id.as_str());
    let res = srv
        .get(
            &format!("/api/platform/v1/projects/{dest}/resources"),
            &ann.key,
        )
        .await;
    assert_eq!(res.body["resources"]["pages"].as_array().unwrap().len(), 1);
    assert_eq!(
        res.body["resources"]["links"],
        json!([]),
        "the page's link moved with it"
    );
    srv.post(
        &format!("/api/platform/v1/projects/{dest}/unassign"),
        &ann.key,
        json!({"resource_type": "page", "resource_id": id}),
    )
    .await
    .assert_status(204);
    assert_eq!(
        srv.get(PAGES, &ann.key).await.body["pages"][0]["id"],
        id.as_str()
    );
}

on_both_backends!(
    publish_get_list_and_files,
    patch_archive_restore_and_errors,
    project_grants_decide_page_access,
    add_files_and_delete,
    shared_pages_match_account_and_email,
    project_delete_with_pages,
);
