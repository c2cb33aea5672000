//! The page API over HTTP: every route and error code, races, and a storage failure on the
//! real bundle adapter.

use serde_json::{Value, json};

use crate::harness::{Backend, TestDb, on_both_backends, setup};

const PAGES: &str = "/api/page/v1/pages";

fn site(title: &str) -> Value {
    json!({
        "title": title,
        "files": [
            {"path": "index.html", "content": "<h1>Hello</h1>"},
            {"path": "css/site.css", "content": "h1{color:red}", "encoding": "utf8"},
            {"path": "img/dot.png", "content": "iVBORw0KGgo=", "encoding": "base64"}
        ]
    })
}

fn with(mut body: Value, key: &str, value: Value) -> Value {
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

    // Resources of the project list the page and its link.
    let res = srv
        .get(
            &format!("/api/platform/v1/projects/{}/resources", ann.project_id),
            &ann.key,
        )
        .await;
    let r = res.assert_status(200)["resources"].clone();
    assert_eq!(r["pages"][0]["id"], id);
    assert_eq!(r["links"][0]["name"], public_id);
}

async fn publish_validation(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob = db.create_account("bob", &[]);
    srv.call("POST", PAGES, Some(&ann.key), Some("{nope"))
        .await
        .assert_error(400, "invalid_json");
    let cases: Vec<(Value, &str)> = vec![
        (json!({"files": site("x")["files"]}), "title"),
        (with(site("x"), "title", json!("")), "title"),
        (with(site("x"), "title", json!("t".repeat(201))), "title"),
        (with(site("x"), "files", json!([])), "files"),
        (with(site("x"), "files", json!("index.html")), "files"),
        (
            with(site("x"), "files", json!([{"path": "index.html"}])),
            "files[0].content",
        ),
        (
            with(
                site("x"),
                "files",
                json!([{"path": "../x", "content": "a"}]),
            ),
            "unsafe",
        ),
        (
            with(
                site("x"),
                "files",
                json!([{"path": "/etc/passwd", "content": "a"}]),
            ),
            "unsafe",
        ),
        (
            with(
                site("x"),
                "files",
                json!([{"path": "a\\b", "content": "a"}]),
            ),
            "unsafe",
        ),
        (
            with(
                site("x"),
                "files",
                json!([{"path": "index.html", "content": "a"}, {"path": "index.html", "content": "b"}]),
            ),
            "twice",
        ),
        (
            with(
                site("x"),
                "files",
                json!([{"path": "index.html", "content": "***", "encoding": "base64"}]),
            ),
            "base64",
        ),
        (
            with(
                site("x"),
                "files",
                json!([{"path": "index.html", "content": "a", "encoding": "rot13"}]),
            ),
            "encoding",
        ),
        (
            with(site("x"), "entrypoint", json!("home.html")),
            "entrypoint",
        ),
        (with(site("x"), "access", json!("secret")), "access"),
        (with(site("x"), "slug", json!("Bad Slug")), "slug"),
        (
            with(site("x"), "expiresAt", json!("next week")),
            "expiresAt",
        ),
        (
            with(site("x"), "expiresAt", json!("2001-01-01T00:00:00Z")),
            "expiresAt",
        ),
        (with(site("x"), "maxViews", json!(0)), "maxViews"),
        (with(site("x"), "maxViews", json!(1.5)), "maxViews"),
        (with(site("x"), "maxViews", json!("10")), "maxViews"),
        (with(site("x"), "alias", json!("a")), "alias"),
        (
            with(site("x"), "allow", json!(["no_such_handle"])),
            "no_such_handle",
        ),
        (with(site("x"), "allow", json!(["not an email@"])), "allow"),
        (with(site("x"), "allow", json!("bob")), "allow"),
    ];
    for (body, needle) in cases {
        let r = srv.post(PAGES, &ann.key, body.clone()).await;
        r.assert_error(400, "invalid_request");
        assert!(
            r.body["message"].as_str().unwrap().contains(needle),
            "{needle}: {}",
            r.text
        );
    }
    srv.post(
        PAGES,
        &ann.key,
        with(site("x"), "access", json!("password")),
    )
    .await
    .assert_error(400, "password_required");
    srv.post(
        PAGES,
        &ann.key,
        with(site("x"), "project", json!(bob.project_slug)),
    )
    .await
    .assert_error(403, "insufficient_scope");
    let (no_page, _) = srv.mint(&ann.key, &["link"], None).await;
    srv.post(PAGES, &no_page, site("x"))
        .await
        .assert_error(403, "insufficient_scope");
    srv.get(PAGES, &no_page)
        .await
        .assert_error(403, "insufficient_scope");
    // Nothing was created by any refused publish.
    let list = srv.get(PAGES, &ann.key).await;
    assert_eq!(list.body["pages"], json!([]));
}

