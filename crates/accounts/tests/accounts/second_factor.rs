//! TOTP enrollment (the pending secret kept sealed with the session), the second step of
//! sign-in, recovery codes, turning the factor off and sealing legacy secrets, against the
//! in-memory fakes with a fixed clock. The budget of wrong codes is in `throttle`.

mod throttle;

use std::sync::Arc;

use quire_accounts::{
    AccountService, AccountStore, CreateAccount, SealedSecret, SealingKey, SecondFactorError,
    SessionService, SignedIn, TotpSecret,
};
use quire_kernel::Clock;
use quire_testkit::fixtures::new_account;
use quire_testkit::memory::Op;
use quire_testkit::{FixedClock, MemoryStore, ThreadOffload};
use time::Duration;

const IP: &str = "192.0.2.1";
const PASSWORD: &str = "correct horse battery";

struct World {
    store: Arc<MemoryStore>,
    clock: Arc<FixedClock>,
    key: SealingKey,
    sessions: SessionService,
}

impl World {
    async fn new() -> Self {
        let store = Arc::new(MemoryStore::new());
        let clock = Arc::new(FixedClock::new());
        AccountService::new(store.clone(), clock.clone(), Arc::new(ThreadOffload))
            .create(CreateAccount {
                password: Some(PASSWORD.into()),
                ..new_account("ann")
            })
            .await
            .unwrap();
        let key = SealingKey::ephemeral();
        let sessions = SessionService::new(
            store.clone(),
            store.clone(),
            store.clone(),
            clock.clone(),
            Arc::new(ThreadOffload),
            key.clone(),
        );
        Self {
            store,
            clock,
            key,
            sessions,
        }
    }

    async fn sign_in(&self) -> SignedIn {
        self.sessions.sign_in("ann", PASSWORD, IP).await.unwrap()
    }

    /// Enrolls a fresh secret from a new session and moves past the step it used; returns
    /// the secret and the recovery codes.
    async fn enroll_with_codes(&self) -> (TotpSecret, Vec<String>) {
        let signed = self.sign_in().await;
        let (session, account) = self.sessions.current(&signed.token).await.unwrap().unwrap();
        let secret = self
            .sessions
            .pending_enrollment(&session, &account)
            .await
            .unwrap();
        let (session, account) = self.sessions.reload(&session).await.unwrap().unwrap();
        let code = secret.code_at(self.clock.now());
        let codes = self
            .sessions
            .confirm_enrollment(&session, &account, &code, IP)
            .await
            .unwrap();
        self.clock.advance(Duration::seconds(30));
        (secret, codes.expose().to_vec())
    }

    async fn enroll(&self) -> TotpSecret {
        self.enroll_with_codes().await.0
    }

    async fn ann(&self) -> quire_accounts::Account {
        self.store.snapshot().accounts[0].clone()
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
            .give_second_factor(&session, &account, "000000", IP)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode
    );
    assert!(!w.satisfied(&signed).await);
    let code = secret.code_at(w.clock.now());
    w.sessions
        .give_second_factor(&session, &account, &code, IP)
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
        .give_second_factor(&session, &account, &code, IP)
        .await
        .unwrap();

    let second = w.sign_in().await;
    let (session, account) = w.sessions.current(&second.token).await.unwrap().unwrap();
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &account, &code, IP)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode,
        "a replayed code must not satisfy another session"
    );
    assert!(!w.satisfied(&second).await);
    w.clock.advance(Duration::seconds(30));
    let next = secret.code_at(w.clock.now());
    w.sessions
        .give_second_factor(&session, &account, &next, IP)
        .await
        .unwrap();
}

