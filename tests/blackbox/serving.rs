//! The pages origin over HTTP: files, redirects, ETags and gzip, every policy, expiry and
//! view budgets (exact under 500 racing requests), the sign-in hand-off through the
//! dashboard, path traversal sent byte for byte, and policy changes reaching a second
//! replica within a second.

use std::io::Read;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::dashboard::{Browser, PASSWORD};
use crate::harness::{Account, Backend, Reply, Server, TestDb, on_both_backends, setup};

const PAGES: &str = "/api/page/v1/pages";

on_both_backends!(
    public_pages_serve_files_with_types_etags_and_gzip,
    short_links_redirect_and_unknown_or_archived_pages_are_404,
    expired_pages_and_spent_budgets_are_410,
    views_are_counted_and_reach_the_api,
    password_pages_take_the_password_and_a_new_one_revokes_it,
    private_and_allow_list_pages_go_through_the_dashboard,
    keys_that_can_read_the_project_are_let_in,
    path_traversal_never_leaves_the_page,
    policy_changes_reach_another_replica_within_a_second,
    behind_tls_each_owner_has_an_https_origin_and_host_cookies,
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
fn visitor() -> reqwest::Client {
    crate::harness::client()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn reply(resp: reqwest::Response) -> Reply {
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

async fn visit_with(srv: &Server, path: &str, headers: &[(&str, &str)]) -> Reply {
    let mut req = visitor().get(url_of(srv, path));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    reply(req.send().await.unwrap()).await
}

fn header<'a>(r: &'a Reply, name: &str) -> &'a str {
    r.headers.get(name).map_or("", |v| v.to_str().unwrap_or(""))
}

/// The `name=value` of a `Set-Cookie` of the reply, and its attributes.
fn set_cookie(r: &Reply, name: &str) -> Option<(String, String)> {
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

async fn password_pages_take_the_password_and_a_new_one_revokes_it(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let body = with(
        with(site("secret"), "access", json!("password")),
        "password",
        json!("open sesame"),
    );
    let page = publish(&srv, &ann.key, body).await;
    let r = visit(&srv, "/ann/secret/docs/").await;
    assert_eq!(r.status, 401);
    assert!(r.text.contains("action=\"/-/unlock\""), "{}", r.text);
    assert!(
        r.text.contains("value=\"docs/\""),
        "returns to the asked path"
    );
    assert!(
        !r.text.contains("id=\"docs\""),
        "no content before the password"
    );
    assert_eq!(header(&r, "cache-control"), "private, no-store");
    assert_eq!(visit(&srv, "/ann/secret/style.css").await.status, 401);

    let post = |password: &str, origin: &str| {
        visitor()
            .post(format!("{}/-/unlock", srv.owner("ann")))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("origin", origin)
            .body(
                serde_urlencoded::to_string([
                    ("handle", "ann"),
                    ("slug", "secret"),
                    ("next", "docs/"),
                    ("password", password),
                ])
                .unwrap(),
            )
            .send()
    };
    // A form posted from an owner's own origin to that origin.
    let post_on = |owner: &str, form: &'static str| {
        let origin = srv.owner(owner);
        visitor()
            .post(format!("{origin}/-/unlock"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("origin", origin)
            .body(form)
            .send()
    };
    // A form for a page that does not exist.
    let r = reply(
        post_on("ann", "handle=ann&slug=nothing&password=x&next=")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 404);
    // From another origin: refused, whatever the password.
    let r = reply(post("open sesame", "http://evil.test").await.unwrap()).await;
    assert_eq!(r.status, 403);
    assert!(set_cookie(&r, "quire_unlock_secret").is_none());
    // Nor from another owner's pages, a sibling origin of the same domain.
    let r = reply(post("open sesame", &srv.owner("bob")).await.unwrap()).await;
    assert_eq!(r.status, 403);
    // A page's own origin cannot post guesses for another owner's page: the host names the
    // owner, never the form.
    let r = reply(
        post_on("bob", "handle=ann&slug=secret&password=open+sesame&next=")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 404, "bob has no page secret");

    let r = reply(post("wrong", &srv.owner("ann")).await.unwrap()).await;
    assert_eq!(r.status, 401);
    assert!(r.text.contains("not right"), "{}", r.text);
    assert!(set_cookie(&r, "quire_unlock_secret").is_none());

    let r = reply(post("open sesame", &srv.owner("ann")).await.unwrap()).await;
    assert_eq!((r.status, header(&r, "location")), (303, "/secret/docs/"));
    let (cookie, attrs) = set_cookie(&r, "quire_unlock_secret").expect("unlock cookie");
    for attr in ["HttpOnly", "SameSite=Lax", "Path=/;", "Max-Age="] {
        assert!(attrs.contains(attr), "{attr} in {attrs}");
    }
    assert!(!attrs.contains("Secure"), "plain http here");
    let r = visit_with(&srv, "/ann/secret/docs/", &[("cookie", &cookie)]).await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains("id=\"docs\""));
    assert_eq!(header(&r, "cache-control"), "private, no-store");
    // A guarded page may be framed and embedded by its own origin only.
    assert_eq!(
        header(&r, "content-security-policy"),
        "frame-ancestors 'self'"
    );
    assert_eq!(header(&r, "x-frame-options"), "SAMEORIGIN");
    assert_eq!(header(&r, "cross-origin-resource-policy"), "same-origin");
    assert_eq!(
        visit_with(&srv, "/ann/secret/style.css", &[("cookie", &cookie)])
            .await
            .status,
        200
    );
    // A forged cookie does nothing.
    let forged = format!("{}x", cookie);
    assert_eq!(
        visit_with(&srv, "/ann/secret/", &[("cookie", &forged)])
            .await
            .status,
        401
    );

    // A new password: the old cookie stops working at once on this replica.
    let id = page["id"].as_str().unwrap();
    srv.patch(
        &format!("{PAGES}/{id}"),
        &ann.key,
        json!({"password": "new words"}),
    )
    .await
    .assert_status(200);
    assert_eq!(
        visit_with(&srv, "/ann/secret/", &[("cookie", &cookie)])
            .await
            .status,
        401
    );

    // Attempts are throttled: 10 per page and client per 15 minutes (two were made above).
    let mut last = 0;
    for _ in 0..8 {
        last = post("guess", &srv.owner("ann"))
            .await
            .unwrap()
            .status()
            .as_u16();
    }
    assert_eq!(last, 401);
    let r = reply(post("new words", &srv.owner("ann")).await.unwrap()).await;
    assert_eq!(r.status, 429);
    let retry: u64 = header(&r, "retry-after").parse().unwrap();
    assert!((1..=900).contains(&retry), "{retry}");
    assert!(set_cookie(&r, "quire_unlock_secret").is_none());
}

/// Signs `login` in on the dashboard (no second factor), as a cookie-keeping client.
async fn signed_in<'a>(srv: &'a Server, login: &str) -> Browser<'a> {
    let mut browser = Browser::new(srv);
    let r = browser.sign_in(login).await;
    assert_eq!(r.status, 303, "{}", r.text);
    browser
}

