//! The relay adapter against a real SMTP server: Debian's aiosmtpd, started per test on a
//! free loopback port, accepting mail, refusing one recipient with 550; and a server that
//! accepts connections but never answers. The outbox beside it.
//!
//! The server is `quire_testkit::smtp_relay`: `/usr/bin/python3` with `python3-aiosmtpd`,
//! which CI installs; elsewhere the tests that need it are reported ignored (`no_aiosmtpd`, set by
//! this crate's build script).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::time::{Duration, Instant};

use quire_mail::{Mailer, OutboundMail, Recipient, SendFailure};
use quire_smtp::{OutboxMailer, RelayConfig, SmtpMailer};
use quire_testkit::smtp_relay::{SmtpRelay, free_port};

fn mail(to: &str) -> OutboundMail {
    OutboundMail {
        mail_id: uuid::Uuid::now_v7(),
        to: Recipient::parse(to).unwrap(),
        reply_to: "ann@example.com".into(),
        reply_to_name: "ann".into(),
        subject: "Weekly report: ünïcode".into(),
        text: "Numbers are up.\n.\nA line with only a dot, above.\n".into(),
    }
}

fn mailer(port: u16) -> SmtpMailer {
    let url = format!("smtp://127.0.0.1:{port}");
    SmtpMailer::new(RelayConfig::parse(&url, None, "quire@quire.example").unwrap())
}

fn header<'a>(message: &'a str, name: &str) -> Option<&'a str> {
    message
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
}

#[tokio::test]
#[cfg_attr(
    no_aiosmtpd,
    ignore = "needs aiosmtpd: apt-get install python3-aiosmtpd"
)]
async fn the_relay_receives_the_message_as_built() {
    let relay = SmtpRelay::start();
    let m = mail("Bob.Smith@example.com");
    let answer = mailer(relay.port).send(&m).await.unwrap();
    assert!(
        answer.starts_with("250") && answer.contains("queued as Q0"),
        "{answer}"
    );
    let got = relay.received();
    assert_eq!(got.len(), 1);
    let message = &got[0];
    assert_eq!(
        header(message, "X-Envelope-From"),
        Some("quire@quire.example")
    );
    assert_eq!(
        header(message, "X-Envelope-To"),
        Some("Bob.Smith@example.com")
    );
    assert!(
        header(message, "From")
            .unwrap()
            .contains("<quire@quire.example>")
    );
    assert!(
        header(message, "To")
            .unwrap()
            .contains("Bob.Smith@example.com")
    );
    assert!(
        header(message, "Reply-To")
            .unwrap()
            .contains("<ann@example.com>")
    );
    assert_eq!(
        header(message, "Message-ID"),
        Some(format!("<{}@quire.example>", m.mail_id).as_str())
    );
    // The subject is RFC 2047-encoded (it is not ASCII); the body is plain UTF-8 text.
    assert!(
        header(message, "Subject").unwrap().starts_with("=?utf-8?"),
        "{message}"
    );
    assert!(
        header(message, "Content-Type")
            .unwrap()
            .starts_with("text/plain; charset=\"utf-8\""),
        "{message}"
    );
    assert!(message.contains("Numbers are up."), "{message}");
    assert!(
        message.contains("A line with only a dot, above."),
        "{message}"
    );
}

#[tokio::test]
#[cfg_attr(
    no_aiosmtpd,
    ignore = "needs aiosmtpd: apt-get install python3-aiosmtpd"
)]
async fn a_refused_recipient_is_rejected_with_the_relays_reply() {
    let relay = SmtpRelay::start();
    let refused = mailer(relay.port).send(&mail("reject@example.com")).await;
    assert_eq!(
        refused,
        Err(SendFailure::Rejected(
            "550 5.1.1 mailbox unavailable".into()
        ))
    );
    assert!(relay.received().is_empty(), "nothing was delivered");
}

#[tokio::test]
async fn no_relay_and_a_silent_relay_are_unreachable_within_the_deadline() {
    let closed = free_port();
    let Err(SendFailure::Unreachable(why)) = mailer(closed).send(&mail("bob@example.com")).await
    else {
        panic!("a closed port must be unreachable");
    };
    assert!(!why.is_empty());

    // Accepts the connection, never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let started = Instant::now();
    let answer = mailer(port)
        .with_deadline(Duration::from_secs(2))
        .send(&mail("bob@example.com"))
        .await;
    assert!(
        matches!(answer, Err(SendFailure::Unreachable(_))),
        "{answer:?}"
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}");
    drop(silent);
}

#[tokio::test]
async fn the_outbox_writes_each_message_whole_under_its_mail_id() {
    let dir = tempfile::tempdir().unwrap();
    let outbox = OutboxMailer::new(dir.path().join("outbox"), "quire@quire.example");
    let m = mail("bob@example.com");
    let answer = outbox.send(&m).await.unwrap();
    assert!(answer.contains(&m.mail_id.to_string()));
    let files: Vec<_> = std::fs::read_dir(outbox.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        files,
        vec![std::ffi::OsString::from(format!("{}.eml", m.mail_id))]
    );
    let text = std::fs::read_to_string(outbox.dir().join(format!("{}.eml", m.mail_id))).unwrap();
    assert!(
        header(&text, "Reply-To")
            .unwrap()
            .contains("ann@example.com")
    );
    assert!(text.contains("Numbers are up."));
}
