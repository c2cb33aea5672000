//! The self-service flows against the in-memory fakes and a fixed clock: the first-run
//! link, sign-up without enumeration, verification, reset, every lifetime's edge and the
//! rolling limits.

use quire_accounts::SignInError;
use quire_signup::{
    ActivationMode, NewAccount, PasswordRule, ResetError, SetupError, SignUpError, SignUpMode,
    VerifyError,
};
use quire_testkit::World;
use quire_testkit::memory::Op;
use quire_testkit::world::BASE_URL;
use time::Duration;

use crate::common;
use common::{CLIENT, PASSWORD, form, open_world, token_in};

fn token_of_link(link: &str) -> String {
    link.rsplit_once("token=").unwrap().1.to_owned()
}

#[tokio::test]
async fn the_setup_link_creates_one_platform_admin_and_dies() {
    let w = open_world(&[]).await;
    let first_run = &w.services.first_run;
    assert!(first_run.needed().await.unwrap());
    let link = first_run.start_up_link().await.unwrap().unwrap();
    assert!(
        link.starts_with(&format!("{BASE_URL}/setup?token=")),
        "{link}"
    );
    // A second replica (or a restart) prints its own link; the first one used wins.
    let other = first_run.start_up_link().await.unwrap().unwrap();
    let token = token_of_link(&link);
    assert!(first_run.link_is_live(&token).await.unwrap());

    let admin = first_run
        .create_first_account(&token, &form("root@example.com", "root"))
        .await
        .unwrap();
    assert!(admin.is_platform_admin);
    assert!(admin.activated_at.is_some() && admin.email_verified_at.is_some());
    assert!(!first_run.needed().await.unwrap());
    assert_eq!(first_run.start_up_link().await.unwrap(), None);
    for used in [token, token_of_link(&other)] {
        assert!(!first_run.link_is_live(&used).await.unwrap());
        assert_eq!(
            first_run
                .create_first_account(&used, &form("two@example.com", "two"))
                .await
                .unwrap_err(),
            SetupError::AlreadySetUp
        );
    }
    assert_eq!(w.store.snapshot().accounts.len(), 1);
    // The admin signs in with the password chosen; no key exists until they create one.
    w.services
        .sessions
        .sign_in("root", PASSWORD, CLIENT)
        .await
        .unwrap();
    assert!(w.store.snapshot().keys.is_empty());
}

#[tokio::test]
async fn a_setup_link_lives_a_day_and_bad_input_changes_nothing() {
    let w = open_world(&[]).await;
    let first_run = &w.services.first_run;
    let token = token_of_link(&first_run.start_up_link().await.unwrap().unwrap());
    let before = w.store.snapshot();
    let weak = NewAccount {
        password: "short".into(),
        ..form("root@example.com", "root")
    };
    assert_eq!(
        first_run
            .create_first_account(&token, &weak)
            .await
            .unwrap_err(),
        SetupError::Password(PasswordRule::Length)
    );
    assert_eq!(
        first_run
            .create_first_account("not-the-token", &form("root@example.com", "root"))
            .await
            .unwrap_err(),
        SetupError::LinkRefused
    );
    assert_eq!(w.store.snapshot(), before);
    w.clock.advance(Duration::hours(24) - Duration::seconds(1));
    assert!(first_run.link_is_live(&token).await.unwrap());
    w.clock.advance(Duration::seconds(1));
    assert!(!first_run.link_is_live(&token).await.unwrap());
    assert_eq!(
        first_run
            .create_first_account(&token, &form("root@example.com", "root"))
            .await
            .unwrap_err(),
        SetupError::LinkRefused
    );
}

#[tokio::test]
async fn sign_up_is_closed_unless_opened() {
    let w = World::builder().build().await;
    assert_eq!(
        w.services
            .sign_up
            .sign_up(&form("new@example.com", "newbie"), CLIENT)
            .await
            .unwrap_err(),
        SignUpError::Closed
    );
    assert!(w.store.snapshot().accounts.is_empty());
}

#[tokio::test]
async fn a_known_address_gets_a_notice_and_a_new_one_a_link_with_the_same_answer() {
    let w = open_world(&["ann"]).await;
    let sign_up = &w.services.sign_up;
    let before = w.store.snapshot();
    assert_eq!(
        sign_up
            .sign_up(&form("ann@example.com", "ann2"), CLIENT)
            .await,
        Ok(())
    );
    let accounts_after_known = w.store.snapshot().accounts;
    assert_eq!(
        accounts_after_known, before.accounts,
        "no account for a known address"
    );
    assert_eq!(
        sign_up
            .sign_up(&form("bob@example.com", "bob"), CLIENT)
            .await,
        Ok(())
    );

    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].to.as_str(), "ann@example.com");
    assert!(
        sent[0].subject.contains("tried to sign up"),
        "{}",
        sent[0].subject
    );
    assert!(
        !sent[0].text.contains("token="),
        "a notice carries no link that acts"
    );
    assert_eq!(sent[1].to.as_str(), "bob@example.com");
    assert_eq!(sent[1].reply_to, "quire@quire.test");

    let bob = w
        .store
        .snapshot()
        .accounts
        .into_iter()
        .find(|a| a.handle.as_str() == "bob")
        .unwrap();
    assert_eq!(bob.email_verified_at, None);
    assert_eq!(
        bob.activated_at, None,
        "invitation is the default activation"
    );
    assert!(!bob.is_platform_admin);
    assert_eq!(
        w.services
            .sessions
            .sign_in("bob", PASSWORD, CLIENT)
            .await
            .unwrap_err(),
        SignInError::EmailNotVerified(Box::new(bob.clone()))
    );

    let token = token_in(&sent[1], quire_signup::VERIFY_PATH);
    assert!(sign_up.verification_is_live(&token).await.unwrap());
    sign_up.verify_email(&token).await.unwrap();
    assert_eq!(
        sign_up.verify_email(&token).await,
        Err(VerifyError::LinkRefused)
    );
    assert!(
        w.store.snapshot().sessions.is_empty(),
        "verifying signs nobody in"
    );
    w.services
        .sessions
        .sign_in("bob", PASSWORD, CLIENT)
        .await
        .unwrap();
}