async fn private_and_allow_list_pages_go_through_the_dashboard(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    db.create_account("bob", &["--password", PASSWORD]);
    db.create_account("cat", &["--password", PASSWORD]);
    let srv = db.start();
    let page = publish(
        &srv,
        &ann.key,
        with(site("mine"), "access", json!("private")),
    )
    .await;
    let code = page["public_id"].as_str().unwrap().to_owned();

    // Unsigned: sent to the dashboard, which sends to sign-in.
    let r = visit(&srv, "/ann/mine/docs/").await;
    assert_eq!(r.status, 302);
    let to_dashboard = header(&r, "location").to_owned();
    assert_eq!(
        to_dashboard,
        format!("{}/visit?page={code}&next=docs%2F", srv.base)
    );
    assert_eq!(header(&r, "cache-control"), "private, no-store");
    let mut anon = Browser::new(&srv);
    let r = anon.get_url(&to_dashboard).await;
    assert_eq!(r.status, 303);
    assert!(
        header(&r, "location").starts_with("/login?next=%2Fvisit"),
        "{:?}",
        r.headers
    );

    // The owner comes back with a pass that becomes the page's cookie.
    let mut ann_browser = signed_in(&srv, "ann").await;
    let cookie = hand_off(&mut ann_browser, &to_dashboard, "/mine/docs/").await;
    let r = visit_with(&srv, "/ann/mine/docs/", &[("cookie", &cookie)]).await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains("id=\"docs\""));
    assert_eq!(header(&r, "cache-control"), "private, no-store");

    // Bob is not the owner: a 403 page on the dashboard, no pass.
    let mut bob = signed_in(&srv, "bob").await;
    let r = bob.navigate(&to_dashboard).await;
    assert_eq!(r.status, 403);
    assert!(r.text.contains("bob@example.com"), "{}", r.text);
    assert!(!r.text.contains("id=\"docs\""));

    // Shared with bob (by handle) and cat (by email): both get in, bob's cookie stops
    // working when he is taken off the list; a stale pass is refused.
    let id = page["id"].as_str().unwrap();
    srv.patch(
        &format!("{PAGES}/{id}"),
        &ann.key,
        json!({"access": "allow_list", "allow": ["bob", "cat@example.com"]}),
    )
    .await
    .assert_status(200);
    let bob_cookie = hand_off(&mut bob, &to_dashboard, "/mine/docs/").await;
    assert_eq!(
        visit_with(&srv, "/ann/mine/", &[("cookie", &bob_cookie)])
            .await
            .status,
        200
    );
    let mut cat = signed_in(&srv, "cat").await;
    let cat_cookie = hand_off(&mut cat, &to_dashboard, "/mine/docs/").await;
    assert_eq!(
        visit_with(&srv, "/ann/mine/", &[("cookie", &cat_cookie)])
            .await
            .status,
        200
    );
    assert_eq!(
        visit_with(&srv, "/ann/mine/", &[("cookie", &cookie)])
            .await
            .status,
        200,
        "the owner stays in"
    );
    srv.patch(
        &format!("{PAGES}/{id}"),
        &ann.key,
        json!({"allow": ["cat@example.com"]}),
    )
    .await
    .assert_status(200);
    let r = visit_with(&srv, "/ann/mine/", &[("cookie", &bob_cookie)]).await;
    assert_eq!(r.status, 403);
    assert!(r.text.contains("bob@example.com"), "{}", r.text);

    // The button's post is the dashboard's own: from another site it is refused.
    let r = srv
        .http
        .post(format!("{}/visit", srv.base))
        .header("origin", srv.owner("eve"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("page={code}&next="))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert!(!r.text().await.unwrap().contains("/-/pass"));
    let r = bob
        .navigate(&format!("{}/visit?page=NoSuchCode&next=", srv.base))
        .await;
    assert_eq!(r.status, 404);
    assert!(r.text.contains("no page"), "{}", r.text);
    let r = reply(
        visitor()
            .get(format!(
                "{}/-/pass?token=forged.token&next=",
                srv.owner("ann")
            ))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 403);
    assert!(r.text.contains("expired"), "{}", r.text);
    // A cookie of one page opens no other page of the owner.
    let other = publish(
        &srv,
        &ann.key,
        with(site("other"), "access", json!("private")),
    )
    .await;
    assert!(other["id"].is_string());
    assert_eq!(
        visit_with(&srv, "/ann/other/", &[("cookie", &cookie)])
            .await
            .status,
        302
    );

    // Signing out on the dashboard closes the pages that session opened.
    assert_eq!(
        visit_with(&srv, "/ann/mine/", &[("cookie", &cookie)])
            .await
            .status,
        200
    );
    let r = ann_browser.post("/logout", &[]).await;
    assert_eq!(r.status, 303, "{}", r.text);
    let r = visit_with(&srv, "/ann/mine/", &[("cookie", &cookie)]).await;
    assert_eq!(r.status, 302);
    assert!(header(&r, "location").starts_with(&format!("{}/visit?page=", srv.base)));
}

