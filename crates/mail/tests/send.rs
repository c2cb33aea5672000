//! The send use case against the in-memory world with a fixed clock: who may send, the
//! checks that come before anything else, the exact rolling quota and its retry hint, and
//! a relay refusal that gives the slot back.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use quire_kernel::{App, Apps, Principal, PrincipalKind, Tier};
use quire_mail::{MailError, MailRequest, SendFailure};
use quire_testkit::World;
use time::Duration;

fn request(to: &str) -> MailRequest {
    MailRequest {
        to: to.into(),
        subject: "Weekly report".into(),
        text: "Numbers are up.\n".into(),
    }
}

async fn world() -> World {
    World::builder().accounts(&["ann"]).build().await
}

#[tokio::test]
async fn a_master_key_sends_from_the_operator_with_the_account_as_reply_to() {
    let w = world().await;
    let sent = w
        .services
        .mail
        .send(&w.master("ann"), &request("Bob.Smith@Example.com"))
        .await
        .unwrap();
    assert_eq!(sent.remaining_today, 9);
    let mail = &w.mailer.sent()[0];
    assert_eq!(mail.mail_id, sent.mail_id);
    assert_eq!(
        mail.to.as_str(),
        "Bob.Smith@Example.com",
        "the local part keeps its case"
    );
    assert_eq!(mail.reply_to, "ann@example.com");
    assert_eq!(mail.reply_to_name, "ann");
    assert_eq!(
        (mail.subject.as_str(), mail.text.as_str()),
        ("Weekly report", "Numbers are up.\n")
    );
    // The text stays out of Debug, and so out of any log line made from it.
    assert!(!format!("{mail:?}").contains("Numbers"));
    assert!(!format!("{:?}", request("x@example.com")).contains("Numbers"));
}

#[tokio::test]
async fn app_keys_and_bearer_tokens_cannot_send() {
    let w = world().await;
    let master = w.master("ann");
    let app = Principal {
        kind: PrincipalKind::Key {
            key_id: quire_kernel::KeyId::new(),
            tier: Tier::App(Apps::new(App::ALL).unwrap()),
        },
        ..master.clone()
    };
    let bearer = Principal {
        kind: PrincipalKind::OAuthClient {
            client_id: "qc_x".into(),
            scopes: Apps::new(App::ALL).unwrap().into(),
        },
        ..master
    };
    for who in [app, bearer] {
        assert_eq!(
            w.services
                .mail
                .send(&who, &request("bob@example.com"))
                .await,
            Err(MailError::InsufficientScope)
        );
    }
    assert!(w.mailer.sent().is_empty());
}

#[tokio::test]
async fn bad_input_is_refused_before_the_quota_or_the_relay() {
    let w = world().await;
    let master = w.master("ann");
    let cases = [
        MailRequest {
            to: "Bob <bob@example.com>".into(),
            ..request("")
        },
        MailRequest {
            to: "bob@example.com\r\nRCPT TO:<x@example.com>".into(),
            ..request("")
        },
        MailRequest {
            to: "a@example.com, b@example.com".into(),
            ..request("")
        },
        MailRequest {
            subject: "Hi\r\nBcc: eve@example.com".into(),
            ..request("bob@example.com")
        },
        MailRequest {
            subject: String::new(),
            ..request("bob@example.com")
        },
        MailRequest {
            text: String::new(),
            ..request("bob@example.com")
        },
        MailRequest {
            text: "a\0b".into(),
            ..request("bob@example.com")
        },
        MailRequest {
            text: "x".repeat(64 * 1024 + 1),
            ..request("bob@example.com")
        },
    ];
    for case in cases {
        let refused = w.services.mail.send(&master, &case).await.unwrap_err();
        let MailError::InvalidInput(text) = refused else {
            panic!("{refused:?}");
        };
        assert!(
            ["to ", "subject ", "text "]
                .iter()
                .any(|f| text.starts_with(f)),
            "the message names the field: {text}"
        );
    }
    assert!(w.store.snapshot().email_sends.is_empty());
    assert!(w.mailer.sent().is_empty());
}

#[tokio::test]
async fn ten_sends_in_a_rolling_day_then_the_oldest_must_leave_the_window() {
    let w = world().await;
    let master = w.master("ann");
    let mail = &w.services.mail;
    // Nine sends an hour apart, then one more.
    for n in 1..=9 {
        let sent = mail
            .send(&master, &request("bob@example.com"))
            .await
            .unwrap();
        assert_eq!(sent.remaining_today, 10 - n);
        w.clock.advance(Duration::hours(1));
    }
    let tenth = mail
        .send(&master, &request("bob@example.com"))
        .await
        .unwrap();
    assert_eq!(tenth.remaining_today, 0);
    // The eleventh waits for the first, sent 9 h ago, to leave: 15 hours.
    assert_eq!(
        mail.send(&master, &request("bob@example.com")).await,
        Err(MailError::QuotaExceeded {
            retry_after_hours: 15
        })
    );
    // 30 minutes later it is 14.5 hours: rounded up, 15.
    w.clock.advance(Duration::minutes(30));
    assert_eq!(
        mail.send(&master, &request("bob@example.com")).await,
        Err(MailError::QuotaExceeded {
            retry_after_hours: 15
        })
    );
    // At exactly 24 h after the first send it has left the window.
    w.clock
        .advance(Duration::hours(14) + Duration::minutes(30) - Duration::seconds(1));
    assert_eq!(
        mail.send(&master, &request("bob@example.com")).await,
        Err(MailError::QuotaExceeded {
            retry_after_hours: 1
        })
    );
    w.clock.advance(Duration::seconds(1));
    let again = mail
        .send(&master, &request("bob@example.com"))
        .await
        .unwrap();
    assert_eq!(again.remaining_today, 0);
    assert_eq!(w.mailer.sent().len(), 11);
}

#[tokio::test]
async fn a_refused_message_gives_its_slot_back() {
    let w = world().await;
    let master = w.master("ann");
    w.mailer.answer(Some(SendFailure::Rejected(
        "550 5.1.1 no such mailbox".into(),
    )));
    let refused = w
        .services
        .mail
        .send(&master, &request("nobody@example.com"))
        .await;
    assert_eq!(
        refused,
        Err(MailError::SendFailed(SendFailure::Rejected(
            "550 5.1.1 no such mailbox".into()
        )))
    );
    w.mailer
        .answer(Some(SendFailure::Unreachable("connection refused".into())));
    assert!(matches!(
        w.services
            .mail
            .send(&master, &request("bob@example.com"))
            .await,
        Err(MailError::SendFailed(SendFailure::Unreachable(_)))
    ));
    assert!(w.store.snapshot().email_sends.is_empty());
    w.mailer.answer(None);
    let sent = w
        .services
        .mail
        .send(&master, &request("bob@example.com"))
        .await
        .unwrap();
    assert_eq!(sent.remaining_today, 9);
}

#[tokio::test]
async fn the_janitor_forgets_sends_that_left_the_window() {
    let w = world().await;
    let master = w.master("ann");
    w.services
        .mail
        .send(&master, &request("bob@example.com"))
        .await
        .unwrap();
    w.clock.advance(Duration::hours(23));
    assert_eq!(w.services.mail.sweep().await.unwrap(), 0);
    w.clock.advance(Duration::hours(2));
    assert_eq!(w.services.mail.sweep().await.unwrap(), 1);
}