#[tokio::test]
async fn handles_are_public_so_a_taken_one_shows_and_bad_input_stores_nothing() {
    let w = open_world(&["ann"]).await;
    let sign_up = &w.services.sign_up;
    let before = w.store.snapshot();
    assert_eq!(
        sign_up
            .sign_up(&form("new@example.com", "ann"), CLIENT)
            .await,
        Err(SignUpError::HandleTaken)
    );
    for (input, expected) in [
        (
            form("not-an-address", "newbie"),
            "not a valid email address",
        ),
        (form("ann@localhost", "newbie"), "address"),
        (form("new@example.com", "No Spaces"), "handle must be"),
    ] {
        let e = sign_up.sign_up(&input, CLIENT).await.unwrap_err();
        assert!(e.to_string().contains(expected), "{e}");
    }
    let weak = NewAccount {
        password: "passwordpassword".into(),
        ..form("new@example.com", "newbie")
    };
    assert_eq!(
        sign_up.sign_up(&weak, CLIENT).await,
        Err(SignUpError::Password(PasswordRule::Blocklisted))
    );
    assert_eq!(w.store.snapshot().accounts, before.accounts);
    assert!(w.mailer.sent().is_empty());
}

#[tokio::test]
async fn with_activation_none_a_signed_up_account_is_active_once_verified() {
    let w = World::builder()
        .settings(|s| {
            s.sign_up = SignUpMode::Open;
            s.activation = ActivationMode::None;
        })
        .build()
        .await;
    w.services
        .sign_up
        .sign_up(&form("cat@example.com", "cat"), CLIENT)
        .await
        .unwrap();
    let cat = w.store.snapshot().accounts.pop().unwrap();
    assert!(cat.activated_at.is_some());
    assert_eq!(cat.email_verified_at, None);
}

#[tokio::test]
async fn a_verification_link_lives_24_hours_and_a_resend_voids_the_older() {
    let w = open_world(&[]).await;
    let sign_up = &w.services.sign_up;
    sign_up
        .sign_up(&form("dan@example.com", "dan"), CLIENT)
        .await
        .unwrap();
    let first = token_in(&w.mailer.sent()[0], quire_signup::VERIFY_PATH);
    w.clock.advance(Duration::hours(24) - Duration::seconds(1));
    assert!(sign_up.verification_is_live(&first).await.unwrap());
    w.clock.advance(Duration::seconds(1));
    assert_eq!(
        sign_up.verify_email(&first).await,
        Err(VerifyError::LinkRefused)
    );

    // Signing in with the right password sends a new link, at most three an hour.
    let dan = match w.services.sessions.sign_in("dan", PASSWORD, CLIENT).await {
        Err(SignInError::EmailNotVerified(dan)) => dan,
        other => panic!("{other:?}"),
    };
    for _ in 0..3 {
        assert!(sign_up.resend_verification(&dan).await.unwrap());
    }
    assert!(!sign_up.resend_verification(&dan).await.unwrap());
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 4);
    let older = token_in(&sent[2], quire_signup::VERIFY_PATH);
    let newest = token_in(&sent[3], quire_signup::VERIFY_PATH);
    assert_eq!(
        sign_up.verify_email(&older).await,
        Err(VerifyError::LinkRefused)
    );
    sign_up.verify_email(&newest).await.unwrap();
}

#[tokio::test]
async fn sign_ups_are_limited_per_address_and_per_client_in_a_rolling_hour() {
    let w = open_world(&[]).await;
    let sign_up = &w.services.sign_up;
    for n in 0..3 {
        sign_up
            .sign_up(&form("eve@example.com", &format!("eve{n}")), CLIENT)
            .await
            .unwrap();
    }
    let limited = sign_up
        .sign_up(&form("eve@example.com", "eve9"), "198.51.100.1")
        .await;
    assert_eq!(
        limited,
        Err(SignUpError::RateLimited {
            retry_after_secs: 3600
        })
    );
    w.clock.advance(Duration::hours(1));
    sign_up
        .sign_up(&form("eve@example.com", "eve9"), "198.51.100.1")
        .await
        .unwrap();

    let w = open_world(&[]).await;
    let sign_up = &w.services.sign_up;
    for n in 0..10 {
        sign_up
            .sign_up(
                &form(&format!("p{n}@example.com"), &format!("person{n}")),
                CLIENT,
            )
            .await
            .unwrap();
    }
    assert!(matches!(
        sign_up
            .sign_up(&form("p10@example.com", "person10"), CLIENT)
            .await,
        Err(SignUpError::RateLimited { .. })
    ));
    assert_eq!(w.store.snapshot().accounts.len(), 10);
}

