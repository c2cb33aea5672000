//! Activation over HTTP and from the command lines: every refusal of
//! `POST /api/account/activate` with its status and body, the five-attempt limit shared by
//! two server processes, the dashboard's form path, the invitation list's admin commands,
//! `quire account`, and `POST /api/account/keys`.

use quire_accounts::TotpSecret;
use quire_testkit::captcha::solve;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::cli::User;
use crate::dashboard::{Browser, PASSWORD, element};
use crate::harness::{Account, Backend, Server, TestDb, on_both_backends};

const ACTIVATE: &str = "/api/account/activate";
const CAPTCHA: &str = "/api/account/captcha";
const INVITED: &str = "+447400123456";
/// Cheap proof of work, so the tests' solver (a debug build) takes milliseconds.
const CHEAP: [(&str, &str); 2] = [
    ("QUIRE_CAPTCHA_ITERATIONS", "1"),
    ("QUIRE_CAPTCHA_MAX_COUNTER", "50"),
];

fn invite(db: &TestDb, args: &[&str]) -> String {
    let mut all = vec!["invite"];
    all.extend_from_slice(args);
    let out = db.admin(&all, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn solved(srv: &Server, key: &str) -> String {
    let r = srv.get(CAPTCHA, key).await;
    r.assert_status(200);
    assert_eq!(r.body["parameters"]["algorithm"], "PBKDF2/SHA-256");
    solve(&r.body, 10_000).unwrap()
}

async fn attempt(srv: &Server, key: &str, phone: &str) -> crate::harness::Reply {
    let captcha = solved(srv, key).await;
    srv.post(ACTIVATE, key, json!({ "captcha": captcha, "phone": phone }))
        .await
}

async fn world(b: Backend) -> Option<(TestDb, Server, Account)> {
    let db = TestDb::create(b).await?;
    let dormant = db.create_account("dormant", &["--not-activated", "--password", PASSWORD]);
    invite(&db, &["add", "07400 123456", "--region", "GB"]);
    let srv = db.start_with(&CHEAP);
    Some((db, srv, dormant))
}

async fn every_refusal_then_activation(b: Backend) {
    let Some((db, srv, dormant)) = world(b).await else {
        return;
    };
    let key = dormant.key.as_str();
    // Before activation: versioned routes refuse the key; the account routes take it.
    srv.get("/api/platform/v1/projects", key)
        .await
        .assert_error(403, "not_activated");
    let status = srv.get("/api/account", key).await;
    assert_eq!(status.assert_status(200)["activated"], false);
    assert_eq!(status.body["handle"], "dormant");
    srv.call("GET", CAPTCHA, None, None)
        .await
        .assert_error(401, "invalid_api_key");

    let r = srv.post(ACTIVATE, key, json!({ "phone": INVITED })).await;
    r.assert_error(400, "invalid_body");
    assert_eq!(r.body["message"], "captcha is required");
    let r = srv
        .post(
            ACTIVATE,
            key,
            json!({ "captcha": "bm90IGpzb24=", "phone": INVITED }),
        )
        .await;
    r.assert_error(400, "captcha_failed");
    let r = attempt(&srv, key, "07400 123456").await;
    r.assert_error(400, "invalid_phone");
    assert!(
        r.body["message"].as_str().unwrap().contains("E.164"),
        "{}",
        r.body
    );
    let r = attempt(&srv, key, "+447400654321").await;
    r.assert_error(400, "not_eligible");

    // The fifth attempt activates (invalid_json is shown on another account below).
    let r = attempt(&srv, key, "+44 7400 123456").await;
    let body = r.assert_status(200);
    assert_eq!(body["activated"], true);
    assert!(body["activatedAt"].is_string());
    srv.get("/api/platform/v1/projects", key)
        .await
        .assert_status(200);
    let listed = invite(&db, &["list"]);
    assert!(
        listed.contains(&format!("{INVITED}\t")) && listed.contains("activated dormant"),
        "{listed}"
    );

    // The sixth in 15 minutes is refused before anything else, with Retry-After.
    let r = attempt(&srv, key, INVITED).await;
    r.assert_error(429, "rate_limited");
    assert_eq!(r.headers["retry-after"], "900");

    // A fresh account (own counter): already activated is 409; an app key, 403.
    let ann = db.create_account("ann", &[]);
    attempt(&srv, &ann.key, INVITED)
        .await
        .assert_error(409, "already_activated");
    let (app_key, _) = srv.mint(&ann.key, &["page"], None).await;
    srv.get(CAPTCHA, &app_key)
        .await
        .assert_error(403, "insufficient_scope");
    // The reused solution is refused: single use.
    let bob = db.create_account("bob", &["--not-activated"]);
    srv.call("POST", ACTIVATE, Some(&bob.key), Some("{not json"))
        .await
        .assert_error(400, "invalid_json");
    let captcha = solved(&srv, &bob.key).await;
    let body = json!({ "captcha": captcha, "phone": "+447400654321" });
    srv.post(ACTIVATE, &bob.key, body.clone())
        .await
        .assert_error(400, "not_eligible");
    let r = srv.post(ACTIVATE, &bob.key, body).await;
    r.assert_error(400, "captcha_failed");
    assert!(
        r.body["message"].as_str().unwrap().contains("already used"),
        "{}",
        r.body
    );
    // Another account's number is not eligible.
    attempt(&srv, &bob.key, INVITED)
        .await
        .assert_error(400, "not_eligible");
    // Nothing of the phone or the captcha is in the log.
    let log = srv.logs();
    assert!(
        !log.contains("7400123456") && !log.contains(&captcha),
        "{log}"
    );
}

async fn five_attempts_in_fifteen_minutes_across_two_servers(b: Backend) {
    let Some((db, first, dormant)) = world(b).await else {
        return;
    };
    let second = db.start_with(&CHEAP);
    let key = dormant.key.as_str();
    for (i, srv) in [&first, &second, &first, &second, &first]
        .into_iter()
        .enumerate()
    {
        attempt(srv, key, "+447400654321")
            .await
            .assert_error(400, "not_eligible");
        assert!(i < 5);
    }
    for srv in [&second, &first] {
        attempt(srv, key, INVITED)
            .await
            .assert_error(429, "rate_limited");
    }
    let status = second.get("/api/account", key).await;
    assert_eq!(status.assert_status(200)["activated"], false);
}

async fn the_dashboard_activates_a_signed_in_account_by_form(b: Backend) {
    let Some((_db, srv, dormant)) = world(b).await else {
        return;
    };
    let mut browser = Browser::new(&srv);
    // An account not yet activated signs in, and starts at the activation page.
    let r = browser.sign_in("dormant").await;
    assert_eq!(r.status, 303, "{}", r.text);
    let r = browser.get("/").await;
    assert_eq!(r.headers["location"], "/account/activate");
    // The Pages overview, where an activated account lands, sends it to activation too.
    let r = browser.get("/account/pages").await;
    assert_eq!(r.headers["location"], "/account/activate");
    let page = browser.get("/account/activate").await;
    assert_eq!(page.status, 200);
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(page.text.contains("<altcha-widget"), "{}", page.text);
    let widget = browser.get("/assets/altcha/altcha.min.js").await;
    assert_eq!(widget.status, 200);
    assert!(
        widget.headers["content-type"]
            .to_str()
            .unwrap()
            .contains("javascript")
    );

    // The session fetches its challenge; a cross-site post is refused.
    let challenge = browser.get(CAPTCHA).await;
    let payload = solve(&challenge.body, 10_000).unwrap();
    browser.origin = Some("https://evil.example".into());
    let r = browser
        .post(ACTIVATE, &[("altcha", &payload), ("phone", INVITED)])
        .await;
    r.assert_error(403, "invalid origin");
    browser.origin = Some(srv.base.clone());
    let r = browser
        .post(
            ACTIVATE,
            &[("altcha", &payload), ("phone", "+447400654321")],
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        element(&r.text, "error")
            .unwrap()
            .contains("invitation list")
    );
    let challenge = browser.get(CAPTCHA).await;
    let payload = solve(&challenge.body, 10_000).unwrap();
    let r = browser
        .post(ACTIVATE, &[("altcha", &payload), ("phone", INVITED)])
        .await;
    assert_eq!(r.headers["location"], "/account/activate", "{}", r.text);
    let page = browser.get("/account/activate").await;
    assert!(element(&page.text, "activated").is_some(), "{}", page.text);
    srv.get("/api/platform/v1/projects", &dormant.key)
        .await
        .assert_status(200);
}

async fn the_invitation_list_commands(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    assert_eq!(
        invite(&db, &["add", "+44 7400 123456"]).trim(),
        "invited +447400123456"
    );
    assert!(invite(&db, &["add", "07400123456", "--region", "gb"]).contains("already invited"));
    let out = db.admin(&["invite", "add", "12345"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("phone"));

    let out = db.admin(&["invite", "add", "07400123456", "--region", "XX"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a region code"));
    let file = db.dir.path().join("numbers.txt");
    std::fs::write(&file, "# staff\n07400 654321\nnot a number\n").unwrap();
    let out = db.admin(
        &["invite", "import", file.to_str().unwrap(), "--region", "GB"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 3"));
    assert!(
        invite(&db, &["list"]).starts_with("1 number(s)"),
        "all or none"
    );
    std::fs::write(
        &file,
        "# staff\n07400 654321\n\n+1 201 555 0123\n+447400123456\n",
    )
    .unwrap();
    let said = invite(&db, &["import", file.to_str().unwrap(), "--region", "GB"]);
    assert!(
        said.contains("3 number(s)") && said.contains("2 newly invited"),
        "{said}"
    );
    let listed = invite(&db, &["list"]);
    assert!(listed.starts_with("3 number(s)"), "{listed}");
    assert!(
        listed.contains("+12015550123\t") && listed.contains("not used"),
        "{listed}"
    );
    assert_eq!(
        invite(&db, &["remove", "+12015550123"]).trim(),
        "removed +12015550123"
    );
    assert!(invite(&db, &["remove", "+12015550123"]).contains("was not on the list"));
}

async fn the_cli_reports_status_and_activates(b: Backend) {
    let Some((_db, srv, dormant)) = world(b).await else {
        return;
    };
    let user = User::new(&srv);
    let with_key = |args: &[&str]| {
        user.command(args)
            .env("QUIRE_KEY", &dormant.key)
            .output()
            .unwrap()
    };
    let out = with_key(&["account", "status"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("not activated yet"));
    let out = with_key(&["account", "activate", "--phone", "+447400654321"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not_eligible"));
    let out = with_key(&[
        "--json",
        "account",
        "activate",
        "--phone",
        "+44 7400 123456",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["activated"], true);
    let out = with_key(&["account", "status"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("dormant: activated since"));
}

async fn the_dashboard_mints_a_master_key_once(b: Backend) {
    let Some((db, srv, _dormant)) = world(b).await else {
        return;
    };
    const KEYS: &str = "/api/account/keys";
    db.create_account("ann", &["--password", PASSWORD]);
    let mut browser = Browser::new(&srv);
    browser
        .post(KEYS, &[("name", "laptop")])
        .await
        .assert_error(401, "not signed in");
    browser.sign_in("ann").await;
    browser.origin = Some("https://evil.example".into());
    browser
        .post(KEYS, &[("name", "laptop")])
        .await
        .assert_error(403, "invalid origin");
    browser.origin = Some(srv.base.clone());
    let r = browser.post(KEYS, &[("name", "laptop")]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.headers["cache-control"], "no-store");
    let key = element(&r.text, "master-key").unwrap();
    assert!(!srv.logs().contains(&key));
    // A master key: it can list keys, which app keys cannot.
    let listed = srv.get("/api/platform/v1/keys", &key).await;
    let keys = listed.assert_status(200)["keys"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        keys.iter()
            .any(|k| k["name"] == "laptop" && k["tier"] == "master"),
        "{keys:?}"
    );

    // Not activated: refused.
    let mut dormant = Browser::new(&srv);
    dormant.sign_in("dormant").await;
    dormant
        .post(KEYS, &[("name", "x")])
        .await
        .assert_error(403, "not_activated");

    // With a second factor enrolled, a session that has not given it is refused.
    let page = browser.get("/account/security").await;
    let secret_text = element(&page.text, "totp-secret").unwrap();
    let secret = TotpSecret::parse(&secret_text).unwrap();
    let code = secret.code_at(OffsetDateTime::now_utc());
    let r = browser
        .post(
            "/account/security",
            &[("secret", &secret_text), ("code", &code)],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let mut second = Browser::new(&srv);
    second.sign_in("ann").await;
    second
        .post(KEYS, &[("name", "x")])
        .await
        .assert_error(403, "mfa_required");
}

on_both_backends!(
    every_refusal_then_activation,
    five_attempts_in_fifteen_minutes_across_two_servers,
    the_dashboard_activates_a_signed_in_account_by_form,
    the_invitation_list_commands,
    the_cli_reports_status_and_activates,
    the_dashboard_mints_a_master_key_once,
);
