//! The page API's 500 codes, which only failing infrastructure produces: the real HTTP edge
//! in process, over the in-memory fakes with their failure switches.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::sync::Arc;

use actix_web::{App, test};
use async_trait::async_trait;
use quire_kernel::{AccountId, Email, Handle, InfraError};
use quire_pages::AccountDirectory;
use quire_pages_origin::{self as pages_origin, Request};
use quire_testkit::World;
use quire_testkit::memory::Op;
use quire_wire::message::Header;
use serde_json::{Value, json};

/// A directory that knows no account: the owner of a page has no handle.
#[derive(Debug)]
struct NoHandles;
#[async_trait]
impl AccountDirectory for NoHandles {
    async fn account_by_handle(&self, _: &Handle) -> Result<Option<AccountId>, InfraError> {
        Ok(None)
    }
    async fn accounts_by_handles(
        &self,
        _: &[Handle],
    ) -> Result<std::collections::HashMap<Handle, AccountId>, InfraError> {
        Ok(std::collections::HashMap::new())
    }
    async fn handle_and_email(&self, _: AccountId) -> Result<Option<(Handle, Email)>, InfraError> {
        Ok(None)
    }
}

async fn ann() -> World {
    World::builder().accounts(&["ann"]).build().await
}

fn site() -> Value {
    json!({"title": "Site", "files": [{"path": "index.html", "content": "<p>hi</p>"}]})
}

macro_rules! call {
    ($app:expr, $req:expr) => {{
        let resp = test::call_service(&$app, $req.to_request()).await;
        let status = resp.status().as_u16();
        let body: Value = test::read_body_json(resp).await;
        (status, body)
    }};
}

fn assert_error(got: &(u16, Value), status: u16, code: &str) {
    assert_eq!(got.0, status, "{}", got.1);
    assert_eq!(got.1["error"], code, "{}", got.1);
    assert!(got.1["message"].as_str().is_some_and(|m| !m.is_empty()));
}

#[actix_web::test]
async fn public_id_exhausted_is_a_500_with_its_code() {
    let w = World::builder()
        .accounts(&["ann"])
        .public_ids("SAMESAME01")
        .build()
        .await;
    let app = test::init_service(App::new().configure(quire_http::configure(w.app_state()))).await;
    let auth = ("authorization", format!("Bearer {}", w.key("ann")));
    let first = call!(
        app,
        test::TestRequest::post()
            .uri("/api/page/v1/pages")
            .insert_header(auth.clone())
            .set_json(site())
    );
    assert_eq!(first.0, 201);
    let second = call!(
        app,
        test::TestRequest::post()
            .uri("/api/page/v1/pages")
            .insert_header(auth)
            .set_json(site())
    );
    assert_error(&second, 500, "public_id_exhausted");
}

#[actix_web::test]
async fn failed_cleanups_report_their_code_and_the_page_is_gone() {
    let w = ann().await;
    let (store, bundles) = (w.store.clone(), w.bundles.clone());
    let app = test::init_service(App::new().configure(quire_http::configure(w.app_state()))).await;
    let auth = ("authorization", format!("Bearer {}", w.key("ann")));
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (status, body) = call!(
            app,
            test::TestRequest::post()
                .uri("/api/page/v1/pages")
                .insert_header(auth.clone())
                .set_json(site())
        );
        assert_eq!(status, 201);
        ids.push(body["id"].as_str().unwrap().to_owned());
    }
    bundles.fail(Op::DeletePage);
    let r = call!(
        app,
        test::TestRequest::delete()
            .uri(&format!("/api/page/v1/pages/{}", ids[0]))
            .insert_header(auth.clone())
    );
    assert_error(&r, 500, "storage_cleanup_failed");
    bundles.heal();
    store.fail(Op::DeleteLinkOfPage);
    let r = call!(
        app,
        test::TestRequest::delete()
            .uri(&format!("/api/page/v1/pages/{}", ids[1]))
            .insert_header(auth.clone())
    );
    assert_error(&r, 500, "link_cleanup_failed");
    store.heal();
    for id in &ids {
        let r = call!(
            app,
            test::TestRequest::get()
                .uri(&format!("/api/page/v1/pages/{id}"))
                .insert_header(auth.clone())
        );
        assert_error(&r, 404, "not_found");
    }
}

