//! TOTP enrollment and the second step of sign-in, against the in-memory fakes with a
//! fixed clock.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::sync::Arc;

use quire_accounts::{
    AccountService, CreateAccount, SecondFactorError, SessionService, SignedIn, TotpSecret,
};
use quire_kernel::Clock;
use quire_testkit::fixtures::new_account;
use quire_testkit::memory::Op;
use quire_testkit::{FixedClock, MemoryStore};
use time::Duration;

const IP: &str = "192.0.2.1";
const PASSWORD: &str = "correct horse battery";

struct World {
    store: Arc<MemoryStore>,
    clock: Arc<FixedClock>,
    sessions: SessionService,
}

impl World {
    async fn new() -> Self {
        let store = Arc::new(MemoryStore::new());
        let clock = Arc::new(FixedClock::new());
        AccountService::new(store.clone(), clock.clone())
            .create(CreateAccount {
                password: Some(PASSWORD.into()),
                ..new_account("ann")
            })
            .await
            .unwrap();
        let sessions =
            SessionService::new(store.clone(), store.clone(), store.clone(), clock.clone());
        Self {
            store,
            clock,
            sessions,
        }
    }

    async fn sign_in(&self) -> SignedIn {
        self.sessions.sign_in("ann", PASSWORD, IP).await.unwrap()
    }

    /// Enrolls a fresh secret from a new session and moves past the step it used.
    async fn enroll(&self) -> TotpSecret {
        let signed = self.sign_in().await;
        let (session, account) = self.sessions.current(&signed.token).await.unwrap().unwrap();
        let secret = self.sessions.begin_enrollment();
        let code = secret.code_at(self.clock.now());
        self.sessions
            .confirm_enrollment(&session, &account, secret.expose(), &code)
            .await
            .unwrap();
        self.clock.advance(Duration::seconds(30));
        secret
    }

    async fn satisfied(&self, signed: &SignedIn) -> bool {
        let (session, _) = self.sessions.current(&signed.token).await.unwrap().unwrap();
        session.mfa_satisfied
    }
}

#[tokio::test]
async fn enrollment_needs_a_right_code_and_then_sign_in_needs_one_too() {
    let w = World::new().await;
    let before = w.sign_in().await;
    let secret = w.enroll().await;
    assert!(
        !w.satisfied(&before).await,
        "a session from before enrollment must now give the code"
    );

    let signed = w.sign_in().await;
    assert!(!signed.session.mfa_satisfied);
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &account, "000000")
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode
    );
    assert!(!w.satisfied(&signed).await);
    let code = secret.code_at(w.clock.now());
    w.sessions
        .give_second_factor(&session, &account, &code)
        .await
        .unwrap();
    assert!(w.satisfied(&signed).await);
}

#[tokio::test]
async fn a_code_is_accepted_once() {
    let w = World::new().await;
    let secret = w.enroll().await;
    let code = secret.code_at(w.clock.now());
    let first = w.sign_in().await;
    let (session, account) = w.sessions.current(&first.token).await.unwrap().unwrap();
    w.sessions
        .give_second_factor(&session, &account, &code)
        .await
        .unwrap();

    let second = w.sign_in().await;
    let (session, account) = w.sessions.current(&second.token).await.unwrap().unwrap();
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &account, &code)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode,
        "a replayed code must not satisfy another session"
    );
    assert!(!w.satisfied(&second).await);
    w.clock.advance(Duration::seconds(30));
    let next = secret.code_at(w.clock.now());
    w.sessions
        .give_second_factor(&session, &account, &next)
        .await
        .unwrap();
}

#[tokio::test]
async fn codes_are_throttled_per_account() {
    let w = World::new().await;
    let secret = w.enroll().await;
    let signed = w.sign_in().await;
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    // Enrolling spent one of the ten codes of this window.
    for _ in 0..9 {
        assert_eq!(
            w.sessions
                .give_second_factor(&session, &account, "999999")
                .await
                .unwrap_err(),
            SecondFactorError::WrongCode
        );
    }
    let right = secret.code_at(w.clock.now());
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &account, &right)
            .await
            .unwrap_err(),
        SecondFactorError::Throttled,
        "past 10 tries even the right code waits"
    );
    assert!(!w.satisfied(&signed).await);
}

#[tokio::test]
async fn enrollment_errors_change_nothing() {
    let w = World::new().await;
    let signed = w.sign_in().await;
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    let secret = w.sessions.begin_enrollment();
    let code = secret.code_at(w.clock.now());
    assert_eq!(
        w.sessions
            .confirm_enrollment(&session, &account, "not base32!", &code)
            .await
            .unwrap_err(),
        SecondFactorError::MalformedSecret
    );
    assert_eq!(
        w.sessions
            .confirm_enrollment(&session, &account, secret.expose(), "123")
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode
    );
    w.store.fail(Op::EnrollTotp);
    assert!(matches!(
        w.sessions
            .confirm_enrollment(&session, &account, secret.expose(), &code)
            .await
            .unwrap_err(),
        SecondFactorError::Infra(_)
    ));
    w.store.heal();
    assert!(
        w.store
            .snapshot()
            .accounts
            .iter()
            .all(|a| a.totp_secret.is_none())
    );

    w.sessions
        .confirm_enrollment(&session, &account, secret.expose(), &code)
        .await
        .unwrap();
    let account = w.store.snapshot().accounts[0].clone();
    assert_eq!(
        w.sessions
            .confirm_enrollment(&session, &account, secret.expose(), &code)
            .await
            .unwrap_err(),
        SecondFactorError::AlreadyEnrolled
    );
    let (_, fresh) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &fresh, &code)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode,
        "the enrolling code is spent"
    );
}

#[tokio::test]
async fn accounts_without_a_factor_cannot_give_one_and_expired_sessions_are_swept() {
    let w = World::new().await;
    let signed = w.sign_in().await;
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &account, "123456")
            .await
            .unwrap_err(),
        SecondFactorError::NotEnrolled
    );
    assert_eq!(w.sessions.sweep_expired().await.unwrap(), 0);
    w.clock.advance(Duration::hours(12));
    assert_eq!(w.sessions.sweep_expired().await.unwrap(), 1);
    assert!(w.store.snapshot().sessions.is_empty());
}
