//! Headless Chromium through the OAuth consent: a person with a second factor signs in from
//! the authorization link, approves, and the browser lands on the client's loopback
//! redirect with `code` and `state` (the consent page's CSP lets that redirect through);
//! the code becomes a token. Then a denial, and a cross-site post of the decision.

use std::sync::{Arc, Mutex};

use oauth2::PkceCodeChallenge;
use quire_accounts::TotpSecret;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::browser::{Driver, foreign_site};
use crate::dashboard::PASSWORD;
use crate::harness::{Backend, Server, TestDb};

/// A loopback HTTP server standing in for a native app's redirect listener: it records the
/// target of every redirect it receives and answers a small page.
pub(crate) async fn loopback_app() -> (u16, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = vec![0u8; 8192];
            let n = sock.read(&mut buf).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            // Only the redirects: the browser also asks for /favicon.ico.
            if let Some(target) = head
                .split(' ')
                .nth(1)
                .filter(|t| t.starts_with("/callback"))
            {
                record.lock().unwrap().push(target.to_owned());
            }
            let body = "<!doctype html><title>app</title><p id=done>Signed in to the app.</p>";
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        }
    });
    (port, seen)
}

pub(crate) fn authorize_url(
    srv: &Server,
    client_id: &str,
    port: u16,
    state: &str,
    challenge: &str,
) -> String {
    let query = serde_urlencoded::to_string([
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", &format!("http://127.0.0.1:{port}/callback")),
        ("scope", "page"),
        ("state", state),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
    ])
    .unwrap();
    format!("{}/oauth/authorize?{query}", srv.base)
}

fn query_of(url: &str) -> std::collections::HashMap<String, String> {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
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
async fn a_person_with_a_second_factor_approves_an_application_in_chromium() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some(db) = TestDb::create(Backend::Sqlite).await else {
        return;
    };
    let ann = db.create_account("ann", &["--password", PASSWORD, "--platform-admin"]);
    let srv = db.start();
    let registered = srv
        .post(
            "/api/platform/v1/oauth-clients",
            &ann.key,
            json!({"name": "Pocket Notes", "client_type": "public", "redirect_uris": ["http://127.0.0.1/callback"]}),
        )
        .await;
    let client_id = registered.assert_status(201)["client"]["client_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (port, seen) = loopback_app().await;

    // Enroll a second factor, then sign out.
    browser.go(&format!("{}/login", srv.base)).await;
    browser.sign_in("ann").await;
    browser.go(&format!("{}/account/security", srv.base)).await;
    let secret = TotpSecret::parse(&browser.text("#totp-secret").await).unwrap();
    let now = OffsetDateTime::now_utc();
    browser.fill("#code", &secret.code_at(now)).await;
    browser.click("#enroll").await;
    browser.click("#sign-out").await;

    // The application sends the person to the authorization link: sign in, second factor,
    // and back to the consent page.
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let link = authorize_url(&srv, &client_id, port, "state-1", challenge.as_str());
    browser.go(&link).await;
    assert!(browser.url().await.contains("/login?next="));
    browser.sign_in("ann").await;
    assert!(browser.url().await.contains("/login/totp"));
    browser
        .fill("#code", &crate::harness::code_after_enrolling(&secret, now))
        .await;
    browser.click("#submit").await;
    assert_eq!(browser.url().await, link, "{}", browser.source().await);
    assert_eq!(browser.text("#client-name").await, "Pocket Notes");
    assert_eq!(browser.text("#client-type").await, "public");
    assert_eq!(browser.text("#redirect-host").await, "127.0.0.1");
    assert_eq!(browser.text("#account").await, "ann");
    // The project picker preselects the home project (here the default one, "ann").
    assert_eq!(
        browser
            .script("return document.querySelector('#project').selectedOptions[0].textContent")
            .await,
        "Default (ann)"
    );
    assert!(
        browser
            .text("#local-warning")
            .await
            .contains("program on this device")
    );
    assert!(
        browser
            .text("#limits")
            .await
            .contains("never mint API keys")
    );
    browser.audit("oauth-consent").await;

    // Approve: the browser follows the redirect to the app's loopback listener.
    browser.click("#approve").await;
    let landed = browser.url().await;
    assert!(
        landed.starts_with(&format!("http://127.0.0.1:{port}/callback?")),
        "{landed}"
    );
    let q = query_of(&landed);
    assert_eq!(q["state"], "state-1");
    assert_eq!(seen.lock().unwrap().len(), 1);

    // The app redeems the code: a public client, PKCE only.
    let token: Value = srv
        .http
        .post(format!("{}/api/oauth/token", srv.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            serde_urlencoded::to_string([
                ("grant_type", "authorization_code"),
                ("client_id", client_id.as_str()),
                ("code", q["code"].as_str()),
                ("redirect_uri", &format!("http://127.0.0.1:{port}/callback")),
                ("code_verifier", verifier.secret().as_str()),
            ])
            .unwrap(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let access = token["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{token}"));
    srv.get("/api/page/v1/pages", access)
        .await
        .assert_status(200);

    // Deny: back to the app with access_denied and the state.
    let (challenge, _) = PkceCodeChallenge::new_random_sha256();
    browser
        .go(&authorize_url(
            &srv,
            &client_id,
            port,
            "state-2",
            challenge.as_str(),
        ))
        .await;
    browser.click("#deny").await;
    let q = query_of(&browser.url().await);
    assert_eq!(
        (q["error"].as_str(), q["state"].as_str()),
        ("access_denied", "state-2")
    );

    // Another site posts the decision of a pending request: the browser sends the session
    // cookie (same site), the Origin check refuses it, and the app hears nothing.
    let (challenge, _) = PkceCodeChallenge::new_random_sha256();
    browser
        .go(&authorize_url(
            &srv,
            &client_id,
            port,
            "state-3",
            challenge.as_str(),
        ))
        .await;
    let page = browser.source().await;
    let at = page.find("name=\"request\" value=\"").unwrap() + 22;
    let request = &page[at..at + page[at..].find('"').unwrap()];
    let before = seen.lock().unwrap().len();
    let evil = foreign_site(format!(
        r#"<!doctype html><form method="post" action="{}/api/oauth/decision">
<input type="hidden" name="request" value="{request}"><input type="hidden" name="decision" value="approve">
<button id="go" type="submit">Win a prize</button></form>"#,
        srv.base
    ))
    .await;
    browser.go(&evil).await;
    browser.click("#go").await;
    let refused = browser.source().await;
    assert!(refused.contains("invalid origin"), "{refused}");
    assert_eq!(seen.lock().unwrap().len(), before);
}