/// Follows the dashboard's hand-off as a browser would; returns the page's access cookie.
/// A pass comes only to a top-level navigation: a frame, a fetch or a client that says
/// nothing gets the button instead, and the button's post hands over.
async fn hand_off(browser: &mut Browser<'_>, to_dashboard: &str, landing: &str) -> String {
    for headers in [
        &[][..],
        &[("sec-fetch-dest", "iframe"), ("sec-fetch-mode", "navigate")][..],
        &[("sec-fetch-dest", "empty"), ("sec-fetch-mode", "cors")][..],
    ] {
        let r = browser.get_url_with(to_dashboard, headers).await;
        assert_eq!(r.status, 200, "{headers:?}: {}", r.text);
        assert!(r.text.contains("id=\"open-page\""), "{}", r.text);
        assert!(!r.text.contains("/-/pass"), "no pass without a navigation");
    }
    let r = browser.navigate(to_dashboard).await;
    assert_eq!(r.status, 303, "{}", r.text);
    let pass_url = header(&r, "location").to_owned();
    assert!(pass_url.contains("/-/pass?token="), "{pass_url}");
    assert!(
        pass_url.starts_with("http://ann.localhost:"),
        "the pass lands on the owner's origin: {pass_url}"
    );
    // The button: a same-origin post hands over too.
    let query = to_dashboard.split_once('?').unwrap().1;
    let fields: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap();
    let form: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let posted = browser.post("/visit", &form).await;
    assert_eq!(posted.status, 303, "{}", posted.text);
    assert!(header(&posted, "location").contains("/-/pass?token="));
    let r = browser.get_url(&pass_url).await;
    assert_eq!((r.status, header(&r, "location")), (303, landing));
    assert_eq!(header(&r, "referrer-policy"), "no-referrer");
    let replay = browser.get_url(&pass_url).await;
    assert_eq!(replay.status, 403, "a pass works once");
    let (cookie, attrs) = set_cookie(&r, "quire_access_mine").expect("access cookie");
    assert!(
        attrs.contains("HttpOnly") && attrs.contains("Path=/;"),
        "{attrs}"
    );
    cookie
}

