//! The email route against the real server on both databases: every error code with its
//! status and body, the outbox by default, a real SMTP relay (Debian's aiosmtpd) accepting
//! and refusing, an unreachable relay, the quota over HTTP with twenty racing sends, and
//! nothing of a message's text in the logs at trace level.

use serde_json::{Value, json};

use crate::harness::{Backend, Server, TestDb, on_both_backends, setup};

const EMAIL: &str = "/api/platform/v1/email";
/// What every test sends; the logs must never show it.
const TEXT: &str = "The launch code is tangerine-47.\n";

fn message(to: &str) -> Value {
    json!({"to": to, "subject": "Launch", "text": TEXT})
}

async fn every_error_of_the_email_route(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let (app_key, _) = srv.mint(&ann.key, &["page"], None).await;
    srv.post(EMAIL, &app_key, message("bob@example.com"))
        .await
        .assert_error(403, "insufficient_scope");
    srv.call(
        "POST",
        EMAIL,
        None,
        Some(&message("bob@example.com").to_string()),
    )
    .await
    .assert_error(401, "invalid_api_key");
    srv.call("POST", EMAIL, Some(&ann.key), Some("{"))
        .await
        .assert_error(400, "invalid_json");
    for body in [
        json!({"to": "bob@example.com", "subject": "Hi"}),
        json!({"to": 7, "subject": "Hi", "text": "x"}),
    ] {
        srv.post(EMAIL, &ann.key, body)
            .await
            .assert_error(400, "invalid_body");
    }
    for (body, field) in [
        (
            json!({"to": "Bob <bob@example.com>", "subject": "Hi", "text": "x"}),
            "to",
        ),
        (
            json!({"to": "bob@example.com\r\nRCPT TO:<eve@example.com>", "subject": "Hi", "text": "x"}),
            "to",
        ),
        (
            json!({"to": "bob@example.com", "subject": "Hi\r\nBcc: eve@example.com", "text": "x"}),
            "subject",
        ),
        (
            json!({"to": "bob@example.com", "subject": "Hi", "text": ""}),
            "text",
        ),
    ] {
        let r = srv.post(EMAIL, &ann.key, body).await;
        r.assert_error(400, "invalid_email_input");
        assert!(
            r.body["message"].as_str().unwrap().starts_with(field),
            "{}",
            r.text
        );
    }

    // Without a relay, the message goes to the outbox under its mail id.
    let r = srv.post(EMAIL, &ann.key, message("Bob@example.com")).await;
    let sent = r.assert_status(200);
    assert_eq!(sent["sent"], true);
    assert_eq!(sent["remaining_today"], 9);
    let mail_id = sent["mail_id"].as_str().unwrap();
    let eml = db
        .dir
        .path()
        .join("data/outbox")
        .join(format!("{mail_id}.eml"));
    let written = std::fs::read_to_string(&eml).unwrap();
    assert!(
        written.contains("Reply-To: \"ann\" <ann@example.com>"),
        "{written}"
    );
    assert!(
        written.contains(&format!("Message-ID: <{mail_id}@localhost>")),
        "{written}"
    );
    assert!(written.contains("tangerine-47"));
    assert!(!r.text.contains("tangerine"), "the text is never echoed");

    // The largest text fits, even in its worst JSON escaping (a control character takes
    // six bytes: \u0001); one byte more is refused by name.
    let largest = "\u{1}".repeat(64 * 1024);
    let body = json!({"to": "bob@example.com", "subject": "Big", "text": largest});
    assert!(body.to_string().len() > 6 * 64 * 1024);
    srv.post(EMAIL, &ann.key, body).await.assert_status(200);
    let over = json!({"to": "bob@example.com", "subject": "Big", "text": format!("{largest}x")});
    let r = srv.post(EMAIL, &ann.key, over).await;
    r.assert_error(400, "invalid_email_input");
    assert!(r.body["message"].as_str().unwrap().starts_with("text"));
}

/// A server whose mail goes to `relay_url`, logging everything.
fn with_relay(db: &TestDb, relay_url: &str) -> Server {
    db.start_with(&[
        ("QUIRE_SMTP_URL", relay_url),
        ("QUIRE_MAIL_FROM", "quire@quire.example"),
        ("RUST_LOG", "trace"),
    ])
}

