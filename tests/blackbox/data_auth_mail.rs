//! An end user's confirmation email, on both metadata databases: sent when the owner asks
//! for confirmed addresses, with its link, in the account's daily quota; sent off the
//! request path, so a sign-up answers while the relay has not; and once the quota is used
//! up, a registered address is refused as a new one is, so neither the time a sign-up
//! takes nor its refusal tells who is registered.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::data_auth::{assert_gotrue, call, database, password_grant};
use crate::data_auth_takeovers::confirm;
use crate::databases::{sql, with_cluster};
use crate::harness::{Backend, Server, eventually, on_both_backends};
use crate::signup::{link_in, mail_to};

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    a_confirmation_email_confirms_the_address,
    the_confirmation_leaves_off_the_request_path
);

async fn sign_up(srv: &Server, slug: &str, secret: &Value, email: &str) -> (u16, Value) {
    call(
        srv,
        "POST",
        slug,
        "auth/v1/signup",
        secret,
        None,
        Some(json!({ "email": email, "password": "long enough" })),
    )
    .await
}

async fn a_confirmation_email_confirms_the_address(b: Backend) {
    let (db, srv, ann) = with_cluster(b, &[]).await;
    let (id, secret) = database(&srv, &ann, "club").await;
    sql(
        &srv,
        &ann.key,
        &id,
        "update auth.settings set confirm_email = true",
    )
    .await
    .assert_status(200);
    let (status, user) = sign_up(&srv, "club", &secret, "cy@example.com").await;
    assert_eq!(status, 200, "{user}");
    assert!(user.get("access_token").is_none(), "no session yet: {user}");
    assert!(user["email_confirmed_at"].is_null(), "{user}");
    let early = password_grant(&srv, "club", &secret, "cy@example.com", "long enough").await;
    assert_gotrue(&early, 400, "email_not_confirmed");
    let (_, settings) = call(&srv, "GET", "club", "auth/v1/settings", &secret, None, None).await;
    assert_eq!(settings["mailer_autoconfirm"], false);

    // The link, opened with no key (from a mail client), and its button confirm once.
    let mail = mail_to(db.dir.path(), "cy@example.com", 0).await;
    assert!(mail.contains("Reply-To: "), "the account answers: {mail}");
    let link = link_in(&mail, "/db/club/auth/v1/verify");
    assert!(!mail.contains("long enough"), "no password in mail");
    // (The page and its button: `data_auth_takeovers.rs`.)
    let done = confirm(&srv, &link, "long enough").await;
    assert_eq!(done.status, 200, "{}", done.text);
    assert!(done.text.contains("Address confirmed"), "{}", done.text);
    let spent = confirm(&srv, &link, "long enough").await;
    assert_eq!(spent.status, 403, "a spent link: {}", spent.text);
    let (status, session) =
        password_grant(&srv, "club", &secret, "cy@example.com", "long enough").await;
    assert_eq!(status, 200, "{session}");
    assert!(session["user"]["email_confirmed_at"].is_string());
    let forged = crate::data_auth_takeovers::open_link(
        &srv,
        "/db/club/auth/v1/verify?token=forged&type=signup",
    )
    .await;
    assert_eq!(forged.status, 400, "not a link this gateway sent");
    // While addresses must be confirmed, one cannot be changed without it.
    let change = call(
        &srv,
        "PUT",
        "club",
        "auth/v1/user",
        &secret,
        session["access_token"].as_str(),
        Some(json!({ "email": "other@example.com" })),
    )
    .await;
    assert_gotrue(&change, 400, "validation_failed");

    // The mails count in the account's quota (10 a day): past it, the sign-up is refused
    // and leaves no user, so the address is free when the quota is back.
    for n in 1..10 {
        let (status, body) = sign_up(&srv, "club", &secret, &format!("m{n}@example.com")).await;
        assert_eq!(status, 200, "{body}");
    }
    let mut refusals = Vec::new();
    for _ in 0..2 {
        let full = sign_up(&srv, "club", &secret, "late@example.com").await;
        assert_gotrue(&full, 429, "over_email_send_rate_limit");
        refusals.push(full);
    }
    // A registered address gets the same refusal: the quota says nothing of who is
    // registered.
    for registered in ["cy@example.com", "CY@example.com"] {
        let refused = sign_up(&srv, "club", &secret, registered).await;
        assert_eq!(refused, refusals[0], "{registered}");
    }
    let held = sql(
        &srv,
        &ann.key,
        &id,
        "select count(*)::int, count(*) filter (where email = 'late@example.com')::int from auth.users",
    )
    .await
    .assert_status(200)
    .clone();
    assert_eq!(held["rows"][0], json!([10, 0]), "{held}");
    let (status, _) = password_grant(&srv, "club", &secret, "cy@example.com", "long enough").await;
    assert_eq!(status, 200, "the registered user is as it was");
}

/// A relay that takes connections and never says a word, until it is dropped.
struct SilentRelay {
    port: u16,
    connections: Arc<AtomicUsize>,
    accepting: tokio::task::JoinHandle<()>,
}

impl SilentRelay {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        let accepting = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                held.push(stream);
            }
        });
        Self {
            port,
            connections,
            accepting,
        }
    }
}

impl Drop for SilentRelay {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

async fn the_confirmation_leaves_off_the_request_path(b: Backend) {
    let relay = SilentRelay::start().await;
    let url = format!("smtp://127.0.0.1:{}", relay.port);
    let (_db, srv, ann) = with_cluster(b, &[("QUIRE_SMTP_URL", url.as_str())]).await;
    let (id, secret) = database(&srv, &ann, "quick").await;
    sql(
        &srv,
        &ann.key,
        &id,
        "update auth.settings set confirm_email = true",
    )
    .await
    .assert_status(200);

    // The relay has not answered (it never does): the sign-up is answered all the same, as
    // a registered address's is, and the message is on its way.
    let (status, user) = sign_up(&srv, "quick", &secret, "dot@example.com").await;
    assert_eq!(status, 200, "{user}\n{}", srv.logs());
    assert_eq!(user["email"], "dot@example.com");
    assert!(user["email_confirmed_at"].is_null(), "{user}");
    eventually("the message reaches the relay", || async {
        relay.connections.load(Ordering::SeqCst) >= 1
    })
    .await;
    let held = sql(
        &srv,
        &ann.key,
        &id,
        "select count(*)::int from auth.users where email_confirmed_at is null",
    )
    .await
    .assert_status(200)
    .clone();
    assert_eq!(held["rows"][0][0], 1, "the sign-up awaits its link: {held}");
}
