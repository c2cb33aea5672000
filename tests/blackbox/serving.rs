//! The pages origin over HTTP: files, redirects, ETags and gzip, expiry and view budgets,
//! counted views, and policy changes reaching a second replica within a second. Guarded pages
//! (password, private, allow list) are in `serving_access`, raw bytes and TLS origins in
//! `serving_origins`; both share this file's helpers.

use std::io::Read;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{Backend, Reply, Server, TestDb, on_both_backends, setup};

pub(crate) const PAGES: &str = "/api/page/v1/pages";

on_both_backends!(
    public_pages_serve_files_with_types_etags_and_gzip,
    short_links_redirect_and_unknown_or_archived_pages_are_404,
    expired_pages_and_spent_budgets_are_410,
    views_are_counted_and_reach_the_api,
    policy_changes_reach_another_replica_within_a_second,
);

/// The HTML of the site's home page: long enough to be worth compressing.
fn home_html() -> String {
    format!(
        "<!doctype html><title>Home</title><h1 id=\"home\">home</h1>\n{}",
        "<p>Some text that repeats.</p>\n".repeat(40)
    )
}

pub(crate) fn site(slug: &str) -> Value {
    json!({
        "title": format!("Site {slug}"),
        "slug": slug,
        "access": "public",
        "files": [
            {"path": "index.html", "content": home_html()},
            {"path": "style.css", "content": "body { color: teal }"},
            {"path": "docs/index.html", "content": "<p id=\"docs\">docs</p>"},
            {"path": "404.html", "content": "<p id=\"lost\">lost</p>"},
            {"path": "logo.png", "content": "iVBORw0KGgo=", "encoding": "base64"},
        ]
    })
}

pub(crate) fn with(mut v: Value, field: &str, value: Value) -> Value {
    v[field] = value;
    v
}

pub(crate) async fn publish(srv: &Server, key: &str, body: Value) -> Value {
    srv.post(PAGES, key, body).await.assert_status(201).clone()
}

/// Publishes the two guarded pages the key and token tests knock on: `mine`, private, and
/// `secret`, behind the password `open sesame`.
pub(crate) async fn publish_guarded_pair(srv: &Server, key: &str) {
    publish(srv, key, with(site("mine"), "access", json!("private"))).await;
    let body = with(
        with(site("secret"), "access", json!("password")),
        "password",
        json!("open sesame"),
    );
    publish(srv, key, body).await;
}

/// Where a path written `/{handle}/{slug}/...` lives now: on the owner's origin; short links
/// and anything under `/s/`, `/api` or `/` alone go to the bare pages domain.
fn url_of(srv: &Server, path: &str) -> String {
    if path == "/" || path.starts_with("/s/") || path.starts_with("/api/") {
        format!("{}{path}", srv.pages)
    } else {
        srv.page(path)
    }
}

/// A client that follows no redirects and leaves encodings alone.
pub(crate) fn visitor() -> reqwest::Client {
    crate::harness::client()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

pub(crate) async fn reply(resp: reqwest::Response) -> Reply {
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap_or_default();
    Reply {
        status,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
        headers,
    }
}

pub(crate) async fn visit(srv: &Server, path: &str) -> Reply {
    visit_with(srv, path, &[]).await
}

pub(crate) async fn visit_with(srv: &Server, path: &str, headers: &[(&str, &str)]) -> Reply {
    let mut req = visitor().get(url_of(srv, path));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    reply(req.send().await.unwrap()).await
}

pub(crate) fn header<'a>(r: &'a Reply, name: &str) -> &'a str {
    r.headers.get(name).map_or("", |v| v.to_str().unwrap_or(""))
}

/// The `name=value` of a `Set-Cookie` of the reply, and its attributes.
pub(crate) fn set_cookie(r: &Reply, name: &str) -> Option<(String, String)> {
    r.headers.get_all("set-cookie").iter().find_map(|v| {
        let v = v.to_str().unwrap();
        let (pair, attrs) = v.split_once(';').unwrap_or((v, ""));
        pair.starts_with(&format!("{name}="))
            .then(|| (pair.to_owned(), attrs.to_owned()))
    })
}

