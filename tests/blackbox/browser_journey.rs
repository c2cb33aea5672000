//! Headless Chromium, end to end on a fresh server: the first account is set up from the
//! link in the log and invites a number on the admin pages; a second person signs up,
//! confirms the address by the link in the outbox, signs in, activates with the captcha
//! widget and the invited number, creates a master key, publishes with the CLI, sees the
//! page, its views and their chart in the dashboard, archives it there (after which the
//! pages origin answers 404), and turns on two-step sign-in. Every dashboard page on the
//! way is kept as a screenshot.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::browser::Driver;
use crate::cli::User;
use crate::harness::{Backend, TestDb};
use crate::signup::{link_in, mail_to, setup_link};

const ROOT_PASSWORD: &str = "the first account's password";
const BOB_PASSWORD: &str = "bob's own long password";

async fn wait_for_captcha(browser: &Driver) {
    let started = Instant::now();
    loop {
        let value = browser
            .cmd(
                reqwest::Method::POST,
                "/execute/sync",
                Some(json!({
                    "script": "const f = document.querySelector('input[name=altcha]'); return f ? f.value : '';",
                    "args": []
                })),
            )
            .await;
        if value.as_str().is_some_and(|v| !v.is_empty()) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the widget did not solve the challenge:\n{}",
            browser.source().await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
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
async fn from_a_fresh_server_to_a_published_page_and_back() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some(db) = TestDb::create(Backend::Sqlite).await else {
        return;
    };
    // A cheap captcha: the widget's cost at the defaults is measured in browser_activation.
    let srv = db.start_with(&[
        ("QUIRE_SIGNUP", "open"),
        ("QUIRE_CAPTCHA_ITERATIONS", "1"),
        ("QUIRE_CAPTCHA_MAX_COUNTER", "50"),
    ]);
    let base = srv.base.clone();

    // 1. The first account, from the logged link.
    let link = setup_link(&srv).expect("a setup link in the log");
    browser.go(&link).await;
    browser.screenshot("journey-01-setup").await;
    browser.fill("#email", "root@example.com").await;
    browser.fill("#handle", "root").await;
    browser.fill("#password", ROOT_PASSWORD).await;
    browser.click("#submit").await;
    // The new admin is signed in, on the (empty) Pages overview.
    assert_eq!(browser.url().await, format!("{base}/account/pages"));
    assert!(
        browser
            .text("#empty")
            .await
            .contains("quire publish ./site")
    );
    browser.screenshot("journey-02-set-up").await;
    // The admin invites Bob's number from the admin pages (Admin in the navigation), and
    // signs out.
    browser.click("#nav-admin").await;
    assert_eq!(browser.url().await, format!("{base}/admin/accounts"));
    browser.go(&format!("{base}/admin/invitations")).await;
    browser.fill("#numbers", "+44 7400 123456").await;
    browser.click("#invite").await;
    assert!(
        browser
            .text("#notice")
            .await
            .starts_with("1 of 1 number added"),
        "{}",
        browser.source().await
    );
    browser.screenshot("journey-02-invitations").await;
    browser.go(&format!("{base}/admin/accounts")).await;
    browser.screenshot("journey-02-accounts").await;
    browser.go(&format!("{base}/admin/oauth-clients")).await;
    browser.screenshot("journey-02-oauth-clients").await;
    browser.click("#sign-out").await;

    // 2. Bob signs up and confirms his address by the link in the outbox.
    browser.go(&format!("{base}/login")).await;
    browser.click("#sign-up").await;
    browser.fill("#email", "bob@example.com").await;
    browser.fill("#handle", "bob").await;
    browser.fill("#password", BOB_PASSWORD).await;
    browser.screenshot("journey-03-sign-up").await;
    browser.click("#submit").await;
    assert!(
        browser.text("#message").await.contains("sent a message"),
        "{}",
        browser.source().await
    );
    let mail = mail_to(db.dir.path(), "bob@example.com", 0).await;
    browser
        .go(&format!("{base}{}", link_in(&mail, "/account/verify")))
        .await;
    browser.screenshot("journey-04-confirm").await;
    browser.audit("verify-email").await;
    browser.click("#confirm").await;
    assert!(browser.text("#message").await.contains("confirmed"));

    // 3. He signs in, lands on activation, and the widget solves the captcha.
    browser.go(&format!("{base}/login")).await;
    browser.fill("#login", "bob").await;
    browser.fill("#password", BOB_PASSWORD).await;
    browser.click("#submit").await;
    browser.go(&format!("{base}/")).await;
    assert!(browser.url().await.ends_with("/account/activate"));
    browser.fill("#phone", "+44 7400 123456").await;
    wait_for_captcha(&browser).await;
    browser.screenshot("journey-05-activate").await;
    browser.click("#activate").await;
    assert!(browser.text("#activated").await.contains("activated"));

    // 4. A master key from the Keys page, given to the CLI, which publishes.
    browser.go(&format!("{base}/account/keys")).await;
    browser.screenshot("journey-06-keys").await;
    browser.fill("#master-name", "laptop").await;
    browser.click("#create-master-key").await;
    let key = browser.text("#master-key").await;
    assert!(key.starts_with("qk_"), "{key}");
    browser.screenshot("journey-07-key-created").await;
    let user = User::new(&srv);
    let site = user.home.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("index.html"), "<h1>Bob's notes</h1>").unwrap();
    let out = user
        .command(&[
            "--json",
            "publish",
            site.to_str().unwrap(),
            "--title",
            "Bob's notes",
            "--access",
            "public",
        ])
        .env("QUIRE_KEY", &key)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let published: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let url = published["url"].as_str().unwrap().to_owned();
    let slug = published["slug"].as_str().unwrap().to_owned();

    // 5. A visitor opens it; the dashboard shows the page and its view.
    let visitor = crate::harness::client().build().unwrap();
    assert_eq!(visitor.get(&url).send().await.unwrap().status(), 200);
    // Views are flushed to the database every second.
    let views = format!("#views-{slug}");
    crate::harness::eventually("the view counted on the pages list", || async {
        browser.go(&format!("{base}/account/pages")).await;
        browser.text(&views).await == "1"
    })
    .await;
    browser.screenshot("journey-08-pages").await;
    assert_eq!(browser.text(&views).await, "1");
    browser.click(&format!("#open-{slug}")).await;
    assert_eq!(browser.text("#page-views").await, "1");
    let detail = browser.source().await;
    assert!(detail.contains("id=\"views-chart\""), "the chart is drawn");
    assert!(detail.contains("data-total=\"1\""), "{detail}");
    browser.screenshot("journey-09-page").await;
    browser
        .screenshot_of("#views-chart", "journey-09-chart")
        .await;

    // 6. Archived in the dashboard: the pages origin answers 404.
    browser.click("#archive").await;
    assert_eq!(browser.text("#page-status").await, "archived");
    // The pages origin forgets a changed page within its policy cache's second: a fixed
    // wait just past it, since that bound is what is checked.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(visitor.get(&url).send().await.unwrap().status(), 404);
    browser.go(&format!("{base}/account/projects")).await;
    browser.screenshot("journey-10-projects").await;
    // 7. He turns on two-step sign-in and keeps his recovery codes.
    browser.go(&format!("{base}/account/security")).await;
    let secret = quire_accounts::TotpSecret::parse(&browser.text("#totp-secret").await).unwrap();
    browser
        .fill("#code", &secret.code_at(time::OffsetDateTime::now_utc()))
        .await;
    browser.click("#enroll").await;
    assert!(
        browser.find("#enrolled").await.is_some(),
        "{}",
        browser.source().await
    );
    assert_eq!(browser.text("#codes-left").await, "10");
    assert!(browser.find("#recovery-codes").await.is_some());
    browser.screenshot("journey-11-security").await;
}