async fn keys_that_can_read_the_project_are_let_in(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob: Account = db.create_account("bob", &[]);
    publish(
        &srv,
        &ann.key,
        with(site("mine"), "access", json!("private")),
    )
    .await;
    let bearer = |key: &str| format!("Bearer {key}");
    let r = visit_with(&srv, "/ann/mine/", &[("authorization", &bearer(&ann.key))]).await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains("id=\"home\""));
    let (app_key, _) = srv.mint(&ann.key, &["page"], None).await;
    let r = visit_with(
        &srv,
        "/ann/mine/docs/",
        &[("authorization", &bearer(&app_key))],
    )
    .await;
    assert_eq!(r.status, 200);
    // Another account's key reads nothing here; a bad key is refused outright.
    let r = visit_with(&srv, "/ann/mine/", &[("authorization", &bearer(&bob.key))]).await;
    assert_eq!(r.status, 302);
    let r = visit_with(&srv, "/ann/mine/", &[("authorization", "Bearer qk_nope")]).await;
    r.assert_error(401, "invalid_api_key");
}

/// Sends one request line exactly as written (no client normalises it).
async fn raw_get(addr: &str, host: &str, target: &str) -> (u16, String) {
    raw(
        addr,
        &format!("GET {target} HTTP/1.1\r\nHost: {host}\r\n"),
        "",
    )
    .await
}

