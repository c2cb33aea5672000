//! The dashboard's password change against the in-memory fakes and a fixed clock: the
//! current password, the rules, a failing store, the other sessions ended, the notice, and
//! the try limit; and that none of it hashes or verifies on the async worker.

use std::sync::Arc;

use quire_accounts::SignInError;
use quire_signup::{PasswordChangeError, PasswordRule, SignUpMode};
use quire_testkit::memory::Op;
use quire_testkit::{Heartbeats, World};
use time::Duration;

use crate::common;
use common::{CLIENT, PASSWORD, form, open_world, token_in};

#[tokio::test]
async fn a_password_change_needs_the_current_one_and_ends_the_other_sessions() {
    let w = open_world(&[]).await;
    w.services
        .sign_up
        .sign_up(&form("hal@example.com", "hal"), CLIENT)
        .await
        .unwrap();
    let token = token_in(&w.mailer.sent()[0], quire_signup::VERIFY_PATH);
    w.services.sign_up.verify_email(&token).await.unwrap();
    let sessions = &w.services.sessions;
    let here = sessions.sign_in("hal", PASSWORD, CLIENT).await.unwrap();
    let there = sessions.sign_in("hal", PASSWORD, CLIENT).await.unwrap();
    let (session, hal) = sessions.current(&here.token).await.unwrap().unwrap();
    let change = &w.services.password_change;
    let new = "another long sentence";

    assert_eq!(
        change
            .change(&hal, &session.id_hash, "not the password", new)
            .await
            .unwrap_err(),
        PasswordChangeError::WrongPassword
    );
    assert_eq!(
        change
            .change(&hal, &session.id_hash, PASSWORD, "my hal@example.com words")
            .await
            .unwrap_err(),
        PasswordChangeError::Password(PasswordRule::ContainsIdentity)
    );
    w.store.fail(Op::ChangePassword);
    assert!(matches!(
        change
            .change(&hal, &session.id_hash, PASSWORD, new)
            .await
            .unwrap_err(),
        PasswordChangeError::Infra(_)
    ));
    w.store.heal();
    assert!(sessions.current(&there.token).await.unwrap().is_some());
    let mails_before = w.mailer.sent().len();

    assert_eq!(
        change
            .change(&hal, &session.id_hash, PASSWORD, new)
            .await
            .unwrap(),
        1
    );
    assert!(sessions.current(&here.token).await.unwrap().is_some());
    assert!(sessions.current(&there.token).await.unwrap().is_none());
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), mails_before + 1);
    assert!(
        sent.last()
            .unwrap()
            .text
            .contains("changed from the dashboard")
    );
    assert!(!sent.last().unwrap().text.contains(new));
    sessions.sign_in("hal", new, CLIENT).await.unwrap();
    assert_eq!(
        sessions.sign_in("hal", PASSWORD, CLIENT).await.unwrap_err(),
        SignInError::WrongCredentials
    );

    // Only wrong passwords count: one above, nine here; then this session waits, even with
    // the right password, while a session that has not failed may still try.
    let (session, hal) = sessions.current(&here.token).await.unwrap().unwrap();
    for _ in 0..9 {
        assert_eq!(
            change
                .change(&hal, &session.id_hash, "wrong", PASSWORD)
                .await
                .unwrap_err(),
            PasswordChangeError::WrongPassword
        );
    }
    assert_eq!(
        change
            .change(&hal, &session.id_hash, new, PASSWORD)
            .await
            .unwrap_err(),
        PasswordChangeError::Throttled {
            retry_after_secs: 900
        }
    );
    let owner = sessions.sign_in("hal", new, "192.0.2.77").await.unwrap();
    let (owner_session, hal) = sessions.current(&owner.token).await.unwrap().unwrap();
    change
        .change(&hal, &owner_session.id_hash, new, "a third long sentence")
        .await
        .unwrap();
    w.clock.advance(Duration::minutes(15));
    let (session, hal) = sessions.current(&owner.token).await.unwrap().unwrap();
    change
        .change(&hal, &session.id_hash, "a third long sentence", PASSWORD)
        .await
        .unwrap();
}

// `tokio::test` runs on one worker thread: the heartbeats and the flows share it.
#[tokio::test]
async fn passwords_are_hashed_and_verified_off_the_async_worker() {
    let offload = Arc::new(Heartbeats::new());
    let w = World::builder()
        .offload(offload.clone())
        .settings(|s| {
            s.sign_up = SignUpMode::Open;
            s.mail_from = "quire@quire.test".into();
        })
        .build()
        .await;
    let form = form("hal@example.com", "hal");
    let (signed_up, ()) = tokio::join!(w.services.sign_up.sign_up(&form, CLIENT), offload.beat());
    signed_up.unwrap();
    assert_eq!(offload.jobs(), 1, "the new password, hashed");
    let token = token_in(&w.mailer.sent()[0], quire_signup::VERIFY_PATH);
    w.services.sign_up.verify_email(&token).await.unwrap();
    let sessions = &w.services.sessions;
    let (here, ()) = tokio::join!(sessions.sign_in("hal", PASSWORD, CLIENT), offload.beat());
    let (session, hal) = sessions
        .current(&here.unwrap().token)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(offload.jobs(), 2);

    let change = &w.services.password_change;
    let new = "another long sentence";
    let (wrong, ()) = tokio::join!(
        change.change(&hal, &session.id_hash, "not the password", new),
        offload.beat()
    );
    assert_eq!(wrong.unwrap_err(), PasswordChangeError::WrongPassword);
    assert_eq!(offload.jobs(), 3, "the current password, verified");
    // The current password verified, then the new one hashed: a beat for each.
    let (changed, ()) = tokio::join!(
        change.change(&hal, &session.id_hash, PASSWORD, new),
        async {
            offload.beat().await;
            offload.beat().await;
        }
    );
    assert_eq!(changed.unwrap(), 0);
    assert_eq!(offload.jobs(), 5);
}
