//! What a publish refuses: each field's rule with its code, slug and alias conflicts (and
//! the slugs derived to avoid them), and the size limits with a 413 naming the limit.

use serde_json::{Value, json};

use crate::harness::{Backend, TestDb, on_both_backends, setup};
use crate::pages::{PAGES, site, with};

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

on_both_backends!(
    publish_validation,
    conflicts_and_derived_slugs,
    limits_give_413_naming_the_limit,
);