#[tokio::test]
async fn enrollment_errors_change_nothing() {
    let w = World::new().await;
    let signed = w.sign_in().await;
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    assert_eq!(
        w.sessions
            .confirm_enrollment(&session, &account, "123456", IP)
            .await
            .unwrap_err(),
        SecondFactorError::NotStarted,
        "a session that showed no secret has nothing to confirm"
    );
    let secret = w
        .sessions
        .pending_enrollment(&session, &account)
        .await
        .unwrap();
    let (session, account) = w.sessions.reload(&session).await.unwrap().unwrap();
    let code = secret.code_at(w.clock.now());
    assert_eq!(
        w.sessions
            .confirm_enrollment(&session, &account, "123", IP)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode
    );
    w.store.fail(Op::EnrollTotp);
    assert!(matches!(
        w.sessions
            .confirm_enrollment(&session, &account, &code, IP)
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
        .confirm_enrollment(&session, &account, &code, IP)
        .await
        .unwrap();
    let account = w.ann().await;
    assert_eq!(
        w.sessions
            .confirm_enrollment(&session, &account, &code, IP)
            .await
            .unwrap_err(),
        SecondFactorError::AlreadyEnrolled
    );
    let (_, fresh) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &fresh, &code, IP)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode,
        "the enrolling code is spent"
    );
}

#[tokio::test]
async fn the_pending_secret_stays_with_its_session_and_both_are_stored_sealed() {
    let w = World::new().await;
    let signed = w.sign_in().await;
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    let first = w
        .sessions
        .pending_enrollment(&session, &account)
        .await
        .unwrap();
    let (session, account) = w.sessions.reload(&session).await.unwrap().unwrap();
    let pending = session.pending_totp.clone().unwrap();
    assert!(!pending.as_stored().contains(first.expose()));
    assert_eq!(
        w.sessions
            .pending_enrollment(&session, &account)
            .await
            .unwrap(),
        first,
        "a reload shows the secret already scanned"
    );
    let other = w.sign_in().await;
    let (other, _) = w.sessions.current(&other.token).await.unwrap().unwrap();
    assert_ne!(
        w.sessions
            .pending_enrollment(&other, &account)
            .await
            .unwrap(),
        first,
        "each session enrolls its own secret"
    );

    w.sessions
        .confirm_enrollment(&session, &account, &first.code_at(w.clock.now()), IP)
        .await
        .unwrap();
    let stored = w.ann().await.totp_secret.unwrap();
    assert!(!stored.is_legacy());
    assert!(!stored.as_stored().contains(first.expose()));
    assert_eq!(w.key.open_totp(account.id, &stored), Ok(first));
    let (session, _) = w.sessions.reload(&session).await.unwrap().unwrap();
    assert_eq!(session.pending_totp, None);
}

#[tokio::test]
async fn a_recovery_code_stands_in_for_the_app_once() {
    let w = World::new().await;
    let (_, codes) = w.enroll_with_codes().await;
    assert_eq!(codes.len(), 10);
    let account = w.ann().await;
    assert_eq!(w.sessions.recovery_codes_left(&account).await.unwrap(), 10);

    let signed = w.sign_in().await;
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &account, "aaaa-bbbb-cccc-dddd", IP)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode
    );
    w.sessions
        .give_second_factor(&session, &account, &codes[4].to_uppercase(), IP)
        .await
        .unwrap();
    assert!(w.satisfied(&signed).await);
    assert_eq!(w.sessions.recovery_codes_left(&account).await.unwrap(), 9);

    let again = w.sign_in().await;
    let (session, account) = w.sessions.current(&again.token).await.unwrap().unwrap();
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &account, &codes[4], IP)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode,
        "a recovery code works once"
    );
    assert!(!w.satisfied(&again).await);
}

#[tokio::test]
async fn new_recovery_codes_need_a_code_and_retire_the_old_ones() {
    let w = World::new().await;
    let (secret, old) = w.enroll_with_codes().await;
    let account = w.ann().await;
    assert_eq!(
        w.sessions
            .new_recovery_codes(&account, "000000", IP)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode
    );
    let fresh = w
        .sessions
        .new_recovery_codes(&account, &secret.code_at(w.clock.now()), IP)
        .await
        .unwrap();
    assert!(fresh.expose().iter().all(|c| !old.contains(c)));
    let signed = w.sign_in().await;
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &account, &old[0], IP)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode
    );
    w.sessions
        .give_second_factor(&session, &account, &fresh.expose()[0], IP)
        .await
        .unwrap();
}