/// Sends `head` (request line and headers, each ending in CRLF), then `body`; reads the
/// whole answer.
async fn raw(addr: &str, head: &str, body: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let length = if body.is_empty() {
        String::new()
    } else {
        format!("Content-Length: {}\r\n", body.len())
    };
    let request = format!("{head}{length}Connection: close\r\n\r\n{body}");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

async fn path_traversal_never_leaves_the_page(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    publish(&srv, &ann.key, site("site")).await;
    let other = json!({
        "title": "Other",
        "slug": "other",
        "access": "password",
        "password": "pw",
        "files": [{"path": "index.html", "content": "TOP-SECRET-PAGE"}],
    });
    publish(&srv, &ann.key, other).await;
    std::fs::write(db.dir.path().join("secret.txt"), "TOP-SECRET-FILE").unwrap();
    let targets = [
        "/ann/site/../other/index.html",
        "/ann/site/..%2fother%2findex.html",
        "/ann/site/%2e%2e/other/index.html",
        "/ann/site/%2E%2E/%2E%2E/secret.txt",
        "/ann/site/.%2e/other/",
        "/ann/site/%2e%2e%2fother%2f",
        "/ann/site/..\\other\\index.html",
        "/ann/site/..%5cother%5cindex.html",
        "/ann/site/%2fetc%2fpasswd",
        "/ann/site//etc/passwd",
        "/ann/site/../../../etc/passwd",
        "/ann/site/%00index.html",
        "/ann/site/index.html%00.png",
        "/ann/%2e%2e/ann/other/",
        "/ann/site/./../other/",
        "//etc/passwd",
        "/etc/passwd",
        "/../../secret.txt",
        "/ann/site/%252e%252e/other/",
        "http://evil.test/ann/other/",
    ];
    let port = srv.pages_addr.rsplit_once(':').unwrap().1;
    let (owner_host, bare_host) = (format!("ann.localhost:{port}"), format!("localhost:{port}"));
    for (host, target) in targets
        .iter()
        .map(|t| (owner_host.as_str(), t.strip_prefix("/ann").unwrap_or(t)))
        .chain(targets.iter().map(|t| (bare_host.as_str(), *t)))
    {
        let (status, text) = raw_get(&srv.pages_addr, host, target).await;
        assert!(
            !text.contains("TOP-SECRET") && !text.contains("root:"),
            "{target} leaked: {text}"
        );
        assert!(
            matches!(status, 400 | 404 | 401),
            "{target}: {status}\n{text}"
        );
    }
    // The path rules refuse before any lookup; a plain file of the page still opens.
    let (status, text) = raw_get(&srv.pages_addr, &owner_host, "/site/style.css").await;
    assert_eq!(status, 200);
    assert!(text.ends_with("body { color: teal }"));
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
    change(json!({"access": "private"}), 302).await;
    change(json!({"access": "password", "password": "pw"}), 401).await;
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
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(visit(&second, "/ann/live/").await.status, 404);
    assert_eq!(visit(&second, &format!("/s/{code}")).await.status, 404);
}

/// The per-owner https layout (`https://{handle}.pages.test`, TLS ended by a proxy in front):
/// the listener routes by `Host`, the pass is a `__Host-` cookie named for the page (Secure,
/// no Domain, `Path=/`), a sibling owner's origin can neither post guesses nor reuse it, and
/// guarded answers refuse other origins' frames.
async fn behind_tls_each_owner_has_an_https_origin_and_host_cookies(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let bob = db.create_account("bob", &[]);
    let srv = db.start_with(&[
        ("QUIRE_PAGES_URL", "https://{handle}.pages.test"),
        ("QUIRE_BASE_URL", "https://quire.test"),
    ]);
    for (who, password) in [(&ann, "open sesame"), (&bob, "bobs secret")] {
        let body = with(
            with(site("secret"), "access", json!("password")),
            "password",
            json!(password),
        );
        let page = publish(&srv, &who.key, body).await;
        assert!(
            page["url"].as_str().unwrap().starts_with("https://"),
            "{page}"
        );
    }
    let addr = srv.pages_addr.clone();
    let get = |host: &'static str, cookie: String| {
        let addr = addr.clone();
        async move {
            let cookie = if cookie.is_empty() {
                cookie
            } else {
                format!("Cookie: {cookie}\r\n")
            };
            raw(
                &addr,
                &format!("GET /secret/ HTTP/1.1\r\nHost: {host}\r\n{cookie}"),
                "",
            )
            .await
        }
    };
    let unlock = |host: &'static str, origin: &'static str, form: &'static str| {
        let addr = addr.clone();
        async move {
            raw(
                &addr,
                &format!(
                    "POST /-/unlock HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\n\
                     Content-Type: application/x-www-form-urlencoded\r\n"
                ),
                form,
            )
            .await
        }
    };
    let (status, locked) = get("ann.pages.test", String::new()).await;
    assert_eq!(status, 401, "{locked}");
    let lower = locked.to_ascii_lowercase();
    assert!(lower.contains("frame-ancestors 'none'"), "{locked}");
    assert!(lower.contains("x-frame-options: deny"), "{locked}");

    // A guess posted from bob's origin to ann's: refused before the password is looked at.
    let (status, _) = unlock(
        "ann.pages.test",
        "https://bob.pages.test",
        "slug=secret&password=open+sesame&next=",
    )
    .await;
    assert_eq!(status, 403);

    let (status, answer) = unlock(
        "ann.pages.test",
        "https://ann.pages.test",
        "slug=secret&password=open+sesame&next=",
    )
    .await;
    assert_eq!(status, 303, "{answer}");
    let set_cookie = answer
        .lines()
        .find(|l| {
            l.to_ascii_lowercase()
                .starts_with("set-cookie: __host-quire_unlock_secret=")
        })
        .unwrap_or_else(|| panic!("no __Host- pass cookie:\n{answer}"))
        .to_owned();
    let attrs = set_cookie.to_ascii_lowercase();
    assert!(
        attrs.contains("; secure") && attrs.contains("; path=/"),
        "{set_cookie}"
    );
    assert!(!attrs.contains("domain="), "host-only: {set_cookie}");
    let pass = set_cookie["set-cookie: ".len()..]
        .split(';')
        .next()
        .unwrap()
        .to_owned();

    let (status, page) = get("ann.pages.test", pass.clone()).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("id=\"home\""), "{page}");
    let lower = page.to_ascii_lowercase();
    assert!(lower.contains("frame-ancestors 'self'"), "{page}");
    assert!(
        lower.contains("cross-origin-resource-policy: same-origin"),
        "{page}"
    );
    // The same cookie on bob's origin (were a browser to send it) opens nothing there.
    let (status, other) = get("bob.pages.test", pass).await;
    assert_eq!(status, 401, "{other}");
}
