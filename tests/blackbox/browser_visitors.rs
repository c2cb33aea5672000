//! The pages a visitor sees instead of a page, in headless Chromium, each audited (axe-core,
//! no sideways scroll at 390 px, screenshots): the password form, a private page and an
//! allow-list page to someone not signed in, the dashboard's "not shared with you" after
//! signing in with an account the page does not admit, the pages origin's own refusal once
//! the owner takes an account off the list, a 404 and a 410 (a spent view budget).

use serde_json::{Value, json};

use crate::browser::Driver;
use crate::dashboard::PASSWORD;
use crate::harness::{Backend, Server, TestDb};

const PAGES: &str = "/api/page/v1/pages";

fn site(slug: &str, policy: &Value) -> Value {
    let mut body = json!({
        "title": format!("Field notes {slug}"),
        "slug": slug,
        "files": [{"path": "index.html", "content": "<!doctype html><title>notes</title><h1 id=\"home\">home</h1>"}]
    });
    for (k, v) in policy.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

async fn publish(srv: &Server, key: &str, slug: &str, policy: Value) -> String {
    let r = srv.post(PAGES, key, site(slug, &policy)).await;
    r.assert_status(201)["id"].as_str().unwrap().to_owned()
}

#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[cfg_attr(
    all(no_axe, not(no_chromium)),
    ignore = "needs axe-core: npm install --prefix target/axe axe-core"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visitor_pages_pass_axe_and_fit_a_phone_in_chromium() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some(db) = TestDb::create(Backend::Sqlite).await else {
        return;
    };
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    db.create_account("bob", &["--password", PASSWORD]);
    db.create_account("cat", &["--password", PASSWORD]);
    let srv = db.start();
    publish(
        &srv,
        &ann.key,
        "secret",
        json!({"access": "password", "password": "open sesame"}),
    )
    .await;
    publish(&srv, &ann.key, "mine", json!({"access": "private"})).await;
    let shared = publish(
        &srv,
        &ann.key,
        "shared",
        json!({"access": "allow_list", "allow": ["bob"]}),
    )
    .await;
    publish(
        &srv,
        &ann.key,
        "once",
        json!({"access": "public", "maxViews": 1}),
    )
    .await;

    // The password form, and the same form saying the password was wrong.
    browser.go(&srv.page("/ann/secret/")).await;
    assert_eq!(browser.status().await, 401);
    assert_eq!(browser.text("#gate-title").await, "Field notes secret");
    browser.audit("visitor-password").await;
    browser.fill("#password", "wrong").await;
    browser.click("#unlock").await;
    assert!(browser.text("#error").await.contains("not right"));
    browser.audit("visitor-password-wrong").await;

    // A private page to someone not signed in: which page, who may open it, what to do.
    browser.go(&srv.page("/ann/mine/")).await;
    assert_eq!(browser.status().await, 403);
    assert_eq!(browser.text("#gate-title").await, "Field notes mine");
    assert!(browser.text("#gate-who").await.contains("only its owner"));
    assert!(browser.find("#home").await.is_none());
    browser.audit("visitor-private").await;

    // An allow-list page: shared with named people, and the way in without an account.
    browser.go(&srv.page("/ann/shared/")).await;
    assert_eq!(browser.status().await, 403);
    assert!(
        browser
            .text("#gate-who")
            .await
            .contains("shared with people its owner named")
    );
    assert!(
        browser
            .text("#gate-without")
            .await
            .contains("share it with your email address")
    );
    browser.audit("visitor-allow-list").await;

    // Cat signs in from it and is not on the list: the dashboard names the page and her.
    browser.click("#sign-in").await;
    assert!(
        browser
            .url()
            .await
            .starts_with(&format!("{}/login", srv.base)),
        "{}",
        browser.url().await
    );
    browser.sign_in("cat").await;
    assert_eq!(browser.status().await, 403);
    assert_eq!(browser.text("#denied-title").await, "Field notes shared");
    assert!(
        browser
            .text("#denied-email")
            .await
            .contains("cat@example.com")
    );
    assert!(browser.find("#switch-account").await.is_some());
    browser.audit("visitor-not-shared").await;
    browser.click("#switch-account").await;

    // Bob is on the list and gets in; once taken off, the page itself refuses him.
    browser.go(&srv.page("/ann/shared/")).await;
    browser.click("#sign-in").await;
    browser.sign_in("bob").await;
    assert_eq!(browser.text("#home").await, "home");
    srv.patch(
        &format!("{PAGES}/{shared}"),
        &ann.key,
        json!({"allow": ["cat"]}),
    )
    .await
    .assert_status(200);
    browser.go(&srv.page("/ann/shared/")).await;
    assert_eq!(browser.status().await, 403);
    assert!(
        browser
            .text("#notice")
            .await
            .contains("not shared with you")
    );
    assert_eq!(browser.text("#gate-title").await, "Field notes shared");
    assert!(
        browser
            .text("#denied-email")
            .await
            .contains("bob@example.com")
    );
    browser.audit("visitor-not-shared-any-more").await;

    // No page at the address.
    browser.go(&srv.page("/ann/nothing/")).await;
    assert_eq!(browser.status().await, 404);
    assert!(browser.text("#notice").await.contains("not found"));
    browser.audit("visitor-404").await;

    // A view budget of one: the browser is asked first, its post is the view, and then the
    // page is gone.
    browser.go(&srv.page("/ann/once/")).await;
    assert_eq!(browser.status().await, 200);
    assert!(browser.find("#home").await.is_none(), "nothing spent yet");
    browser.audit("visitor-page-continue").await;
    browser.click("#continue").await;
    assert_eq!(browser.text("#home").await, "home");
    crate::harness::eventually("the spent page answers 410", || async {
        browser.go(&srv.page("/ann/once/")).await;
        browser.status().await == 410
    })
    .await;
    assert!(
        browser
            .text("#notice")
            .await
            .contains("no longer available")
    );
    browser.audit("visitor-410").await;

    links_are_followed_in_chromium(&browser, &srv, &ann.key).await;
}