async fn conflicts_and_derived_slugs(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let first = srv
        .post(
            PAGES,
            &ann.key,
            with(site("Docs"), "alias", json!("docs-home")),
        )
        .await;
    first.assert_status(201);
    let second = srv.post(PAGES, &ann.key, site("Docs")).await;
    assert_eq!(second.assert_status(201)["slug"], "docs-2");
    srv.post(PAGES, &ann.key, with(site("Other"), "slug", json!("docs")))
        .await
        .assert_error(409, "slug_conflict");
    srv.post(
        PAGES,
        &ann.key,
        with(site("Other"), "alias", json!("docs-home")),
    )
    .await
    .assert_error(409, "alias_conflict");
    // An alias may not be another page's public id either.
    let taken_id = first.body["public_id"].as_str().unwrap();
    srv.post(
        PAGES,
        &ann.key,
        with(site("Other"), "alias", json!(taken_id)),
    )
    .await
    .assert_error(409, "alias_conflict");
    assert_eq!(first.body["shortUrl"], format!("{}/s/docs-home", srv.pages));
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

async fn limits_give_413_naming_the_limit(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let srv = db.start_with(&[
        ("QUIRE_MAX_FILES", "3"),
        ("QUIRE_MAX_FILE_BYTES", "100"),
        ("QUIRE_MAX_PAGE_BYTES", "150"),
    ]);
    let file = |p: &str, n: usize| json!({"path": p, "content": "x".repeat(n)});
    for (files, limit) in [
        (
            json!([
                file("index.html", 1),
                file("a", 1),
                file("b", 1),
                file("c", 1)
            ]),
            "files_per_page",
        ),
        (json!([file("index.html", 101)]), "file_size"),
        (json!([file("index.html", 100), file("a", 60)]), "page_size"),
    ] {
        let r = srv
            .post(PAGES, &ann.key, json!({"title": "t", "files": files}))
            .await;
        r.assert_error(413, "payload_too_large");
        assert_eq!(r.body["limit"], limit, "{}", r.text);
    }
    let r = srv
        .post(
            PAGES,
            &ann.key,
            json!({"title": "t", "files": [file("index.html", 100), file("a", 50)]}),
        )
        .await;
    let id = r.assert_status(201)["id"].as_str().unwrap().to_owned();
    let r = srv
        .post(
            &format!("{PAGES}/{id}/files"),
            &ann.key,
            json!({"files": [file("b", 1)]}),
        )
        .await;
    r.assert_error(413, "payload_too_large");
    assert_eq!(r.body["limit"], "page_size");
    // Replacing a file does not count its old size twice.
    srv.post(
        &format!("{PAGES}/{id}/files"),
        &ann.key,
        json!({"files": [file("a", 40), file("b", 10)]}),
    )
    .await
    .assert_status(200);
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
    assert_eq!(res.body["resources"]["links"].as_array().unwrap().len(), 1);
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

async fn racing_publishes_get_one_winner(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for (field, value, loser) in [
        ("slug", "same-slug", "slug_conflict"),
        ("alias", "same-alias", "alias_conflict"),
    ] {
        let mut tasks = Vec::new();
        for i in 0..8 {
            let body = with(site(&format!("Race {field} {i}")), field, json!(value));
            let srv_ref = &srv;
            let key = ann.key.clone();
            tasks.push(async move { srv_ref.post(PAGES, &key, body).await });
        }
        let replies = futures_util::future::join_all(tasks).await;
        let won = replies.iter().filter(|r| r.status == 201).count();
        assert_eq!(
            won,
            1,
            "{field}: {:?}",
            replies.iter().map(|r| &r.text).collect::<Vec<_>>()
        );
        for r in replies.iter().filter(|r| r.status != 201) {
            r.assert_error(409, loser);
        }
    }
    let pages = srv.get(PAGES, &ann.key).await.body["pages"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(pages, 2);
}

async fn storage_that_refuses_writes_leaves_no_trace(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let storage = db.dir.path().join("bundles");
    std::fs::create_dir_all(&storage).unwrap();
    let srv = db.start_with(&[(
        "QUIRE_STORAGE_URL",
        &format!("file://{}", storage.display()),
    )]);
    let id = srv.post(PAGES, &ann.key, site("Before")).await.body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let files_before = srv
        .get(&format!("{PAGES}/{id}/files"), &ann.key)
        .await
        .body
        .clone();
    // The page's directory becomes unusable for new objects: a plain file named like one.
    let page_dir = storage.join("pages").join(&id);
    let blocker = page_dir.join(format!("{:0>64}", "f"));
    std::fs::create_dir_all(&blocker).unwrap();
    std::fs::write(blocker.join("x"), b"occupied").unwrap();
    let newcomer = "<p>new</p>";
    let sha = {
        let mut child = std::process::Command::new("sha256sum")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(newcomer.as_bytes())
            .unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()[..64].to_owned()
    };
    std::fs::create_dir_all(page_dir.join(&sha).join("occupied")).unwrap();
    let r = srv
        .post(
            &format!("{PAGES}/{id}/files"),
            &ann.key,
            json!({"files": [{"path": "new.html", "content": newcomer}]}),
        )
        .await;
    r.assert_error(500, "internal_error");
    assert_eq!(
        srv.get(&format!("{PAGES}/{id}/files"), &ann.key).await.body,
        files_before
    );

    // A whole store that refuses writes: publish fails and leaves no page, link or object.
    std::fs::remove_dir_all(storage.join("pages")).unwrap();
    std::fs::write(storage.join("pages"), b"not a directory").unwrap();
    let r = srv
        .post(
            PAGES,
            &ann.key,
            with(site("Doomed"), "alias", json!("doomed-alias")),
        )
        .await;
    r.assert_error(500, "internal_error");
    let listed = srv.get(PAGES, &ann.key).await;
    assert_eq!(listed.body["pages"].as_array().unwrap().len(), 1);
    std::fs::remove_file(storage.join("pages")).unwrap();
    // The alias was not left taken by a half-made link.
    srv.post(
        PAGES,
        &ann.key,
        with(site("Doomed"), "alias", json!("doomed-alias")),
    )
    .await
    .assert_status(201);
}

async fn an_interrupted_publish_is_never_visible_and_is_swept_at_start(b: Backend) {
    if b != Backend::Postgres {
        return; // The crash state is written with a PostgreSQL client; the fakes cover the logic.
    }
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let storage = db.dir.path().join("bundles");
    let storage_env = format!("file://{}", storage.display());
    let srv = db.start_with(&[("QUIRE_STORAGE_URL", &storage_env)]);
    let kept = srv.post(PAGES, &ann.key, site("Kept")).await.body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    drop(srv);

    // What a crash after "record" and "first object" leaves: a pending row, its manifest and
    // one object, no link.
    let crashed = uuid::Uuid::new_v4();
    let sha = format!("{:0>64}", "ab");
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let crashed_text = crashed.to_string();
    client
        .execute(
            "INSERT INTO pages (id, public_id, account_id, project_id, slug, title, entrypoint, status, state, \
             size_bytes, file_count, created_at, updated_at) VALUES ($1::text::uuid, 'CRASHED001', $2::text::uuid, $3::text::uuid, 'crashed', 'Crashed', \
             'index.html', 'active', 'pending', 3, 1, now() - interval '1 hour', now() - interval '1 hour')",
            &[&crashed_text, &ann.account_id, &ann.project_id],
        )
        .await
        .unwrap();
    client
        .execute(
            "INSERT INTO page_files (page_id, path, size_bytes, content_type, sha256) VALUES ($1::text::uuid, 'index.html', 3, 'text/html', $2)",
            &[&crashed_text, &sha],
        )
        .await
        .unwrap();
    let object = storage.join("pages").join(crashed.to_string()).join(&sha);
    std::fs::create_dir_all(object.parent().unwrap()).unwrap();
    std::fs::write(&object, b"abc").unwrap();

    let srv = db.start_with(&[("QUIRE_STORAGE_URL", &storage_env)]);
    srv.get(&format!("{PAGES}/{crashed}"), &ann.key)
        .await
        .assert_error(404, "not_found");
    let mut gone = false;
    for _ in 0..50 {
        let rows = client
            .query(
                "SELECT 1 FROM pages WHERE id = $1::text::uuid",
                &[&crashed_text],
            )
            .await
            .unwrap();
        if rows.is_empty() && !object.exists() {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        gone,
        "the janitor did not remove the interrupted publish\n{}",
        srv.logs()
    );
    let files = client
        .query(
            "SELECT 1 FROM page_files WHERE page_id = $1::text::uuid",
            &[&crashed_text],
        )
        .await
        .unwrap();
    assert!(files.is_empty());
    srv.get(&format!("{PAGES}/{kept}"), &ann.key)
        .await
        .assert_status(200);
    let listed = srv.get(PAGES, &ann.key).await;
    assert_eq!(listed.body["pages"].as_array().unwrap().len(), 1);
}

/// Object storage that takes connections and never answers; reports the first upload
/// (`PUT`) it receives, which a publish sends only after storing its pending record.
fn black_hole_storage() -> (String, std::sync::mpsc::Receiver<()>) {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut head = [0u8; 8];
            if stream.read(&mut head).is_ok() && head.starts_with(b"PUT ") {
                let _ = tx.send(());
            }
            held.push(stream);
        }
    });
    (endpoint, rx)
}

/// A server killed mid-upload: its pending page keeps the slug only until its lease lapses
/// (a 6 s lease here; a minute by default), across the restart; what its writes left on
/// disk and no listing shows (a temporary `{sha}#1` object, an emptied page folder) goes at
/// the next janitor pass.
async fn a_publish_killed_mid_upload_frees_its_slug_when_its_lease_lapses(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let lease = ("QUIRE_PUBLISH_LEASE_SECS", "6");
    let (endpoint, uploading) = black_hole_storage();
    let stuck = db.start_with(&[
        lease,
        ("QUIRE_STORAGE_URL", "s3://stuck/quire"),
        ("AWS_ENDPOINT_URL", &endpoint),
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
    ]);
    let request = stuck
        .http
        .post(format!("{}{PAGES}", stuck.base))
        .bearer_auth(&ann.key)
        .json(&with(site("Site"), "slug", json!("site")))
        .send();
    let publish = tokio::spawn(request);
    tokio::task::spawn_blocking(move || uploading.recv_timeout(std::time::Duration::from_secs(20)))
        .await
        .unwrap()
        .expect("the publish never reached the upload");
    drop(stuck); // SIGKILL, mid-upload
    assert!(publish.await.unwrap().is_err(), "the client saw the crash");
    let killed = std::time::Instant::now();

    let storage = db.dir.path().join("bundles");
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let temporary = storage
        .join("pages")
        .join(uuid::Uuid::new_v4().to_string())
        .join(format!("{:0>64}#1", "ab"));
    std::fs::create_dir_all(temporary.parent().unwrap()).unwrap();
    std::fs::File::create(&temporary)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    let emptied = storage.join("pages").join(uuid::Uuid::new_v4().to_string());
    std::fs::create_dir_all(&emptied).unwrap();
    let storage_env = format!("file://{}", storage.display());
    let srv = db.start_with(&[lease, ("QUIRE_STORAGE_URL", &storage_env)]);

    let again = || srv.post(PAGES, &ann.key, with(site("Again"), "slug", json!("site")));
    again().await.assert_error(409, "slug_conflict");
    assert!(
        srv.get(PAGES, &ann.key).await.body["pages"]
            .as_array()
            .unwrap()
            .is_empty(),
        "the dead publish shows nowhere"
    );
    let mut published = None;
    while killed.elapsed() < std::time::Duration::from_secs(20) {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        let r = again().await;
        if r.status == 201 {
            published = Some(r);
            break;
        }
        r.assert_error(409, "slug_conflict");
    }
    let published = published.expect("the slug was still held 20 s after the crash");
    assert!(
        killed.elapsed() >= std::time::Duration::from_secs(3),
        "freed before the lease could have lapsed"
    );
    assert_eq!(published.body["slug"], "site");
    let url = srv.page("/ann/site/");
    assert_eq!(published.body["url"], url);
    assert!(!temporary.exists(), "the temporary object was swept");
    assert!(!temporary.parent().unwrap().exists() && !emptied.exists());
    let folders: Vec<_> = std::fs::read_dir(storage.join("pages"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        folders,
        vec![published.body["id"].as_str().unwrap().to_owned()]
    );
}

/// The whole page API over S3-compatible storage, when `QUIRE_TEST_S3_ENDPOINT` names one.
async fn pages_on_s3_storage(b: Backend) {
    let Ok(endpoint) = std::env::var("QUIRE_TEST_S3_ENDPOINT") else {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "CI=true but QUIRE_TEST_S3_ENDPOINT is not set"
        );
        return;
    };
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let bucket = format!("quire-bb-{}", uuid::Uuid::new_v4());
    let created = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .unwrap();
    assert!(created.status().is_success());
    let ann = db.create_account("ann", &[]);
    let storage = format!("s3://{bucket}/quire");
    let srv = db.start_with(&[
        ("QUIRE_STORAGE_URL", storage.as_str()),
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
    ]);
    srv.call("GET", "/readyz", None, None)
        .await
        .assert_status(200);
    let id = srv
        .post(PAGES, &ann.key, site("On S3"))
        .await
        .assert_status(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    srv.post(
        &format!("{PAGES}/{id}/files"),
        &ann.key,
        json!({"files": [{"path": "more.txt", "content": "more"}]}),
    )
    .await
    .assert_status(200);
    let listing = reqwest::Client::new()
        .get(format!(
            "{endpoint}/{bucket}?list-type=2&prefix=quire/pages/{id}/"
        ))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(listing.matches("<Key>").count(), 4, "{listing}");
    srv.delete(&format!("{PAGES}/{id}"), &ann.key, None)
        .await
        .assert_status(204);
    let listing = reqwest::Client::new()
        .get(format!(
            "{endpoint}/{bucket}?list-type=2&prefix=quire/pages/{id}/"
        ))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(listing.matches("<Key>").count(), 0, "{listing}");
}

on_both_backends!(
    pages_on_s3_storage,
    an_interrupted_publish_is_never_visible_and_is_swept_at_start,
    a_publish_killed_mid_upload_frees_its_slug_when_its_lease_lapses,
    publish_get_list_and_files,
    publish_validation,
    conflicts_and_derived_slugs,
    patch_archive_restore_and_errors,
    project_grants_decide_page_access,
    add_files_and_delete,
    limits_give_413_naming_the_limit,
    shared_pages_match_account_and_email,
    project_delete_with_pages,
    racing_publishes_get_one_winner,
    storage_that_refuses_writes_leaves_no_trace,
);