async fn a_relay_delivers_refuses_or_cannot_be_reached(b: Backend) {
    let Some((db, _srv, ann)) = setup(b).await else {
        return;
    };
    let relay = quire_testkit::smtp_relay::SmtpRelay::start();
    let srv = with_relay(&db, &format!("smtp://127.0.0.1:{}", relay.port));
    let r = srv.post(EMAIL, &ann.key, message("bob@example.com")).await;
    let mail_id = r.assert_status(200)["mail_id"].as_str().unwrap().to_owned();
    let got = relay.received();
    assert_eq!(got.len(), 1);
    assert!(got[0].contains(&format!("Message-ID: <{mail_id}@quire.example>")));
    assert!(got[0].contains("X-Envelope-To: bob@example.com"));

    // Refused at RCPT: 502 with the relay's words, and the slot given back.
    let r = srv
        .post(EMAIL, &ann.key, message("reject@example.com"))
        .await;
    r.assert_error(502, "send_failed");
    assert!(
        r.body["message"].as_str().unwrap().contains("550 5.1.1"),
        "{}",
        r.text
    );
    let r = srv
        .post(EMAIL, &ann.key, message("carol@example.com"))
        .await;
    assert_eq!(r.assert_status(200)["remaining_today"], 8);

    // Nothing of any text at trace level.
    let logs = srv.logs();
    assert!(
        logs.contains("/api/platform/v1/email"),
        "the log is the request log"
    );
    assert!(
        !logs.contains("tangerine"),
        "a message's text is in the log"
    );

    // A relay that is not there: 502, and the key's slot back.
    drop(srv);
    let closed = quire_testkit::smtp_relay::free_port();
    let srv = with_relay(&db, &format!("smtp://127.0.0.1:{closed}"));
    let r = srv.post(EMAIL, &ann.key, message("bob@example.com")).await;
    r.assert_error(502, "send_failed");
    assert!(!r.text.contains("tangerine"));
}

async fn the_eleventh_send_of_a_day_waits_and_racing_sends_get_exactly_ten(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let sends: Vec<_> = (0..20)
        .map(|i| {
            let http = srv.http.clone();
            let url = format!("{}{EMAIL}", srv.base);
            let key = ann.key.clone();
            tokio::spawn(async move {
                let r = http
                    .post(url)
                    .bearer_auth(key)
                    .json(&message(&format!("friend{i}@example.com")))
                    .send()
                    .await
                    .unwrap();
                (r.status().as_u16(), r.json::<Value>().await.unwrap())
            })
        })
        .collect();
    let mut ok = 0;
    for send in sends {
        let (status, body) = send.await.unwrap();
        match status {
            200 => ok += 1,
            429 => {
                assert_eq!(body["error"], "email_quota_exceeded");
                assert_eq!(body["retry_after_hours"], 24, "{body}");
            }
            other => panic!("{other}: {body}"),
        }
    }
    assert_eq!(ok, 10);
    let r = srv.post(EMAIL, &ann.key, message("late@example.com")).await;
    r.assert_error(429, "email_quota_exceeded");
    assert_eq!(r.body["retry_after_hours"], 24);
}

async fn the_cli_sends_text_or_a_file_and_reports_refusals(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let user = crate::cli::User::new(&srv);
    let run = |args: &[&str]| {
        user.command(args)
            .env("QUIRE_KEY", &ann.key)
            .output()
            .unwrap()
    };
    let out = run(&[
        "--json",
        "email",
        "send",
        "--to",
        "bob@example.com",
        "--subject",
        "Hi",
        "--text",
        TEXT,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sent["remaining_today"], 9);
    let file = db.dir.path().join("body.txt");
    std::fs::write(&file, "From a file.\n").unwrap();
    let out = run(&[
        "email",
        "send",
        "--to",
        "bob@example.com",
        "--subject",
        "Hi",
        "--text-file",
        file.to_str().unwrap(),
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("8 left in the next 24 hours"), "{said}");
    let out = run(&[
        "email",
        "send",
        "--to",
        "not an address",
        "--subject",
        "Hi",
        "--text",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid_email_input"));
}

async fn the_mail_test_prints_what_the_outbox_answered_and_refuses_a_distant_relay(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let out = db.admin(&["mail-test", "--to", "bob@example.com"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("written to the outbox as"));
    // A plain relay that is not on this machine is refused before anything is sent.
    let out = db.admin_with(
        &["mail-test", "--to", "bob@example.com"],
        &[],
        &[("QUIRE_SMTP_URL", "smtp://mail.example.com:25")],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"));
}

async fn the_mail_test_prints_what_the_relay_answered(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let relay = quire_testkit::smtp_relay::SmtpRelay::start();
    let url = format!("smtp://127.0.0.1:{}", relay.port);
    let env = [("QUIRE_SMTP_URL", url.as_str())];
    let out = db.admin_with(&["mail-test", "--to", "bob@example.com"], &[], &env);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("250") && said.contains("queued as"),
        "{said}"
    );
    assert_eq!(relay.received().len(), 1);
    let out = db.admin_with(&["mail-test", "--to", "reject@example.com"], &[], &env);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("550 5.1.1"));
}

on_both_backends!(
    the_mail_test_prints_what_the_outbox_answered_and_refuses_a_distant_relay,
    the_cli_sends_text_or_a_file_and_reports_refusals,
    every_error_of_the_email_route,
    the_eleventh_send_of_a_day_waits_and_racing_sends_get_exactly_ten,
);

/// The tests that need aiosmtpd, in a module of their own: each use of the macro makes its
/// `sqlite` and `postgres` modules.
mod relay {
    use super::{
        a_relay_delivers_refuses_or_cannot_be_reached, the_mail_test_prints_what_the_relay_answered,
    };
    use crate::harness::on_both_backends;

    on_both_backends!(
        #[cfg_attr(
            no_aiosmtpd,
            ignore = "needs aiosmtpd: apt-get install python3-aiosmtpd"
        )]
        a_relay_delivers_refuses_or_cannot_be_reached,
        the_mail_test_prints_what_the_relay_answered,
    );
}
