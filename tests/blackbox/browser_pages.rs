//! Published pages in headless Chromium, with the pages origin on another host
//! (127.0.0.2) than the dashboard (127.0.0.1), as in production: a password page (form,
//! wrong then right password, reload keeps access, a new password revokes it), a private
//! page whose owner signs in on the dashboard with a second factor and comes back, an
//! allow-list page opened by a listed and an unlisted account, and an expired page.

use std::time::Duration;

use quire_accounts::TotpSecret;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::browser::Driver;
use crate::dashboard::PASSWORD;
use crate::harness::{Account, Backend, Server, TestDb};

const PAGES: &str = "/api/page/v1/pages";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.2:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server whose pages origin is `http://127.0.0.2:{port}`; ann, bob and cat have passwords.
async fn two_hosts() -> Option<(TestDb, Server, Account)> {
    let db = TestDb::create(Backend::Sqlite).await?;
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    db.create_account("bob", &["--password", PASSWORD]);
    db.create_account("cat", &["--password", PASSWORD]);
    let port = free_port();
    let listen = format!("127.0.0.2:{port}");
    let url = format!("http://127.0.0.2:{port}");
    let srv = db.start_with(&[
        ("QUIRE_PAGES_LISTEN", listen.as_str()),
        ("QUIRE_PAGES_URL", url.as_str()),
    ]);
    Some((db, srv, ann))
}