#[actix_web::test]
async fn an_owner_without_a_handle_is_profile_handle_missing() {
    let w = World::builder()
        .accounts(&["ann"])
        .directory(Arc::new(NoHandles))
        .build()
        .await;
    let store = w.store.clone();
    let app = test::init_service(App::new().configure(quire_http::configure(w.app_state()))).await;
    let auth = ("authorization", format!("Bearer {}", w.key("ann")));
    let r = call!(
        app,
        test::TestRequest::post()
            .uri("/api/page/v1/pages")
            .insert_header(auth)
            .set_json(site())
    );
    assert_error(&r, 500, "profile_handle_missing");
    assert!(store.snapshot().pages.is_empty());
}

/// The pages origin when storage fails: a plain 500 that names no cause, no view counted,
/// and the page serves again once storage is back.
#[actix_web::test]
async fn the_pages_origin_answers_500_when_storage_fails_and_counts_nothing() {
    let w = ann().await;
    let state = w.app_state();
    let (bundles, serving) = (w.bundles.clone(), state.serving.clone());
    let pages_state = pages_origin::PagesState {
        serving: serving.clone(),
        keys: state.keys.clone(),
        databases: state.databases.clone(),
        trusted_proxies: quire_edge::client_ip::TrustedProxies::default(),
    };
    let api = test::init_service(App::new().configure(quire_http::configure(state))).await;
    let auth = ("authorization", format!("Bearer {}", w.key("ann")));
    let mut body = site();
    body["access"] = json!("public");
    body["maxViews"] = json!(1);
    let (status, page) = call!(
        api,
        test::TestRequest::post()
            .uri("/api/page/v1/pages")
            .insert_header(auth.clone())
            .set_json(body)
    );
    assert_eq!(status, 201);
    // The default layout: ann's pages on her own origin.
    let path = format!("/{}/", page["slug"].as_str().unwrap());
    let host = [Header {
        name: "Host",
        value: b"ann.localhost:8081",
    }];
    let get = || Request {
        method: "GET",
        path: &path,
        query: "",
        headers: &host,
        peer: std::net::IpAddr::from([127, 0, 0, 1]),
        body: b"",
    };

    bundles.fail(Op::Get);
    let resp = pages_origin::handle(&pages_state, &get()).await;
    assert_eq!(resp.status(), 500);
    let text = String::from_utf8(resp.body_bytes().to_vec()).unwrap();
    assert!(
        text.contains("went wrong") && !text.contains("fail"),
        "{text}"
    );
    bundles.heal();

    let resp = pages_origin::handle(&pages_state, &get()).await;
    assert_eq!(resp.status(), 200, "the failed request spent no view");
    let resp = pages_origin::handle(&pages_state, &get()).await;
    assert_eq!(resp.status(), 410);
    // The one view served is settled with the next flush, as the flusher does every second.
    assert_eq!(serving.flush_views().await.unwrap(), 1);
    let (_, got) = call!(
        api,
        test::TestRequest::get()
            .uri(&format!(
                "/api/page/v1/pages/{}",
                page["id"].as_str().unwrap()
            ))
            .insert_header(auth)
    );
    assert_eq!(got["viewCount"], 1);
    assert_eq!(
        serving.flush_views().await.unwrap(),
        0,
        "a view is settled once"
    );
}