async fn view_count(srv: &Server, key: &str, id: &str) -> u64 {
    srv.get(&format!("{PAGES}/{id}"), key)
        .await
        .assert_status(200)["viewCount"]
        .as_u64()
        .unwrap()
}

/// The page's count once it reaches `expected`, or what it is after 5 s: views are
/// written by each replica's flush, every second, and the API's fetch may be a second old.
pub(crate) async fn settled_view_count(srv: &Server, key: &str, id: &str, expected: u64) -> u64 {
    let mut seen = 0;
    for _ in 0..50 {
        seen = view_count(srv, key, id).await;
        if seen == expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    seen
}

async fn public_pages_serve_files_with_types_etags_and_gzip(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let page = publish(&srv, &ann.key, site("site")).await;
    assert_eq!(page["url"], srv.page("/ann/site/"));

    let r = visit(&srv, "/ann/site").await;
    assert_eq!((r.status, header(&r, "location")), (308, "/site/"));
    let r = visit(&srv, "/ann/site?utm=x").await;
    assert_eq!(header(&r, "location"), "/site/?utm=x", "the query is kept");

    let r = visit(&srv, "/ann/site/").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.text, home_html());
    assert_eq!(
        header(&r, "cross-origin-resource-policy"),
        "",
        "a public page may be embedded anywhere"
    );
    assert_eq!(header(&r, "content-type"), "text/html; charset=utf-8");
    assert_eq!(header(&r, "cache-control"), "max-age=0, must-revalidate");
    assert_eq!(header(&r, "x-content-type-options"), "nosniff");
    let etag = header(&r, "etag").to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");

    let r = visit_with(&srv, "/ann/site/", &[("if-none-match", &etag)]).await;
    assert_eq!((r.status, r.text.as_str()), (304, ""));
    assert_eq!(header(&r, "etag"), etag);

    // gzip for text, decoded back to the same bytes; not for images.
    let resp = visitor()
        .get(srv.page("/ann/site/"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-encoding"], "gzip");
    assert_eq!(resp.headers()["vary"], "Accept-Encoding");
    let gz_etag = resp.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(gz_etag, etag, "each encoding has its own tag");
    let compressed = resp.bytes().await.unwrap();
    let mut decoded = String::new();
    flate2::read::GzDecoder::new(&compressed[..])
        .read_to_string(&mut decoded)
        .unwrap();
    assert_eq!(decoded, home_html());
    assert!(compressed.len() * 4 < decoded.len());
    let r = visit_with(&srv, "/ann/site/", &[("if-none-match", &gz_etag)]).await;
    assert_eq!(r.status, 304);

    let r = visit_with(&srv, "/ann/site/logo.png", &[("accept-encoding", "gzip")]).await;
    assert_eq!(r.status, 200);
    assert_eq!(header(&r, "content-type"), "image/png");
    assert_eq!(header(&r, "content-encoding"), "");
    let r = visit(&srv, "/ann/site/style.css").await;
    assert_eq!(header(&r, "content-type"), "text/css; charset=utf-8");
    assert_eq!(r.text, "body { color: teal }");

    // Directories: index.html, and a redirect to the slash.
    let r = visit(&srv, "/ann/site/docs/").await;
    assert!(r.text.contains("id=\"docs\""), "{}", r.text);
    let r = visit(&srv, "/ann/site/docs").await;
    assert_eq!((r.status, header(&r, "location")), (302, "/site/docs/"));

    // A missing file: the page's own 404.html.
    let r = visit(&srv, "/ann/site/missing.html").await;
    assert_eq!(r.status, 404);
    assert!(r.text.contains("id=\"lost\""), "{}", r.text);

    // HEAD: the headers of a GET, no body.
    let resp = visitor().head(srv.page("/ann/site/")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["etag"].to_str().unwrap(), etag);
    assert_eq!(
        resp.headers()["content-length"].to_str().unwrap(),
        home_html().len().to_string()
    );
    assert!(resp.bytes().await.unwrap().is_empty());

    // Only GET and HEAD.
    let resp = visitor().post(srv.page("/ann/site/")).send().await.unwrap();
    assert_eq!(resp.status(), 405);
    assert_eq!(resp.headers()["allow"], "GET, HEAD");

    // The pages origin has no API, and the API origin serves no page.
    assert_eq!(visit(&srv, "/api/page/v1/pages").await.status, 404);
    let r = srv
        .http
        .get(format!("{}/ann/site/", srv.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

async fn short_links_redirect_and_unknown_or_archived_pages_are_404(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let page = publish(&srv, &ann.key, with(site("site"), "alias", json!("launch"))).await;
    let public_id = page["public_id"].as_str().unwrap();
    for code in ["launch", public_id] {
        let r = visit(&srv, &format!("/s/{code}")).await;
        assert_eq!(r.status, 302, "{code}");
        assert_eq!(header(&r, "location"), srv.page("/ann/site/"));
    }
    let r = visit(&srv, "/s/nothing-here").await;
    assert_eq!(r.status, 404);
    assert!(r.text.contains("Page not found"), "{}", r.text);
    assert_eq!(visit(&srv, "/zed/site/").await.status, 404);
    assert_eq!(visit(&srv, "/ann/other/").await.status, 404);
    assert_eq!(visit(&srv, "/").await.status, 404);

    let id = page["id"].as_str().unwrap();
    srv.patch(
        &format!("{PAGES}/{id}"),
        &ann.key,
        json!({"status": "archived"}),
    )
    .await
    .assert_status(200);
    assert_eq!(visit(&srv, "/ann/site/").await.status, 404);
    assert_eq!(visit(&srv, "/s/launch").await.status, 404);
    srv.patch(
        &format!("{PAGES}/{id}"),
        &ann.key,
        json!({"status": "active"}),
    )
    .await
    .assert_status(200);
    assert_eq!(visit(&srv, "/ann/site/").await.status, 200);
    srv.delete(&format!("{PAGES}/{id}"), &ann.key, None)
        .await
        .assert_status(204);
    assert_eq!(visit(&srv, "/ann/site/").await.status, 404);
    assert_eq!(visit(&srv, "/s/launch").await.status, 404);
}

async fn expired_pages_and_spent_budgets_are_410(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let soon = (time::OffsetDateTime::now_utc() + time::Duration::seconds(2))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let page = publish(
        &srv,
        &ann.key,
        with(
            with(site("brief"), "expiresAt", json!(soon)),
            "alias",
            json!("brief"),
        ),
    )
    .await;
    let r = visit(&srv, "/ann/brief/").await;
    assert_eq!(r.status, 200);
    assert_eq!(header(&r, "cache-control"), "private, no-store");
    assert_eq!(visit(&srv, "/s/brief").await.status, 302);
    // Waits out the real expiry, 2 s away on the server's clock (the expiry on the clock is
    // what is checked).
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let r = visit(&srv, "/ann/brief/").await;
    assert_eq!(r.status, 410);
    assert!(r.text.contains("no longer available"), "{}", r.text);
    assert_eq!(visit(&srv, "/ann/brief/style.css").await.status, 410);
    assert_eq!(visit(&srv, "/s/brief").await.status, 410);
    assert!(page["id"].is_string());

    let page = publish(&srv, &ann.key, with(site("twice"), "maxViews", json!(2))).await;
    let first = visit(&srv, "/ann/twice/").await;
    assert_eq!(first.status, 200);
    assert_eq!(header(&first, "cache-control"), "private, no-store");
    let (view_cookie, attrs) = set_cookie(&first, "quire_view_twice").expect("a view cookie");
    assert!(
        attrs.contains("Path=/;") && attrs.contains("HttpOnly"),
        "{attrs}"
    );
    // Assets and 304s are not views.
    assert_eq!(visit(&srv, "/ann/twice/style.css").await.status, 200);
    assert_eq!(visit(&srv, "/ann/twice/docs/").await.status, 200);
    assert_eq!(visit(&srv, "/ann/twice/").await.status, 410);
    assert_eq!(
        settled_view_count(&srv, &ann.key, page["id"].as_str().unwrap(), 2).await,
        2
    );
    // The last viewers' assets still load; nobody else's do.
    let r = visit_with(&srv, "/ann/twice/style.css", &[("cookie", &view_cookie)]).await;
    assert_eq!(r.status, 200);
    assert_eq!(visit(&srv, "/ann/twice/style.css").await.status, 410);
    let r = visit_with(&srv, "/ann/twice/", &[("cookie", &view_cookie)]).await;
    assert_eq!(r.status, 410, "a reload is a new view");
    let code = page["public_id"].as_str().unwrap();
    assert_eq!(visit(&srv, &format!("/s/{code}")).await.status, 410);
}

async fn views_are_counted_and_reach_the_api(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let page = publish(&srv, &ann.key, site("counted")).await;
    let id = page["id"].as_str().unwrap();
    for path in [
        "/ann/counted/",
        "/ann/counted/docs/",
        "/ann/counted/",
        "/ann/counted/",
    ] {
        assert_eq!(visit(&srv, path).await.status, 200);
    }
    // Not views: assets, a 404, a HEAD, a 304.
    visit(&srv, "/ann/counted/style.css").await;
    visit(&srv, "/ann/counted/missing").await;
    visitor()
        .head(srv.page("/ann/counted/"))
        .send()
        .await
        .unwrap();
    let etag = header(&visit(&srv, "/ann/counted/docs/").await, "etag").to_owned();
    assert_eq!(
        visit_with(&srv, "/ann/counted/docs/", &[("if-none-match", &etag)])
            .await
            .status,
        304
    );
    // Counted in memory and flushed every second.
    let mut seen = 0;
    for _ in 0..50 {
        seen = view_count(&srv, &ann.key, id).await;
        if seen == 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(seen, 5);
}

async fn policy_changes_reach_another_replica_within_a_second(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let first = db.start();
    let second = db.start();
    let page = publish(&first, &ann.key, site("live")).await;
    let id = page["id"].as_str().unwrap().to_owned();
    let path = format!("{PAGES}/{id}");
    let code = page["public_id"].as_str().unwrap().to_owned();

    // Each change is made through the first replica; one second later the second one,
    // whose cache was warm, enforces it.
    let change = |body: Value, status: u16| {
        let (first, second, path, key) = (&first, &second, &path, &ann.key);
        async move {
            visit(second, "/ann/live/").await;
            first
                .patch(path, key, body.clone())
                .await
                .assert_status(200);
            tokio::time::sleep(Duration::from_secs(1)).await;
            assert_eq!(
                visit(second, "/ann/live/").await.status,
                status,
                "after {body}"
            );
        }
    };
    change(json!({"access": "private"}), 403).await;
    change(json!({"access": "password", "password": "pw-changed"}), 401).await;
    change(json!({"access": "public"}), 200).await;
    // A budget already spent: wait until the views so far are counted, then cap them.
    let mut seen = 0;
    for _ in 0..50 {
        seen = view_count(&first, &ann.key, &id).await;
        if seen >= 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    change(json!({"maxViews": seen}), 410).await;
    let in_a_moment = (time::OffsetDateTime::now_utc() + time::Duration::milliseconds(300))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    change(json!({"maxViews": null, "expiresAt": in_a_moment}), 410).await;
    change(json!({"expiresAt": null, "status": "archived"}), 404).await;
    change(json!({"status": "active"}), 200).await;
    assert_eq!(visit(&second, &format!("/s/{code}")).await.status, 302);
    first.delete(&path, &ann.key, None).await.assert_status(204);
    // The second's bound, as for each change above.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(visit(&second, "/ann/live/").await.status, 404);
    assert_eq!(visit(&second, &format!("/s/{code}")).await.status, 404);
}