#[tokio::test]
async fn turning_the_factor_off_takes_a_code_and_then_the_password_is_enough() {
    let w = World::new().await;
    let (secret, codes) = w.enroll_with_codes().await;
    let halfway = w.sign_in().await;
    assert!(!halfway.session.mfa_satisfied);
    let account = w.ann().await;
    assert_eq!(
        w.sessions
            .turn_off_second_factor(&account, "000000", IP)
            .await
            .unwrap_err(),
        SecondFactorError::WrongCode
    );
    w.store.fail(Op::RemoveTotp);
    assert!(matches!(
        w.sessions
            .turn_off_second_factor(&account, &codes[0], IP)
            .await
            .unwrap_err(),
        SecondFactorError::Infra(_)
    ));
    w.store.heal();
    assert!(w.ann().await.totp_secret.is_some());

    w.sessions
        .turn_off_second_factor(&account, &secret.code_at(w.clock.now()), IP)
        .await
        .unwrap();
    let account = w.ann().await;
    assert_eq!(account.totp_secret, None);
    assert_eq!(w.sessions.recovery_codes_left(&account).await.unwrap(), 0);
    assert!(
        w.satisfied(&halfway).await,
        "a session that owed the code needs only the password now"
    );
    assert!(w.sign_in().await.session.mfa_satisfied);
    assert_eq!(
        w.sessions
            .turn_off_second_factor(&account, &codes[1], IP)
            .await
            .unwrap_err(),
        SecondFactorError::NotEnrolled
    );
}

#[tokio::test]
async fn other_sessions_are_signed_out_and_this_one_stays() {
    let w = World::new().await;
    let here = w.sign_in().await;
    w.sign_in().await;
    w.sign_in().await;
    assert_eq!(w.sessions.sign_out_others(&here.session).await.unwrap(), 2);
    assert_eq!(w.store.snapshot().sessions.len(), 1);
    assert!(w.sessions.current(&here.token).await.unwrap().is_some());
}

#[tokio::test]
async fn secrets_stored_bare_are_sealed_at_start_up() {
    let w = World::new().await;
    let account = w.ann().await;
    let bare = TotpSecret::generate();
    let legacy = SealedSecret::stored(bare.expose().to_owned());
    w.store
        .enroll_totp(account.id, &legacy, 1, "", &[], w.clock.now())
        .await
        .unwrap();
    // Until sealed, the bare secret still works (nobody is locked out by the upgrade).
    w.clock.advance(Duration::seconds(60));
    let signed = w.sign_in().await;
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    w.sessions
        .give_second_factor(&session, &account, &bare.code_at(w.clock.now()), IP)
        .await
        .unwrap();

    assert_eq!(w.sessions.seal_legacy_secrets().await.unwrap(), 1);
    assert_eq!(w.sessions.seal_legacy_secrets().await.unwrap(), 0);
    let stored = w.ann().await.totp_secret.unwrap();
    assert!(!stored.is_legacy());
    assert_eq!(w.key.open_totp(account.id, &stored), Ok(bare));
}

#[tokio::test]
async fn accounts_without_a_factor_cannot_give_one_and_expired_sessions_are_swept() {
    let w = World::new().await;
    let signed = w.sign_in().await;
    let (session, account) = w.sessions.current(&signed.token).await.unwrap().unwrap();
    assert_eq!(
        w.sessions
            .give_second_factor(&session, &account, "123456", IP)
            .await
            .unwrap_err(),
        SecondFactorError::NotEnrolled
    );
    assert_eq!(w.sessions.sweep_expired().await.unwrap(), 0);
    w.clock.advance(Duration::hours(12));
    assert_eq!(w.sessions.sweep_expired().await.unwrap(), 1);
    assert!(w.store.snapshot().sessions.is_empty());
}