/// Replacing a page's files when a step fails: new objects not all stored, or the manifest
/// swap refused. Each answers 500, leaves the old files listed and served (the pages origin
/// had them cached) and removes every object it stored; then a clean replace leaves the old
/// objects to the janitor, which removes them once kept long enough, and retries those it
/// could not remove.
#[actix_web::test]
async fn a_failed_replace_leaves_the_old_files_served_and_no_new_object() {
    let w = ann().await;
    let state = w.app_state();
    let (store, bundles) = (w.store.clone(), w.bundles.clone());
    let pages_state = pages_origin::PagesState {
        serving: state.serving.clone(),
        keys: state.keys.clone(),
        databases: state.databases.clone(),
        trusted_proxies: quire_edge::client_ip::TrustedProxies::default(),
    };
    let api = test::init_service(App::new().configure(quire_http::configure(state))).await;
    let auth = ("authorization", format!("Bearer {}", w.key("ann")));
    let body = json!({"title": "Site", "access": "public", "files": [
        {"path": "index.html", "content": "<p>old</p>"},
        {"path": "old.css", "content": "p{}"},
    ]});
    let (status, page) = call!(
        api,
        test::TestRequest::post()
            .uri("/api/page/v1/pages")
            .insert_header(auth.clone())
            .set_json(body)
    );
    assert_eq!(status, 201, "{page}");
    let id = page["id"].as_str().unwrap().to_owned();
    let slug = page["slug"].as_str().unwrap().to_owned();
    let host = [Header {
        name: "Host",
        value: b"ann.localhost:8081",
    }];
    let visit = |file: &str| {
        let path = format!("/{slug}/{file}");
        let pages_state = &pages_state;
        let host = &host;
        async move {
            let resp = pages_origin::handle(
                pages_state,
                &Request {
                    method: "GET",
                    path: &path,
                    query: "",
                    headers: host,
                    peer: std::net::IpAddr::from([127, 0, 0, 1]),
                    body: b"",
                },
            )
            .await;
            (
                resp.status(),
                String::from_utf8_lossy(resp.body_bytes()).into_owned(),
            )
        }
    };
    let listed = || {
        test::TestRequest::get()
            .uri(&format!("/api/page/v1/pages/{id}/files"))
            .insert_header(auth.clone())
    };
    let replace = || {
        test::TestRequest::put()
            .uri(&format!("/api/page/v1/pages/{id}/files"))
            .insert_header(auth.clone())
            .set_json(json!({"files": [
                {"path": "index.html", "content": "<p>new</p>"},
                {"path": "new.js", "content": "let x = 1;"},
            ]}))
    };
    // Served once, so the pages origin holds the page in its caches.
    assert_eq!(visit("").await, (200, "<p>old</p>".to_owned()));
    let (_, old_listing) = call!(api, listed());
    let old_objects = bundles.keys();

    for (step, fail) in [
        (
            "objects",
            (|w: &World| w.bundles.fail_puts_after(1)) as fn(&World),
        ),
        ("manifest", |w: &World| w.store.fail(Op::ReplaceFiles)),
    ] {
        fail(&w);
        let r = call!(api, replace());
        assert_error(&r, 500, "internal_error");
        bundles.heal();
        store.heal();
        let (_, listing) = call!(api, listed());
        assert_eq!(listing, old_listing, "{step}");
        assert_eq!(visit("").await, (200, "<p>old</p>".to_owned()), "{step}");
        assert_eq!(visit("old.css").await.0, 200, "{step}");
        assert_eq!(visit("new.js").await.0, 404, "{step}");
        assert_eq!(
            bundles.keys(),
            old_objects,
            "{step}: no object of the failed write"
        );
    }

    // A clean replace: the manifest names the new objects, and the old ones stay (a backup
    // under way may still copy them) until the janitor finds them kept long enough.
    let (status, done) = call!(api, replace());
    assert_eq!(status, 200, "{done}");
    assert_eq!(
        (done["id"].as_str(), done["fileCount"].as_u64()),
        (Some(id.as_str()), Some(2))
    );
    assert_eq!(visit("").await, (200, "<p>new</p>".to_owned()));
    assert_eq!(
        visit("old.css").await.0,
        404,
        "a file not sent again is gone"
    );
    assert_eq!(visit("new.js").await, (200, "let x = 1;".to_owned()));
    let (_, listing) = call!(api, listed());
    let mut named: Vec<String> = listing["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["sha256"].as_str().unwrap().to_owned())
        .collect();
    named.sort();
    let stored = || -> Vec<String> { bundles.keys().into_iter().map(|(_, sha)| sha).collect() };
    assert_eq!(stored().len(), named.len() + 2, "the old index and old.css");
    let kept = || {
        w.clock
            .advance(std::time::Duration::from_secs(11 * 60).try_into().unwrap());
    };
    kept();
    assert_eq!(w.services.pages.sweep().await.unwrap().replaced_files, 2);
    assert_eq!(stored(), named);

    // The swap committed: old objects the janitor cannot remove yet do not undo it, and it
    // removes them on a later pass.
    bundles.fail(Op::Delete);
    let r = call!(
        api,
        test::TestRequest::put()
            .uri(&format!("/api/page/v1/pages/{id}/files"))
            .insert_header(auth.clone())
            .set_json(json!({"files": [{"path": "index.html", "content": "<p>last</p>"}]}))
    );
    assert_eq!(r.0, 200, "{}", r.1);
    assert_eq!(visit("").await, (200, "<p>last</p>".to_owned()));
    assert_eq!(visit("new.js").await.0, 404);
    kept();
    assert_eq!(w.services.pages.sweep().await.unwrap().replaced_files, 0);
    assert_eq!(stored().len(), 3);
    bundles.heal();
    assert_eq!(w.services.pages.sweep().await.unwrap().replaced_files, 2);
    assert_eq!(stored().len(), 1);
}
