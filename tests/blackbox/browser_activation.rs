//! Headless Chromium through activation: an account not yet activated signs in, lands on
//! the activation page, the vendored ALTCHA widget solves the server's challenge under the
//! page's CSP (scripts and workers from the dashboard's origin only), and the invited
//! number activates the account; then the dashboard's create-key action shows a master key.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::browser::Driver;
use crate::dashboard::PASSWORD;
use crate::harness::{Backend, TestDb};

#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_widget_solves_the_captcha_and_an_invited_number_activates() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some(db) = TestDb::create(Backend::Sqlite).await else {
        return;
    };
    let dormant = db.create_account("dormant", &["--not-activated", "--password", PASSWORD]);
    let out = db.admin(&["invite", "add", "+447400123456"], &[]);
    assert!(out.status.success());
    // The default cost, as a person's browser would meet it.
    let srv = db.start();

    browser.go(&format!("{}/login", srv.base)).await;
    browser.sign_in("dormant").await;
    browser.go(&format!("{}/", srv.base)).await;
    assert!(
        browser.url().await.ends_with("/account/activate"),
        "{}",
        browser.url().await
    );
    browser.fill("#phone", "+44 7400 123456").await;
    // The widget solves on load and puts its payload in a hidden field of the form.
    let started = Instant::now();
    let solved = loop {
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
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the widget did not solve the challenge:\n{}",
            browser.source().await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    eprintln!("the widget solved the default-cost challenge in {solved:?}");
    browser.screenshot("activation-solved").await;
    browser.click("#activate").await;
    assert!(
        browser.text("#activated").await.contains("activated"),
        "{}",
        browser.source().await
    );
    browser.screenshot("activation-done").await;
    srv.get("/api/platform/v1/projects", &dormant.key)
        .await
        .assert_status(200);
}