fn site(slug: &str, policy: &Value) -> Value {
    let mut body = json!({
        "title": format!("Page {slug}"),
        "slug": slug,
        "files": [
            {"path": "index.html", "content": "<!doctype html><link rel=\"stylesheet\" href=\"style.css\"><h1 id=\"home\">home</h1>"},
            {"path": "style.css", "content": "h1 { color: rgb(0, 128, 128) }"},
        ]
    });
    for (k, v) in policy.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

async fn publish(srv: &Server, key: &str, body: Value) -> String {
    let r = srv.post(PAGES, key, body).await;
    let p = r.assert_status(201);
    assert!(p["url"].as_str().unwrap().starts_with("http://127.0.0.2:"));
    p["id"].as_str().unwrap().to_owned()
}

impl Driver {
    /// The HTTP status of the document on screen (Navigation Timing).
    async fn status(&self) -> u64 {
        self.cmd(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({
                "script": "return performance.getEntriesByType('navigation')[0].responseStatus",
                "args": []
            })),
        )
        .await
        .as_u64()
        .unwrap_or(0)
    }

    /// The computed colour of the heading: the stylesheet (an asset) loaded too.
    async fn heading_colour(&self) -> String {
        self.cmd(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({
                "script": "return getComputedStyle(document.getElementById('home')).color",
                "args": []
            })),
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }

    /// Deletes the cookies of the origin on screen.
    async fn forget_cookies(&self) {
        self.cmd(reqwest::Method::DELETE, "/cookie", None).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_page_in_chromium() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some((_db, srv, ann)) = two_hosts().await else {
        return;
    };
    let id = publish(
        &srv,
        &ann.key,
        site(
            "secret",
            &json!({"access": "password", "password": "open sesame"}),
        ),
    )
    .await;
    let url = format!("{}/ann/secret/", srv.pages);
    browser.go(&url).await;
    assert_eq!(browser.status().await, 401);
    assert!(browser.find("#home").await.is_none());
    browser.screenshot("page-password-form").await;
    browser.fill("#password", "wrong").await;
    browser.click("#unlock").await;
    assert!(browser.text("#error").await.contains("not right"));
    browser.fill("#password", "open sesame").await;
    browser.click("#unlock").await;
    assert_eq!(browser.url().await, url);
    assert_eq!(browser.text("#home").await, "home");
    assert_eq!(browser.heading_colour().await, "rgb(0, 128, 128)");

    // A reload keeps access.
    browser.go(&url).await;
    assert_eq!(browser.status().await, 200);
    assert_eq!(browser.text("#home").await, "home");

    // The owner sets a new password: the visitor is asked again.
    srv.patch(
        &format!("{PAGES}/{id}"),
        &ann.key,
        json!({"password": "new words"}),
    )
    .await
    .assert_status(200);
    browser.go(&url).await;
    assert_eq!(browser.status().await, 401);
    assert!(browser.find("#password").await.is_some());
    assert!(browser.find("#home").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_and_allow_list_pages_in_chromium() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some((_db, srv, ann)) = two_hosts().await else {
        return;
    };
    publish(&srv, &ann.key, site("mine", &json!({"access": "private"}))).await;
    publish(
        &srv,
        &ann.key,
        site("shared", &json!({"access": "allow_list", "allow": ["bob"]})),
    )
    .await;

    // The owner enrolls a second factor, then signs out.
    browser.go(&format!("{}/login", srv.base)).await;
    browser.sign_in("ann").await;
    let secret = TotpSecret::parse(&browser.text("#totp-secret").await).unwrap();
    let now = OffsetDateTime::now_utc();
    browser.fill("#code", &secret.code_at(now)).await;
    browser.click("#enroll").await;
    browser.click("#sign-out").await;

    // The private page sends her to the dashboard: password, code, and back to the page.
    let mine = format!("{}/ann/mine/", srv.pages);
    browser.go(&mine).await;
    assert!(
        browser
            .url()
            .await
            .starts_with(&format!("{}/login?next=", srv.base)),
        "{}",
        browser.url().await
    );
    browser.sign_in("ann").await;
    assert!(browser.url().await.contains("/login/totp"));
    browser
        .fill("#code", &secret.code_at(now + time::Duration::seconds(30)))
        .await;
    browser.click("#submit").await;
    assert_eq!(browser.url().await, mine);
    assert_eq!(browser.text("#home").await, "home");
    assert_eq!(browser.heading_colour().await, "rgb(0, 128, 128)");
    browser.screenshot("page-private-after-sign-in").await;

    // Bob is on the allow list of the other page; cat is not. Ann's sign-out also closes
    // her private page in this browser.
    let shared = format!("{}/ann/shared/", srv.pages);
    browser.go(&format!("{}/account/security", srv.base)).await;
    browser.click("#sign-out").await;
    browser.go(&shared).await;
    browser.sign_in("bob").await;
    assert_eq!(browser.url().await, shared);
    assert_eq!(browser.text("#home").await, "home");
    // ...and bob cannot open ann's private page.
    browser.go(&mine).await;
    assert_eq!(browser.status().await, 403);
    assert!(browser.find("#home").await.is_none());

    browser.go(&shared).await;
    browser.forget_cookies().await;
    browser.go(&format!("{}/account/security", srv.base)).await;
    browser.click("#sign-out").await;
    browser.go(&shared).await;
    browser.sign_in("cat").await;
    assert_eq!(
        browser.status().await,
        403,
        "{}: {}",
        browser.url().await,
        browser.source().await
    );
    assert!(browser.text("#denied").await.contains("not shared"));
    assert!(
        browser
            .text("#denied-email")
            .await
            .contains("cat@example.com")
    );
    assert!(browser.find("#home").await.is_none());
    browser.screenshot("page-allow-list-refused").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_page_in_chromium_is_gone() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some((_db, srv, ann)) = two_hosts().await else {
        return;
    };
    let soon = (OffsetDateTime::now_utc() + time::Duration::seconds(2))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    publish(
        &srv,
        &ann.key,
        site("brief", &json!({"access": "public", "expiresAt": soon})),
    )
    .await;
    let url = format!("{}/ann/brief/", srv.pages);
    browser.go(&url).await;
    assert_eq!(browser.text("#home").await, "home");
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    browser.go(&url).await;
    assert_eq!(browser.status().await, 410);
    assert!(
        browser
            .text("#notice")
            .await
            .contains("no longer available")
    );
    browser.screenshot("page-expired").await;
}
