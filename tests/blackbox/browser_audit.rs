//! Every dashboard page in headless Chromium, audited (`audit.rs`: axe-core, 390 px with no
//! sideways scroll, desktop and phone screenshots): from the first-run setup of a new server,
//! through the Pages overview empty and with pages, a page's detail, the Links overview and a
//! link's detail, keys, projects,
//! security, the agent consent (project picker and read-only choice), the Agents page
//! without and with a connected agent (a card per agent on a phone), the admin's pages and
//! a message page, to the signed-out forms and, on a second server, the activation page of
//! an account not yet activated and its activate-first agent consent.

use serde_json::json;

use crate::browser::Driver;
use crate::dashboard::PASSWORD;
use crate::harness::{Backend, TestDb};
use crate::signup::{link_in, mail_to, setup_link};

const PAGES: &str = "/api/page/v1/pages";

fn site(title: &str, slug: &str, policy: &serde_json::Value) -> serde_json::Value {
    let mut body = json!({
        "title": title,
        "slug": slug,
        "files": [
            {"path": "index.html", "content": format!("<!doctype html><title>{title}</title><h1>{title}</h1>")},
            {"path": "about/index.html", "content": "<h1>About</h1>"},
            {"path": "style.css", "content": "h1 { color: teal }"},
        ]
    });
    for (k, v) in policy.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
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
async fn every_dashboard_page_passes_the_audit() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some(db) = TestDb::create(Backend::Sqlite).await else {
        return;
    };
    let srv = db.start_with(&[("QUIRE_SIGNUP", "open")]);
    let base = srv.base.clone();

    // First run: the setup form, then the new admin lands signed in on an empty overview.
    let link = setup_link(&srv).expect("the setup link is in the log");
    browser.go(&link).await;
    browser.audit("setup").await;
    browser.fill("#email", "root@example.com").await;
    browser.fill("#handle", "root").await;
    browser.fill("#password", PASSWORD).await;
    browser.click("button[type=submit]").await;
    assert_eq!(browser.url().await, format!("{base}/account/pages"));
    assert!(
        browser
            .text("#empty")
            .await
            .contains("quire publish ./site")
    );
    assert_eq!(
        browser.text("nav.site-nav a[aria-current=page]").await,
        "Pages"
    );
    assert_eq!(browser.text("#nav-admin").await, "Admin");
    browser.audit("pages-empty").await;

    // A master key from the Keys page, for the API.
    browser.go(&format!("{base}/account/keys")).await;
    browser.fill("#master-name", "audit").await;
    browser.click("#create-master-key").await;
    browser.audit("key-created").await;
    let key = browser.text("#master-key").await;

    let (mut ids, mut urls) = (Vec::new(), Vec::new());
    for (title, slug, policy) in [
        (
            "Quarterly report",
            "quarterly-report",
            json!({"access": "public", "maxViews": 500}),
        ),
        (
            "Design review notes",
            "design-review",
            json!({"access": "password", "password": "correct horse battery"}),
        ),
        (
            "Launch checklist",
            "launch-checklist",
            json!({"expiresAt": "2030-01-31T00:00:00Z"}),
        ),
    ] {
        let r = srv.post(PAGES, &key, site(title, slug, &policy)).await;
        let made = r.assert_status(201);
        ids.push(made["id"].as_str().unwrap().to_owned());
        urls.push(made["url"].as_str().unwrap().to_owned());
    }
    // A few views of the public page, so the overview shows a count against its budget.
    let visitor = crate::harness::client().build().unwrap();
    for _ in 0..3 {
        let seen = visitor.get(&urls[0]).send().await.unwrap();
        assert_eq!(seen.status(), 200);
    }
    // Views are flushed to the database every second.
    crate::harness::eventually("the views counted on the overview", || async {
        browser.go(&format!("{base}/account/pages")).await;
        browser.text("#views-quarterly-report").await == "3 of 500"
    })
    .await;
    assert_eq!(
        browser.text("#open-design-review").await,
        "Design review notes"
    );
    assert!(
        browser
            .find("#page-launch-checklist time[datetime='2030-01-31T00:00:00Z']")
            .await
            .is_some(),
        "the expiry as a <time>"
    );
    // The coordinator takes this desktop screenshot for the README.
    browser.audit("pages").await;

    browser
        .go(&format!("{base}/account/pages/{}", ids[0]))
        .await;
    assert!(browser.find("#short-url").await.is_some(), "a short link");
    assert!(browser.find("svg.qr").await.is_some(), "its QR code");
    browser.audit("page-detail").await;

    // Links: the overview with a budgeted and a password link, then one link's detail.
    let mut link_ids = Vec::new();
    for body in [
        json!({"url": "https://example.com/quarterly-report-2026?utm_source=newsletter&utm_medium=email",
               "title": "Report in the newsletter", "alias": "q3-report", "maxViews": 250}),
        json!({"url": "https://example.org/board/minutes", "access": "password",
               "password": "correct horse battery", "expiresAt": "2030-01-31T00:00:00Z"}),
    ] {
        let r = srv.post("/api/link/v1/links", &key, body).await;
        link_ids.push(r.assert_status(201)["id"].as_str().unwrap().to_owned());
    }
    browser.go(&format!("{base}/account/links")).await;
    assert_eq!(
        browser.text("nav.site-nav a[aria-current=page]").await,
        "Links"
    );
    assert!(browser.text("#links").await.contains("0 of 250"));
    browser.audit("links").await;
    browser
        .go(&format!("{base}/account/links/{}", link_ids[0]))
        .await;
    assert!(browser.find("svg.qr").await.is_some(), "the link's QR code");
    browser.audit("link-detail").await;

    // An agent's sign-in request waiting for consent.
    let started: serde_json::Value = crate::harness::client()
        .build()
        .unwrap()
        .post(format!("{base}/api/agent-login/device_authorization"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("client_name=laptop")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let consent = format!(
        "/authorize-agent?code={}",
        started["user_code"].as_str().unwrap()
    );
    for (path, name) in [
        ("/account/keys", "keys"),
        ("/account/projects", "projects"),
        ("/account/security", "security"),
        ("/authorize-agent", "authorize-agent"),
        (consent.as_str(), "authorize-agent-consent"),
        ("/account/agents", "agents-empty"),
        ("/admin/accounts", "admin-accounts"),
        ("/admin/invitations", "admin-invitations"),
        ("/admin/oauth-clients", "admin-clients"),
    ] {
        browser.go(&format!("{base}{path}")).await;
        browser.audit(name).await;
    }
    // An agent connected through OAuth: approved in the browser, its code redeemed.
    let registered = crate::harness::client()
        .build()
        .unwrap()
        .post(format!("{base}/api/platform/v1/oauth-clients"))
        .bearer_auth(&key)
        .json(&json!({"name": "Audit agent", "client_type": "public", "redirect_uris": ["http://127.0.0.1/callback"]}))
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    let client_id = registered["client"]["client_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (port, _) = crate::browser_oauth::loopback_app().await;
    let (challenge, verifier) = oauth2::PkceCodeChallenge::new_random_sha256();
    browser
        .go(&crate::browser_oauth::authorize_url(
            &srv,
            &client_id,
            port,
            "audit",
            challenge.as_str(),
        ))
        .await;
    assert!(browser.find("#project").await.is_some());
    assert!(browser.find("#read-only").await.is_some());
    browser.audit("oauth-consent").await;
    browser.click("#approve").await;
    let landed = url::Url::parse(&browser.url().await).unwrap();
    let code = landed
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("the code on the redirect");
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let token = crate::harness::client()
        .build()
        .unwrap()
        .post(format!("{base}/api/oauth/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            serde_urlencoded::to_string([
                ("grant_type", "authorization_code"),
                ("client_id", client_id.as_str()),
                ("code", code.as_str()),
                ("redirect_uri", redirect.as_str()),
                ("code_verifier", verifier.secret().as_str()),
            ])
            .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(token.status().as_u16(), 200);
    browser.go(&format!("{base}/account/agents")).await;
    assert!(browser.text("#agents").await.contains("Audit agent"));
    assert_eq!(
        browser.text("nav.site-nav a[aria-current=page]").await,
        "Agents"
    );
    browser.audit("agents").await;
    // On a phone the table is a card per agent: nothing in it scrolls sideways either.
    browser.resize(crate::audit::PHONE_WIDTH, 844).await;
    let table = browser
        .script(
            "const box = document.querySelector('#agents').parentElement; \
             return [box.scrollWidth, box.clientWidth];",
        )
        .await;
    assert!(
        table[0].as_u64().unwrap() <= table[1].as_u64().unwrap(),
        "the agents table scrolls sideways at 390 px: {table}"
    );
    browser.resize(1280, 900).await;

    // A message page: the setup link, once used.
    browser.go(&link).await;
    assert!(browser.find("#message").await.is_some());
    browser.audit("message").await;

    // Signed out: sign-in, sign-up (open on this server), the reset request.
    browser.go(&format!("{base}/account/pages")).await;
    browser.click("#sign-out").await;
    for (path, name) in [
        ("/login", "sign-in"),
        ("/signup", "sign-up"),
        ("/account/reset", "reset-request"),
    ] {
        browser.go(&format!("{base}{path}")).await;
        browser.audit(name).await;
    }
    // The reset link's page, where the new password is chosen.
    browser.fill("#email", "root@example.com").await;
    browser.click("#submit").await;
    let mail = mail_to(db.dir.path(), "root@example.com", 0).await;
    browser
        .go(&format!("{base}{}", link_in(&mail, "/account/reset/new")))
        .await;
    assert!(browser.find("#password").await.is_some());
    browser.audit("reset-new").await;

    // An account not yet activated lands on the activation page.
    let other = TestDb::create(Backend::Sqlite).await.unwrap();
    other.create_account("dormant", &["--not-activated", "--password", PASSWORD]);
    let dormant_srv = other.start();
    browser.go(&format!("{}/login", dormant_srv.base)).await;
    browser.sign_in("dormant").await;
    assert_eq!(
        browser.url().await,
        format!("{}/account/activate", dormant_srv.base)
    );
    browser.audit("activation").await;

    // Such an account sent to the agent consent is told to activate first, with no button.
    let registered = crate::harness::client()
        .build()
        .unwrap()
        .post(format!("{}/api/oauth/register", dormant_srv.base))
        .header("content-type", "application/json")
        .body(json!({"client_name": "Early agent", "redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none"}).to_string())
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    let early = registered["client_id"].as_str().unwrap().to_owned();
    let (challenge, _) = oauth2::PkceCodeChallenge::new_random_sha256();
    browser
        .go(&crate::browser_oauth::authorize_url(
            &dormant_srv,
            &early,
            port,
            "early",
            challenge.as_str(),
        ))
        .await;
    assert!(browser.find("#activate-link").await.is_some());
    assert!(browser.find("#approve").await.is_none());
    browser.audit("oauth-activate-first").await;
}
