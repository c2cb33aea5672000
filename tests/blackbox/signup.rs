//! The self-service account flows over HTTP, on both databases: the first-run setup from
//! the link in the server's log, sign-up and verification and reset with their links read
//! from the outbox, no account enumeration (status, body and timing), sign-up closed by
//! default, and the operator's activate and deactivate commands.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::dashboard::{Browser, element};
use crate::harness::{Backend, Reply, Server, TestDb, on_both_backends};

const NEW_PASSWORD: &str = "a sentence long enough";
const PROJECTS: &str = "/api/platform/v1/projects";

/// The setup link the server logged at start-up, if any.
pub(crate) fn setup_link(srv: &Server) -> Option<String> {
    srv.logs().lines().find_map(|line| {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        v["fields"]["setup_link"].as_str().map(str::to_owned)
    })
}

/// Every message in the outbox, decoded from quoted-printable, oldest first.
pub(crate) fn outbox(dir: &Path) -> Vec<String> {
    let mut files: Vec<_> = std::fs::read_dir(dir.join("data/outbox"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "eml"));
    // Mail ids are uuid v7: their order is the order of sending.
    files.sort();
    files
        .iter()
        .map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .replace("=\r\n", "")
                .replace("=3D", "=")
        })
        .collect()
}

/// Waits (the messages leave off the request path) for the `n`th message to `to`.
pub(crate) async fn mail_to(dir: &Path, to: &str, n: usize) -> String {
    for _ in 0..100 {
        let mails: Vec<String> = outbox(dir)
            .into_iter()
            .filter(|m| m.contains(&format!("To: <{to}>")) || m.contains(&format!("To: {to}")))
            .collect();
        if let Some(m) = mails.get(n) {
            return m.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no message #{n} to {to} in the outbox: {:?}", outbox(dir));
}

/// The path and query of the first link to `path` in `mail`.
pub(crate) fn link_in(mail: &str, path: &str) -> String {
    let start = mail
        .find(&format!("{path}?token="))
        .unwrap_or_else(|| panic!("no {path} link in {mail}"));
    mail[start..].split_whitespace().next().unwrap().to_owned()
}

fn token_of(link: &str) -> &str {
    link.rsplit_once("token=").unwrap().1
}

async fn post_setup(browser: &mut Browser<'_>, token: &str, password: &str) -> Reply {
    browser
        .post(
            "/setup",
            &[
                ("token", token),
                ("email", "root@example.com"),
                ("handle", "root"),
                ("password", password),
            ],
        )
        .await
}

async fn timed(
    browser: &mut Browser<'_>,
    path: &str,
    fields: &[(&str, &str)],
) -> (Duration, u16, String) {
    let started = Instant::now();
    let r = browser.post(path, fields).await;
    (started.elapsed(), r.status, r.text)
}

fn message(r: &Reply) -> String {
    element(&r.text, "message").unwrap_or_else(|| panic!("no message in {}", r.text))
}

async fn first_run_from_the_logged_link(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let srv = db.start();
    let mut browser = Browser::new(&srv);
    let home = browser.get("/").await;
    assert_eq!(home.status, 303);
    assert_eq!(home.headers["location"], "/setup");
    let no_link = browser.get("/setup").await;
    assert_eq!(no_link.status, 403);
    assert!(message(&no_link).contains("setup link"), "{}", no_link.text);

    let link = setup_link(&srv).expect("the setup link is in the log");
    assert!(
        link.starts_with(&format!("{}/setup?token=", srv.base)),
        "{link}"
    );
    let path = link.trim_start_matches(&srv.base).to_owned();
    let form = browser.get(&path).await;
    assert_eq!(form.status, 200, "{}", form.text);
    assert_eq!(form.headers["referrer-policy"], "same-origin");
    assert_eq!(form.headers["cache-control"], "no-store");
    let token = token_of(&link).to_owned();
    // A cross-site post is refused before anything is read.
    browser.origin = Some("http://evil.example".into());
    post_setup(&mut browser, &token, NEW_PASSWORD)
        .await
        .assert_error(403, "invalid origin");
    browser.origin = Some(srv.base.clone());
    let r = post_setup(&mut browser, &token, "short").await;
    assert_eq!(r.status, 400);
    assert!(
        element(&r.text, "error").unwrap().contains("15 to 128"),
        "{}",
        r.text
    );
    // The new admin is signed in and lands on the (empty) Pages overview.
    let r = post_setup(&mut browser, &token, NEW_PASSWORD).await;
    assert_eq!(r.status, 303, "{}", r.text);
    assert_eq!(r.headers["location"], "/account/pages");
    let pages = browser.get("/account/pages").await;
    assert_eq!(pages.status, 200, "{}", pages.text);
    assert!(pages.text.contains("Signed in as <strong>root</strong>"));
    assert_eq!(
        element(&pages.text, "empty-title").unwrap(),
        "No active pages in root"
    );
    assert!(pages.text.contains("<code>quire publish ./site</code>"));
    assert_eq!(browser.get("/").await.headers["location"], "/account/pages");
    // The link died with its use; the server is set up.
    let again = post_setup(&mut browser, &token, NEW_PASSWORD).await;
    assert_eq!(again.status, 410, "{}", again.text);
    assert_eq!(browser.get(&path).await.status, 410);
    assert_ne!(browser.get("/").await.headers["location"], "/setup");

    let r = browser
        .post(
            "/login",
            &[("login", "root"), ("password", NEW_PASSWORD), ("next", "/")],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.text);
    drop(srv);
    let restarted = db.start();
    assert_eq!(
        setup_link(&restarted),
        None,
        "no link once an account exists"
    );
}

async fn sign_up_verify_and_reset_with_links_from_the_outbox(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    db.create_account("ann", &[]);
    let srv = db.start_with(&[("QUIRE_SIGNUP", "open")]);
    let mut browser = Browser::new(&srv);
    let login = browser.get("/login").await;
    assert!(element(&login.text, "sign-up").is_some(), "{}", login.text);
    assert_eq!(browser.get("/signup").await.status, 200);

    let sign_up = |email: &'static str, handle: &'static str| {
        [
            ("email", email),
            ("handle", handle),
            ("password", NEW_PASSWORD),
        ]
    };
    let new = browser
        .post("/signup", &sign_up("bob@example.com", "bob"))
        .await;
    let known = browser
        .post("/signup", &sign_up("ann@example.com", "annie"))
        .await;
    assert_eq!((new.status, known.status), (200, 200));
    assert_eq!(new.text, known.text, "the same page for a known address");
    let taken = browser
        .post("/signup", &sign_up("carl@example.com", "ann"))
        .await;
    assert_eq!(taken.status, 409);
    assert!(
        element(&taken.text, "error")
            .unwrap()
            .contains("handle is taken")
    );
    // Three sign-ups an hour per address (the refused one above counted): the fourth waits.
    for handle in ["carl1", "carl2"] {
        let r = browser
            .post("/signup", &sign_up("carl@example.com", handle))
            .await;
        assert_eq!(r.text, new.text);
    }
    let limited = browser
        .post("/signup", &sign_up("carl@example.com", "carl3"))
        .await;
    assert_eq!(limited.status, 429, "{}", limited.text);
    assert_eq!(limited.headers["retry-after"], "3600");
    assert!(
        element(&limited.text, "error")
            .unwrap()
            .contains("try again in an hour")
    );

    let notice = mail_to(db.dir.path(), "ann@example.com", 0).await;
    assert!(notice.contains("already"), "{notice}");
    assert!(!notice.contains("token="), "{notice}");
    let first = mail_to(db.dir.path(), "bob@example.com", 0).await;
    let first_link = link_in(&first, "/account/verify");

    // Signing in before verifying is refused, after the password, with a fresh link.
    let refused = browser
        .post("/login", &[("login", "bob"), ("password", NEW_PASSWORD)])
        .await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    assert!(
        element(&refused.text, "error")
            .unwrap()
            .contains("confirm your email")
    );
    let second = mail_to(db.dir.path(), "bob@example.com", 1).await;
    let link = link_in(&second, "/account/verify");
    assert_eq!(
        browser.get(&first_link).await.status,
        400,
        "the older link died"
    );

    let confirm = browser.get(&link).await;
    assert_eq!(confirm.status, 200, "{}", confirm.text);
    assert_eq!(confirm.headers["referrer-policy"], "same-origin");
    let token = token_of(&link).to_owned();
    // The GET spent nothing; the POST does, once.
    assert_eq!(browser.get(&link).await.status, 200);
    let verified = browser.post("/account/verify", &[("token", &token)]).await;
    assert_eq!(verified.status, 200, "{}", verified.text);
    assert!(
        !verified.headers.contains_key("set-cookie"),
        "verifying signs nobody in"
    );
    assert_eq!(
        browser
            .post("/account/verify", &[("token", &token)])
            .await
            .status,
        400
    );

    let signed_in = browser
        .post(
            "/login",
            &[("login", "bob"), ("password", NEW_PASSWORD), ("next", "/")],
        )
        .await;
    assert_eq!(signed_in.status, 303, "{}", signed_in.text);
    assert_eq!(
        browser.get("/").await.headers["location"],
        "/account/activate"
    );

    // Reset: the same answer for a known and an unknown address.
    let mut other = Browser::new(&srv);
    let known = other
        .post("/account/reset", &[("email", "bob@example.com")])
        .await;
    let unknown = other
        .post("/account/reset", &[("email", "nobody@example.com")])
        .await;
    assert_eq!((known.status, unknown.status), (200, 200));
    assert_eq!(known.text, unknown.text);
    let not_an_address = other.post("/account/reset", &[("email", "bob")]).await;
    assert_eq!(not_an_address.status, 400);
    assert!(
        element(&not_an_address.text, "error")
            .unwrap()
            .contains("not a valid email")
    );
    let reset_mail = mail_to(db.dir.path(), "bob@example.com", 2).await;
    let reset_link = link_in(&reset_mail, "/account/reset/new");
    assert_eq!(other.get(&reset_link).await.status, 200);
    let reset_token = token_of(&reset_link).to_owned();
    let weak = other
        .post(
            "/account/reset/new",
            &[("token", &reset_token), ("password", "short")],
        )
        .await;
    assert_eq!(weak.status, 400);
    let done = other
        .post(
            "/account/reset/new",
            &[
                ("token", &reset_token),
                ("password", "another fine sentence"),
            ],
        )
        .await;
    assert_eq!(done.status, 200, "{}", done.text);
    assert!(
        !done.headers.contains_key("set-cookie"),
        "a reset signs nobody in"
    );
    // The session signed in before the reset is over.
    let after = browser.get("/account/security").await;
    assert_eq!(after.status, 303);
    assert!(
        after.headers["location"]
            .to_str()
            .unwrap()
            .starts_with("/login")
    );
    let changed = mail_to(db.dir.path(), "bob@example.com", 3).await;
    assert!(changed.contains("was just reset"), "{changed}");
    assert_eq!(
        other
            .post(
                "/login",
                &[("login", "bob"), ("password", "another fine sentence")]
            )
            .await
            .status,
        303
    );
    // Nothing in the log carries a link's secret.
    let logs = srv.logs();
    assert!(!logs.contains(&token) && !logs.contains(&reset_token));
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

async fn no_account_enumeration_by_status_body_or_timing(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    for n in 0..3 {
        db.create_account(&format!("known{n}"), &[]);
    }
    let srv = db.start_with(&[("QUIRE_SIGNUP", "open")]);
    let mut browser = Browser::new(&srv);
    // One warm-up, then known and unknown alternately.
    timed(
        &mut browser,
        "/signup",
        &[
            ("email", "warm@example.com"),
            ("handle", "warm"),
            ("password", NEW_PASSWORD),
        ],
    )
    .await;
    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    let mut answers = std::collections::HashSet::new();
    for n in 0..3 {
        let (email, handle) = (format!("known{n}@example.com"), format!("k{n}_new"));
        let (t, status, text) = timed(
            &mut browser,
            "/signup",
            &[
                ("email", &email),
                ("handle", &handle),
                ("password", NEW_PASSWORD),
            ],
        )
        .await;
        known.push(t);
        answers.insert((status, text));
        let (email, handle) = (format!("fresh{n}@example.com"), format!("fresh{n}"));
        let (t, status, text) = timed(
            &mut browser,
            "/signup",
            &[
                ("email", &email),
                ("handle", &handle),
                ("password", NEW_PASSWORD),
            ],
        )
        .await;
        unknown.push(t);
        answers.insert((status, text));
    }
    assert_eq!(answers.len(), 1, "one answer for all: {answers:?}");
    let (k, u) = (median(known), median(unknown));
    let ratio = k.max(u).as_secs_f64() / k.min(u).as_secs_f64();
    eprintln!("sign-up median: known address {k:?}, unknown {u:?}, ratio {ratio:.2}");
    assert!(ratio < 10.0, "not within the same order: {k:?} vs {u:?}");

    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    let mut answers = std::collections::HashSet::new();
    for n in 0..3 {
        let email = format!("known{n}@example.com");
        let (t, status, text) = timed(&mut browser, "/account/reset", &[("email", &email)]).await;
        known.push(t);
        answers.insert((status, text));
        let email = format!("nobody{n}@example.com");
        let (t, status, text) = timed(&mut browser, "/account/reset", &[("email", &email)]).await;
        unknown.push(t);
        answers.insert((status, text));
    }
    assert_eq!(answers.len(), 1, "one answer for all: {answers:?}");
    // Three reset requests an hour per address: the fourth waits, with the same answer
    // until then (the domain tests show an unknown address is limited alike).
    for _ in 0..2 {
        let r = browser
            .post("/account/reset", &[("email", "known0@example.com")])
            .await;
        assert!(answers.contains(&(r.status, r.text)));
    }
    let limited = browser
        .post("/account/reset", &[("email", "known0@example.com")])
        .await;
    assert_eq!(limited.status, 429, "{}", limited.text);
    assert_eq!(limited.headers["retry-after"], "3600");
    let (k, u) = (median(known), median(unknown));
    let ratio = k.max(u).as_secs_f64() / k.min(u).as_secs_f64();
    eprintln!("reset median: known address {k:?}, unknown {u:?}, ratio {ratio:.2}");
    assert!(ratio < 10.0, "not within the same order: {k:?} vs {u:?}");
}

async fn sign_up_is_closed_by_default(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    db.create_account("ann", &[]);
    let srv = db.start();
    let mut browser = Browser::new(&srv);
    assert!(element(&browser.get("/login").await.text, "sign-up").is_none());
    let page = browser.get("/signup").await;
    assert_eq!(page.status, 404);
    assert!(message(&page).contains("closed"));
    let post = browser
        .post(
            "/signup",
            &[
                ("email", "x@example.com"),
                ("handle", "xavier"),
                ("password", NEW_PASSWORD),
            ],
        )
        .await;
    assert_eq!(post.status, 404);
    assert!(outbox(db.dir.path()).is_empty());
}

async fn operators_activate_and_deactivate(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let dormant = db.create_account("dormant", &["--not-activated"]);
    let srv = db.start();
    srv.get(PROJECTS, &dormant.key)
        .await
        .assert_error(403, "not_activated");
    let out = db.admin(&["activate", "dormant"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("dormant is activated"));
    srv.get(PROJECTS, &dormant.key).await.assert_status(200);
    let out = db.admin(&["deactivate", "dormant@example.com"], &[]);
    assert!(out.status.success());
    // The pages origin and the API read activation fresh within the policy cache's second:
    // a fixed wait just past it, since that bound is what is checked.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    srv.get(PROJECTS, &dormant.key)
        .await
        .assert_error(403, "not_activated");
    let out = db.admin(&["activate", "nobody"], &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no account has that email or handle"));
}

on_both_backends!(
    first_run_from_the_logged_link,
    sign_up_verify_and_reset_with_links_from_the_outbox,
    no_account_enumeration_by_status_body_or_timing,
    sign_up_is_closed_by_default,
    operators_activate_and_deactivate,
);