#[tokio::test]
async fn a_failed_write_stores_nothing_and_sends_nothing() {
    let w = World::builder()
        .settings(|s| s.sign_up = SignUpMode::Open)
        .failing(Op::SignUp)
        .build()
        .await;
    assert!(matches!(
        w.services
            .sign_up
            .sign_up(&form("fay@example.com", "fay"), CLIENT)
            .await,
        Err(SignUpError::Infra(_))
    ));
    assert!(w.store.snapshot().accounts.is_empty());
    assert!(w.mailer.sent().is_empty());
}

#[tokio::test]
async fn a_reset_sets_the_password_ends_every_session_and_notifies() {
    let w = open_world(&[]).await;
    w.services
        .sign_up
        .sign_up(&form("gus@example.com", "gus"), CLIENT)
        .await
        .unwrap();
    let verify = token_in(&w.mailer.sent()[0], quire_signup::VERIFY_PATH);
    w.services.sign_up.verify_email(&verify).await.unwrap();
    w.services
        .sessions
        .sign_in("gus", PASSWORD, CLIENT)
        .await
        .unwrap();
    w.services
        .sessions
        .sign_in("gus", PASSWORD, "192.0.2.9")
        .await
        .unwrap();
    assert_eq!(w.store.snapshot().sessions.len(), 2);

    let reset = &w.services.password_reset;
    reset.request("gus@example.com", CLIENT).await.unwrap();
    // Unknown addresses, and handles, get the same answer and no message.
    reset.request("nobody@example.com", CLIENT).await.unwrap();
    reset.request("gus", CLIENT).await.unwrap_err();
    let sent = w.mailer.sent();
    assert_eq!(sent.len(), 2, "one verification, one reset link");
    let token = token_in(&sent[1], quire_signup::NEW_PASSWORD_PATH);

    assert_eq!(
        reset.reset(&token, "i am gus@example.com, ok").await,
        Err(ResetError::Password(PasswordRule::ContainsIdentity))
    );
    assert!(
        reset.link_is_live(&token).await.unwrap(),
        "a refused password spends nothing"
    );
    reset.reset(&token, "another long sentence").await.unwrap();
    assert!(
        w.store.snapshot().sessions.is_empty(),
        "every session ended"
    );
    assert_eq!(
        reset.reset(&token, "yet another sentence").await,
        Err(ResetError::LinkRefused)
    );
    let notice = w.mailer.sent().pop().unwrap();
    assert!(
        notice.subject.contains("password was changed"),
        "{}",
        notice.subject
    );
    assert_eq!(
        w.services
            .sessions
            .sign_in("gus", PASSWORD, CLIENT)
            .await
            .unwrap_err(),
        SignInError::WrongCredentials
    );
    w.services
        .sessions
        .sign_in("gus", "another long sentence", CLIENT)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_reset_link_lives_an_hour_and_a_newer_one_voids_it() {
    let w = open_world(&["hal"]).await;
    let reset = &w.services.password_reset;
    reset.request("hal@example.com", CLIENT).await.unwrap();
    reset.request("hal@example.com", CLIENT).await.unwrap();
    let sent = w.mailer.sent();
    let (older, newer) = (
        token_in(&sent[0], quire_signup::NEW_PASSWORD_PATH),
        token_in(&sent[1], quire_signup::NEW_PASSWORD_PATH),
    );
    assert!(!reset.link_is_live(&older).await.unwrap());
    w.clock.advance(Duration::hours(1) - Duration::seconds(1));
    assert!(reset.link_is_live(&newer).await.unwrap());
    w.clock.advance(Duration::seconds(1));
    assert_eq!(
        reset.reset(&newer, "a fine new password").await,
        Err(ResetError::LinkRefused)
    );
    // The janitor forgets links once they expired, used or not.
    assert_eq!(w.services.sign_up.sweep().await.unwrap(), 0);
    w.clock.advance(Duration::seconds(1));
    assert_eq!(w.services.sign_up.sweep().await.unwrap(), 2);
}

#[tokio::test]
async fn reset_requests_are_limited_alike_for_known_and_unknown_addresses() {
    let w = open_world(&["ida"]).await;
    let reset = &w.services.password_reset;
    for email in ["ida@example.com", "nobody@example.com"] {
        for _ in 0..3 {
            reset.request(email, CLIENT).await.unwrap();
        }
        assert_eq!(
            reset.request(email, CLIENT).await,
            Err(ResetError::RateLimited {
                retry_after_secs: 3600
            })
        );
    }
}
