//! Password sign-in, sessions and sign-out against the in-memory fakes.

use std::sync::Arc;

use quire_accounts::{
    AccountService, CreateAccount, SealingKey, SessionService, SessionToken, SetPasswordError,
    SignInError,
};
use quire_kernel::Clock;
use quire_testkit::fixtures::new_account;
use quire_testkit::{FixedClock, Heartbeats, MemoryStore, ThreadOffload};
use time::Duration;

const IP: &str = "192.0.2.1";
const PASSWORD: &str = "correct horse battery";

async fn setup() -> (
    Arc<MemoryStore>,
    Arc<FixedClock>,
    SessionService,
    AccountService,
) {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(FixedClock::new());
    let accounts = AccountService::new(store.clone(), clock.clone(), Arc::new(ThreadOffload));
    accounts
        .create(CreateAccount {
            password: Some(PASSWORD.into()),
            ..new_account("ann")
        })
        .await
        .unwrap();
    accounts
        .create(CreateAccount {
            password: Some(PASSWORD.into()),
            activated: false,
            ..new_account("dormant")
        })
        .await
        .unwrap();
    accounts.create(new_account("nopass")).await.unwrap();
    let sessions = SessionService::new(
        store.clone(),
        store.clone(),
        store.clone(),
        clock.clone(),
        Arc::new(ThreadOffload),
        SealingKey::ephemeral(),
    );
    (store, clock, sessions, accounts)
}

#[tokio::test]
async fn sign_in_by_email_or_handle_makes_a_session_stored_hashed() {
    let (store, clock, sessions, _) = setup().await;
    for login in ["ann", "ANN@example.com ", "ann@example.com"] {
        let signed = sessions.sign_in(login, PASSWORD, IP).await.unwrap();
        let stored = store.snapshot().sessions;
        let last = stored.last().unwrap();
        assert_eq!(last.id_hash, signed.token.hash());
        assert_ne!(last.id_hash, signed.token.expose());
        assert!(last.mfa_satisfied, "no second factor is enrolled");
        let (session, account) = sessions.current(&signed.token).await.unwrap().unwrap();
        assert_eq!(account.handle.as_str(), "ann");
        assert_eq!(session.expires_at, clock.now() + Duration::hours(12));
    }
}

#[tokio::test]
async fn wrong_passwords_unknown_logins_and_missing_passwords_look_alike() {
    let (store, _, sessions, _) = setup().await;
    for (login, password) in [
        ("ann", "wrong password"),
        ("nobody", PASSWORD),
        ("nopass", ""),
    ] {
        assert_eq!(
            sessions.sign_in(login, password, IP).await.unwrap_err(),
            SignInError::WrongCredentials,
            "{login}"
        );
    }
    assert!(store.snapshot().sessions.is_empty());
}

#[tokio::test]
async fn an_account_not_yet_activated_signs_in_to_activate_itself() {
    let (store, _, sessions, _) = setup().await;
    let signed = sessions.sign_in("dormant", PASSWORD, IP).await.unwrap();
    let (_, account) = sessions.current(&signed.token).await.unwrap().unwrap();
    assert_eq!(account.handle.as_str(), "dormant");
    assert_eq!(account.activated_at, None);
    assert_eq!(store.snapshot().sessions.len(), 1);
}

#[tokio::test]
async fn guessing_from_elsewhere_does_not_lock_the_owner_out() {
    let (_, clock, sessions, _) = setup().await;
    for i in 0..10 {
        assert_eq!(
            sessions
                .sign_in("ann", "guess", &format!("198.51.100.{i}"))
                .await
                .unwrap_err(),
            SignInError::WrongCredentials
        );
    }
    // The account's budget is spent: the addresses that failed are refused, even the right
    // password, and nothing is checked.
    for password in ["guess", PASSWORD] {
        assert!(matches!(
            sessions
                .sign_in("ann", password, "198.51.100.3")
                .await
                .unwrap_err(),
            SignInError::Throttled { .. }
        ));
    }
    assert_eq!(
        sessions
            .sign_in("ann", PASSWORD, "198.51.100.3")
            .await
            .unwrap_err(),
        SignInError::Throttled {
            retry_after_secs: 900
        },
        "back when the failures are 15 minutes old"
    );
    // The owner, from an address that has not failed, signs in.
    assert!(
        sessions
            .sign_in("ann", PASSWORD, "203.0.113.9")
            .await
            .is_ok()
    );
    // A new address gets one try, and is refused once it has failed.
    assert_eq!(
        sessions
            .sign_in("ann", "guess", "203.0.113.10")
            .await
            .unwrap_err(),
        SignInError::WrongCredentials
    );
    assert!(matches!(
        sessions
            .sign_in("ann", PASSWORD, "203.0.113.10")
            .await
            .unwrap_err(),
        SignInError::Throttled { .. }
    ));
    clock.advance(Duration::minutes(15));
    assert!(
        sessions
            .sign_in("ann", PASSWORD, "198.51.100.3")
            .await
            .is_ok(),
        "the failures age out"
    );
}

#[tokio::test]
async fn the_email_and_the_handle_share_the_accounts_budget() {
    let (_, _, sessions, _) = setup().await;
    for _ in 0..10 {
        let _ = sessions.sign_in("ann", "guess", IP).await;
    }
    for login in ["ann@example.com", " ANN@Example.com", "ann"] {
        assert!(
            matches!(
                sessions.sign_in(login, "guess", IP).await.unwrap_err(),
                SignInError::Throttled { .. }
            ),
            "{login}"
        );
    }
}

