//! The dashboard over HTTP, as a cookie-keeping client without JavaScript sees it:
//! password sign-in, TOTP enrollment and the second sign-in step, the consent screen, and
//! every refusal of the agent-login decision endpoint. The client, shared by every test of
//! the dashboard, is in `browser`.

mod browser;

use quire_accounts::TotpSecret;
use serde_json::Value;
use time::OffsetDateTime;

use crate::harness::{Backend, Server, TestDb, on_both_backends};

pub(crate) use browser::{Browser, element, location};

pub(crate) const PASSWORD: &str = "correct horse battery";
pub(crate) const DECISION: &str = "/api/agent-login/decision";

async fn start_device_login(srv: &Server, client: &str) -> (String, String) {
    let r = srv
        .http
        .post(format!("{}/api/agent-login/device_authorization", srv.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string([("client_name", client)]).unwrap())
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    (
        v["device_code"].as_str().unwrap().to_owned(),
        v["user_code"].as_str().unwrap().to_owned(),
    )
}

async fn poll(srv: &Server, device_code: &str) -> Value {
    srv.http
        .post(format!("{}/api/agent-login/token", srv.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            serde_urlencoded::to_string([
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                ("device_code", device_code),
            ])
            .unwrap(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

pub(crate) async fn with_password(b: Backend) -> Option<(TestDb, Server)> {
    let db = TestDb::create(b).await?;
    db.create_account("ann", &["--password", PASSWORD]);
    let srv = db.start();
    Some((db, srv))
}

async fn sign_in_enroll_and_approve(b: Backend) {
    let Some((_db, srv)) = with_password(b).await else {
        return;
    };
    let mut browser = Browser::new(&srv);
    let (device_code, user_code) = start_device_login(&srv, "laptop <b>").await;
    let consent = format!("/authorize-agent?code={user_code}");

    // Signed out, the consent screen sends the person to sign in and back.
    let r = browser.get(&consent).await;
    assert_eq!(
        location(&r),
        format!("/login?next=%2Fauthorize-agent%3Fcode%3D{user_code}")
    );
    let r = browser
        .post(
            "/login",
            &[("login", "ann"), ("password", "wrong password")],
        )
        .await;
    assert_eq!(r.status, 401);
    assert_eq!(
        element(&r.text, "error").as_deref(),
        Some("wrong email, handle or password")
    );
    assert!(browser.cookies.is_empty());

    let r = browser.sign_in("ann@example.com").await;
    assert_eq!(location(&r), "/authorize-agent");
    let cookie = r.headers["set-cookie"].to_str().unwrap();
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain http: {cookie}");
    assert!(
        cookie.starts_with("quire_session="),
        "no prefix on http: {cookie}"
    );

    // Enroll the second factor.
    let r = browser.get("/account/security").await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains("<svg"), "the QR code is inline SVG");
    let secret_text = element(&r.text, "totp-secret").unwrap();
    let uri = element(&r.text, "otpauth-uri").unwrap();
    assert!(uri.starts_with("otpauth://totp/Quire:"), "{uri}");
    let secret = TotpSecret::parse(&secret_text).unwrap();
    let r = browser
        .post("/account/security", &[("code", "000000")])
        .await;
    assert_eq!(r.status, 400);
    assert!(element(&r.text, "error").is_some());
    let now = OffsetDateTime::now_utc();
    let r = browser
        .post("/account/security", &[("code", &secret.code_at(now))])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(element(&r.text, "enrolled").is_some());

    // A new sign-in now stops at the second step, and the decision refuses it.
    let mut second = Browser::new(&srv);
    let r = second.sign_in("ann").await;
    assert_eq!(location(&r), "/login/totp?next=%2Fauthorize-agent");
    let r = second.get(&consent).await;
    assert!(location(&r).starts_with("/login/totp?next="));
    let r = second
        .post(DECISION, &[("code", &user_code), ("decision", "approve")])
        .await;
    r.assert_error(403, "mfa_required");
    let r = second
        .post("/login/totp", &[("code", "000000"), ("next", &consent)])
        .await;
    assert_eq!(r.status, 401);
    // The enrolling code is spent; the next step's code is accepted.
    let next_code = crate::harness::code_after_enrolling(&secret, now);
    let r = second
        .post("/login/totp", &[("code", &next_code), ("next", &consent)])
        .await;
    assert_eq!(location(&r), consent);

    // The consent screen names the client and the master scope.
    let r = second.get(&consent).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        element(&r.text, "client-name").as_deref(),
        Some("laptop &#60;b&#62;")
    );
    assert_eq!(
        element(&r.text, "user-code").as_deref(),
        Some(user_code.as_str())
    );
    assert!(element(&r.text, "requested-at").unwrap().ends_with("UTC"));
    assert!(r.text.contains("master key"));
    assert_eq!(r.headers["x-frame-options"], "DENY");
    assert_eq!(
        poll(&srv, &device_code).await["error"],
        "authorization_pending"
    );

    let r = second
        .post(DECISION, &[("code", &user_code), ("decision", "approve")])
        .await;
    assert_eq!(location(&r), "/authorize-agent");
    let r = second.get("/authorize-agent").await;
    assert!(element(&r.text, "outcome").unwrap().starts_with("Approved"));
    let r = second.get("/authorize-agent").await;
    assert!(
        element(&r.text, "outcome").is_none(),
        "the outcome shows once"
    );

    let token = poll(&srv, &device_code).await;
    assert_eq!(token["scope"], "master");
    let key = token["access_token"].as_str().unwrap();
    srv.get("/api/platform/v1/keys", key)
        .await
        .assert_status(200);

    // Approving again is refused with a clear message, and the key is not issued twice.
    let r = second
        .post(DECISION, &[("code", &user_code), ("decision", "approve")])
        .await;
    location(&r);
    let r = second.get("/authorize-agent").await;
    assert!(element(&r.text, "outcome").unwrap().contains("already"));
    assert_eq!(poll(&srv, &device_code).await["error"], "invalid_grant");

    // Signing out ends the session on the server, not just in the browser.
    let stale = second.cookies.clone();
    let r = second.post("/logout", &[]).await;
    assert_eq!(location(&r), "/login");
    second.cookies = stale;
    let r = second
        .post(DECISION, &[("code", &user_code), ("decision", "deny")])
        .await;
    r.assert_error(401, "not signed in");
}

async fn decision_refusals(b: Backend) {
    let Some((_db, srv)) = with_password(b).await else {
        return;
    };
    let (device_code, user_code) = start_device_login(&srv, "cli").await;
    let mut anonymous = Browser::new(&srv);
    anonymous
        .post(DECISION, &[("code", &user_code), ("decision", "approve")])
        .await
        .assert_error(401, "not signed in");

    let mut browser = Browser::new(&srv);
    location(&browser.sign_in("ann").await);
    let approve = [("code", user_code.as_str()), ("decision", "approve")];

    browser.origin = Some("http://evil.example".into());
    browser
        .post(DECISION, &approve)
        .await
        .assert_error(403, "invalid origin");
    browser.origin = None;
    browser
        .post(DECISION, &approve)
        .await
        .assert_error(403, "invalid origin");
    // A same-origin Referer stands in for a missing Origin.
    let req = browser
        .http
        .post(format!("{}{DECISION}", srv.base))
        .header("referer", format!("{}/authorize-agent", srv.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("code=BCDF-GHJK&decision=maybe");
    browser.send(req).await.assert_error(400, "invalid request");
    browser.origin = Some(srv.base.clone());
    for bad in [
        vec![("code", user_code.as_str())],
        vec![("decision", "approve")],
        vec![("code", "12"), ("decision", "approve")],
    ] {
        browser
            .post(DECISION, &bad)
            .await
            .assert_error(400, "invalid request");
    }
    assert_eq!(
        poll(&srv, &device_code).await["error"],
        "authorization_pending",
        "no refused post changed the request"
    );

    // A well-formed code nobody issued: back to the consent screen with a clear message.
    let r = browser
        .post(DECISION, &[("code", "BCDF-GHJK"), ("decision", "approve")])
        .await;
    location(&r);
    let r = browser.get("/authorize-agent").await;
    assert!(
        element(&r.text, "outcome")
            .unwrap()
            .starts_with("No sign-in request")
    );
    let r = browser.get("/authorize-agent?code=BCDF-GHJK").await;
    assert_eq!(r.status, 404);
    let r = browser.get("/authorize-agent?code=nonsense").await;
    assert_eq!(r.status, 400);

    // Deny: the agent is told so.
    location(
        &browser
            .post(DECISION, &[("code", &user_code), ("decision", "deny")])
            .await,
    );
    assert!(
        element(&browser.get("/authorize-agent").await.text, "outcome")
            .unwrap()
            .starts_with("Denied")
    );
    assert_eq!(poll(&srv, &device_code).await["error"], "access_denied");
    assert_eq!(
        browser
            .get(&format!("/authorize-agent?code={user_code}"))
            .await
            .status,
        409
    );

    // Codes entered are throttled per session: 30 per 15 minutes (5 used above).
    let mut last = 0;
    for _ in 0..26 {
        last = browser.get("/authorize-agent?code=BCDF-GHJK").await.status;
    }
    assert_eq!(last, 429);
    let r = browser
        .post(DECISION, &[("code", &user_code), ("decision", "approve")])
        .await;
    location(&r);
    assert!(
        element(&browser.get("/authorize-agent").await.text, "outcome")
            .unwrap()
            .starts_with("Too many")
    );
    // Another session is not affected.
    let mut other = Browser::new(&srv);
    location(&other.sign_in("ann").await);
    assert_eq!(
        other.get("/authorize-agent?code=BCDF-GHJK").await.status,
        404
    );
}

async fn forms_are_same_origin_and_cookies_secure_on_https(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    db.create_account("ann", &["--password", PASSWORD]);
    let srv = db.start_with(&[("QUIRE_BASE_URL", "https://quire.example")]);
    let mut browser = Browser::new(&srv);
    // Sign-in posts are checked too (no login CSRF).
    let r = browser.sign_in("ann").await;
    r.assert_error(403, "invalid origin");
    browser.origin = Some("https://quire.example".into());
    let r = browser.sign_in("ann").await;
    let cookie = r.headers["set-cookie"].to_str().unwrap();
    assert!(cookie.contains("Secure"), "{cookie}");
    // `__Host-`: only this host, over https, on `/`, can set it; a sibling subdomain's
    // `Domain=` cookie of the plain name is not read.
    assert!(cookie.starts_with("__Host-quire_session="), "{cookie}");
    assert!(
        cookie.contains("Path=/") && !cookie.contains("Domain"),
        "{cookie}"
    );
    assert_eq!(browser.get("/account/security").await.status, 200);
    let token = browser.cookies.remove("__Host-quire_session").unwrap();
    browser
        .cookies
        .insert("quire_session".into(), token.clone());
    assert!(location(&browser.get("/account/security").await).starts_with("/login"));
    browser.cookies.remove("quire_session");
    browser.cookies.insert("__Host-quire_session".into(), token);
    // Signing out removes the cookie of that name.
    let r = browser.post("/logout", &[]).await;
    let removed = r.headers["set-cookie"].to_str().unwrap();
    assert!(removed.starts_with("__Host-quire_session=;"), "{removed}");
    assert!(browser.cookies.is_empty());
    // An open redirect through `next` is refused.
    let r = browser
        .post(
            "/login",
            &[
                ("login", "ann"),
                ("password", PASSWORD),
                ("next", "//evil.example/"),
            ],
        )
        .await;
    assert_eq!(location(&r), "/account/pages");
}

on_both_backends!(
    sign_in_enroll_and_approve,
    decision_refusals,
    forms_are_same_origin_and_cookies_secure_on_https
);
