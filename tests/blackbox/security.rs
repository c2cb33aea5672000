//! The security page over HTTP on both databases: enrollment with the secret kept on the
//! server and sealed at rest under the key file, recovery codes shown once and spent once,
//! turning the factor off with a code, changing the password (other sessions end, a notice
//! is mailed), signing out other sessions, and cross-site posts refused.

use quire_accounts::{AccountStore, SealingKey, TotpSecret};
use time::OffsetDateTime;

use crate::dashboard::{Browser, PASSWORD, element, location};
use crate::harness::{Backend, TestDb, on_both_backends};
use crate::signup::mail_to;

const NEW_PASSWORD: &str = "a different long passphrase";

pub(crate) fn recovery_codes(html: &str) -> Vec<String> {
    let Some(start) = html.find("id=\"recovery-codes\"") else {
        return Vec::new();
    };
    let end = html[start..].find("</ol>").unwrap() + start;
    html[start..end]
        .split("<code>")
        .skip(1)
        .map(|c| c.split("</code>").next().unwrap().to_owned())
        .collect()
}

async fn the_security_page_manages_factor_password_and_sessions(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    db.create_account("ann", &["--password", PASSWORD]);
    let srv = db.start();
    let mut here = Browser::new(&srv);
    here.sign_in("ann").await;

    // Enrollment: the secret shown is the one the server keeps; no hidden field carries it.
    let page = here.get("/account/security").await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(!page.text.contains("name=\"secret\""));
    let shown = element(&page.text, "totp-secret").unwrap();
    let again = here.get("/account/security").await;
    assert_eq!(element(&again.text, "totp-secret").unwrap(), shown);
    let secret = TotpSecret::parse(&shown).unwrap();
    let now = OffsetDateTime::now_utc();
    let done = here
        .post("/account/security", &[("code", &secret.code_at(now))])
        .await;
    assert_eq!(done.status, 200, "{}", done.text);
    let codes = recovery_codes(&done.text);
    assert_eq!(codes.len(), 10, "{}", done.text);
    assert_eq!(element(&done.text, "codes-left").as_deref(), Some("10"));
    let later = here.get("/account/security").await;
    assert!(
        recovery_codes(&later.text).is_empty(),
        "codes are shown once"
    );

    // At rest: sealed under the key file, which only the server's owner can read.
    let key_file = db.dir.path().join("data/secret.key");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&key_file).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    let hex = std::fs::read_to_string(&key_file).unwrap();
    let bytes: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&hex.trim()[i * 2..i * 2 + 2], 16).unwrap())
        .collect();
    let store = quire_store::Database::connect(&quire_store::DatabaseConfig::new(&db.url)).unwrap();
    let account = store.account_by_login("ann").await.unwrap().unwrap();
    let stored = account.totp_secret.unwrap();
    assert!(!stored.as_stored().contains(secret.expose()));
    assert_eq!(
        SealingKey::from_bytes(&bytes)
            .unwrap()
            .open_totp(account.id, &stored),
        Ok(secret.clone())
    );

    // A recovery code signs in once.
    let mut there = Browser::new(&srv);
    let r = there.sign_in("ann").await;
    assert!(location(&r).starts_with("/login/totp"));
    let r = there
        .post(
            "/login/totp",
            &[("code", &codes[0]), ("next", "/account/keys")],
        )
        .await;
    assert_eq!(location(&r), "/account/keys");
    let mut halfway = Browser::new(&srv);
    halfway.sign_in("ann").await;
    let r = halfway
        .post(
            "/login/totp",
            &[("code", &codes[0]), ("next", "/account/keys")],
        )
        .await;
    assert_eq!(r.status, 401, "a spent recovery code");
    let page = here.get("/account/security").await;
    assert_eq!(element(&page.text, "codes-left").as_deref(), Some("9"));

    // Turning the factor off takes a code; a cross-site post is refused first.
    let own = here.origin.replace("http://evil.example".into());
    here.post("/account/security/off", &[("code", &codes[1])])
        .await
        .assert_error(403, "invalid origin");
    here.origin = own;
    let r = here
        .post("/account/security/off", &[("code", "000000")])
        .await;
    assert_eq!(r.status, 400);
    assert!(element(&r.text, "error").is_some());
    assert!(element(&r.text, "enrolled").is_some(), "still on");
    let r = here
        .post("/account/security/off", &[("code", &codes[1])])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(element(&r.text, "enrolled").is_none());
    assert!(
        element(&r.text, "totp-secret").is_some(),
        "ready to enroll again"
    );
    let r = halfway.get("/account/security").await;
    assert_eq!(
        r.status, 200,
        "a session that owed the code needs only the password now"
    );

    // Changing the password: the current one first, the sign-up rules, other sessions end.
    let r = here
        .post(
            "/account/security/password",
            &[
                ("current_password", "wrong password"),
                ("new_password", NEW_PASSWORD),
            ],
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        element(&r.text, "error").as_deref(),
        Some("the current password is not right")
    );
    let r = here
        .post(
            "/account/security/password",
            &[("current_password", PASSWORD), ("new_password", "short")],
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(element(&r.text, "error").unwrap().contains("15 to 128"));
    let r = here
        .post(
            "/account/security/password",
            &[
                ("current_password", PASSWORD),
                ("new_password", NEW_PASSWORD),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        element(&r.text, "notice").as_deref(),
        Some("Your password is changed. 2 other sessions were signed out.")
    );
    assert!(location(&there.get("/account/security").await).starts_with("/login"));
    assert_eq!(here.get("/account/security").await.status, 200);
    let notice = mail_to(db.dir.path(), "ann@example.com", 0).await;
    assert!(notice.contains("changed from the dashboard"), "{notice}");
    assert!(!notice.contains(NEW_PASSWORD));
    let mut fresh = Browser::new(&srv);
    let r = fresh
        .post("/login", &[("login", "ann"), ("password", NEW_PASSWORD)])
        .await;
    assert_eq!(r.status, 303, "{}", r.text);

    // Signing out every other session.
    let r = here.post("/account/security/sessions", &[]).await;
    assert_eq!(
        element(&r.text, "notice").as_deref(),
        Some("1 other session was signed out.")
    );
    assert!(location(&fresh.get("/account/security").await).starts_with("/login"));
    assert_eq!(here.get("/account/security").await.status, 200);
}

on_both_backends!(the_security_page_manages_factor_password_and_sessions);