#[tokio::test]
async fn only_failures_count() {
    let (_, _, sessions, _) = setup().await;
    // More right passwords than either budget holds, then wrong ones still checked.
    for _ in 0..40 {
        sessions.sign_in("ann", PASSWORD, IP).await.unwrap();
    }
    for _ in 0..10 {
        assert_eq!(
            sessions.sign_in("ann", "guess", IP).await.unwrap_err(),
            SignInError::WrongCredentials
        );
    }
    // A right password does not give back the failures before it.
    let _ = sessions.sign_in("dormant", PASSWORD, IP).await.unwrap();
    assert!(matches!(
        sessions.sign_in("ann", PASSWORD, IP).await.unwrap_err(),
        SignInError::Throttled { .. }
    ));
}

#[tokio::test]
async fn an_address_that_guesses_many_logins_is_refused_everything() {
    let (_, _, sessions, _) = setup().await;
    for i in 0..30 {
        assert_eq!(
            sessions
                .sign_in(&format!("user{i}"), "guess", "203.0.113.50")
                .await
                .unwrap_err(),
            SignInError::WrongCredentials
        );
    }
    assert!(matches!(
        sessions
            .sign_in("ann", PASSWORD, "203.0.113.50")
            .await
            .unwrap_err(),
        SignInError::Throttled { .. }
    ));
    // An IPv6 client is budgeted by its /64.
    for i in 0..30 {
        let _ = sessions
            .sign_in(&format!("user{i}"), "guess", &format!("2001:db8::{i:x}"))
            .await;
    }
    assert!(matches!(
        sessions
            .sign_in("ann", PASSWORD, "2001:db8::ffff")
            .await
            .unwrap_err(),
        SignInError::Throttled { .. }
    ));
    assert!(
        sessions
            .sign_in("ann", PASSWORD, "2001:db8:0:1::1")
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn unknown_logins_are_budgeted_like_accounts() {
    let (_, _, sessions, _) = setup().await;
    for i in 0..10 {
        let _ = sessions
            .sign_in("nobody", "guess", &format!("198.51.100.{i}"))
            .await;
    }
    assert!(matches!(
        sessions
            .sign_in("nobody", "guess", "198.51.100.1")
            .await
            .unwrap_err(),
        SignInError::Throttled { .. }
    ));
    assert_eq!(
        sessions
            .sign_in("nobody", "guess", "203.0.113.9")
            .await
            .unwrap_err(),
        SignInError::WrongCredentials
    );
}

#[tokio::test]
async fn a_browser_holding_a_session_of_the_account_gets_past_a_spent_budget() {
    let (_, _, sessions, _) = setup().await;
    let held = sessions.sign_in("ann", PASSWORD, IP).await.unwrap();
    let other = sessions.sign_in("dormant", PASSWORD, IP).await.unwrap();
    for _ in 0..10 {
        let _ = sessions.sign_in("ann", "guess", IP).await;
    }
    assert!(matches!(
        sessions.sign_in("ann", PASSWORD, IP).await.unwrap_err(),
        SignInError::Throttled { .. }
    ));
    assert!(
        matches!(
            sessions
                .sign_in_holding("ann", PASSWORD, IP, Some(&other.token))
                .await
                .unwrap_err(),
            SignInError::Throttled { .. }
        ),
        "another account's session is no way past"
    );
    assert!(
        sessions
            .sign_in_holding("ann", PASSWORD, IP, Some(&held.token))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn sessions_expire_and_sign_out_ends_them() {
    let (_, clock, sessions, _) = setup().await;
    let a = sessions.sign_in("ann", PASSWORD, IP).await.unwrap();
    let b = sessions.sign_in("ann", PASSWORD, IP).await.unwrap();
    sessions.sign_out(&a.token).await.unwrap();
    assert!(sessions.current(&a.token).await.unwrap().is_none());
    assert!(
        sessions.current(&b.token).await.unwrap().is_some(),
        "other sessions stay"
    );
    assert!(
        sessions
            .current(&SessionToken::generate())
            .await
            .unwrap()
            .is_none()
    );
    clock.advance(Duration::hours(12));
    assert!(
        sessions.current(&b.token).await.unwrap().is_none(),
        "expired at 12 h"
    );
}

#[tokio::test]
async fn operators_set_passwords() {
    let (_, _, sessions, accounts) = setup().await;
    accounts
        .set_password("nopass@example.com", "a brand new one")
        .await
        .unwrap();
    assert!(
        sessions
            .sign_in("nopass", "a brand new one", IP)
            .await
            .is_ok()
    );
    assert_eq!(
        accounts
            .set_password("nobody", "a brand new one")
            .await
            .unwrap_err(),
        SetPasswordError::UnknownAccount
    );
    assert!(matches!(
        accounts.set_password("ann", "short").await,
        Err(SetPasswordError::InvalidPassword(_))
    ));
    assert!(
        sessions.sign_in("ann", PASSWORD, IP).await.is_ok(),
        "refused change left the old password"
    );
}

// `tokio::test` runs on one worker thread: the heartbeat and the sign-in share it.
#[tokio::test]
async fn passwords_are_verified_off_the_async_worker_for_known_and_unknown_logins() {
    let (store, clock, _, _) = setup().await;
    let offload = Arc::new(Heartbeats::new());
    let sessions = SessionService::new(
        store.clone(),
        store.clone(),
        store,
        clock,
        offload.clone(),
        SealingKey::ephemeral(),
    );
    let (signed, ()) = tokio::join!(sessions.sign_in("ann", PASSWORD, IP), offload.beat());
    assert!(signed.is_ok());
    assert_eq!(offload.jobs(), 1);
    // An unknown login and an account with no password cost the same verification, there.
    for login in ["nobody", "nopass"] {
        let (refused, ()) = tokio::join!(sessions.sign_in(login, PASSWORD, IP), offload.beat());
        assert_eq!(refused.unwrap_err(), SignInError::WrongCredentials);
    }
    assert_eq!(offload.jobs(), 3);
}