/// URL links in the browser: the continue page of a budgeted link (whose button spends the
/// view and leads on), the password form of a link, and an allow-list link through the
/// dashboard's sign-in pass, each landing on the link's target (a public page here).
async fn links_are_followed_in_chromium(browser: &Driver, srv: &Server, key: &str) {
    publish(srv, key, "open", json!({"access": "public"})).await;
    let target = srv.page("/ann/open/");
    let shorten = |body: Value| async move {
        srv.post("/api/link/v1/links", key, body)
            .await
            .assert_status(201)
            .clone()
    };
    shorten(json!({"url": target, "alias": "one-look", "maxViews": 1, "title": "One look"})).await;
    shorten(
        json!({"url": target, "alias": "pw-link", "access": "password",
        "password": "open sesame"}),
    )
    .await;
    shorten(json!({"url": target, "alias": "for-bob", "access": "allow_list", "allow": ["bob"]}))
        .await;
    let short = |code: &str| format!("{}/s/{code}", srv.pages);

    // A budgeted link: the continue page spends nothing; its button does, once.
    browser.go(&short("one-look")).await;
    assert_eq!(browser.status().await, 200);
    assert_eq!(browser.text("#gate-title").await, "One look");
    assert!(
        browser
            .text("#target-host")
            .await
            .starts_with("ann.localhost")
    );
    browser.audit("visitor-link-continue").await;
    browser.go(&short("one-look")).await;
    browser.click("#continue").await;
    assert_eq!(browser.url().await, target);
    assert_eq!(browser.text("#home").await, "home");
    crate::harness::eventually("the spent link answers 410", || async {
        browser.go(&short("one-look")).await;
        browser.status().await == 410
    })
    .await;

    // A password link: the form, then the target.
    browser.go(&short("pw-link")).await;
    assert_eq!(browser.status().await, 401);
    browser.audit("visitor-link-password").await;
    browser.fill("#password", "open sesame").await;
    browser.click("#unlock").await;
    assert_eq!(browser.url().await, target);

    // An allow-list link: signed in on the dashboard as bob (still signed in from above,
    // or again), handed over by a pass, then the target.
    browser.go(&short("for-bob")).await;
    assert_eq!(browser.status().await, 403);
    browser.click("#sign-in").await;
    if browser
        .url()
        .await
        .starts_with(&format!("{}/login", srv.base))
    {
        browser.sign_in("bob").await;
    }
    assert_eq!(
        browser.url().await,
        target,
        "bob lands on the link's target"
    );
}
