//! Dashboard sessions: lookups by login and hash, TOTP enrollment and steps used once, expiry.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_accounts::SessionStore;
use quire_accounts::{Session, TotpSecret};
use quire_kernel::AccountId;
use quire_kernel::Clock;
use time::Duration;

use super::support::seed;
use crate::fixtures::FixedClock;

pub(super) async fn accounts_are_found_by_login_and_sessions_by_hash<
    S: AccountStore + SessionStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    assert_eq!(
        s.account_by_login("ann").await.unwrap().map(|a| a.id),
        Some(ann.account.id)
    );
    assert_eq!(
        s.account_by_login("ann@example.com")
            .await
            .unwrap()
            .map(|a| a.id),
        Some(ann.account.id)
    );
    assert_eq!(s.account_by_login("nobody").await.unwrap(), None);
    assert!(
        s.set_password_hash(ann.account.id, "$argon2id$stand-in")
            .await
            .unwrap()
    );
    assert_eq!(
        s.account_by_id(ann.account.id)
            .await
            .unwrap()
            .unwrap()
            .password_hash
            .as_deref(),
        Some("$argon2id$stand-in")
    );
    assert!(!s.set_password_hash(AccountId::new(), "x").await.unwrap());

    let session = Session {
        id_hash: "f".repeat(64),
        account_id: ann.account.id,
        mfa_satisfied: false,
        created_at: clock.now(),
        expires_at: clock.now() + Duration::hours(12),
    };
    s.insert_session(&session).await.unwrap();
    assert_eq!(
        s.session_by_hash(&session.id_hash).await.unwrap(),
        Some(session.clone())
    );
    assert_eq!(s.session_by_hash(&"0".repeat(64)).await.unwrap(), None);
    s.delete_session(&session.id_hash).await.unwrap();
    assert_eq!(s.session_by_hash(&session.id_hash).await.unwrap(), None);
    s.delete_session(&session.id_hash).await.unwrap();
}

pub(super) async fn totp_enrollment_is_once_and_steps_are_used_once<
    S: AccountStore + SessionStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let session = |hash: char, satisfied: bool| Session {
        id_hash: hash.to_string().repeat(64),
        account_id: ann.account.id,
        mfa_satisfied: satisfied,
        created_at: clock.now(),
        expires_at: clock.now() + Duration::hours(12),
    };
    let (enrolling, other) = (session('a', true), session('b', true));
    s.insert_session(&enrolling).await.unwrap();
    s.insert_session(&other).await.unwrap();
    // A step before enrollment is refused: there is no factor to use it with.
    assert!(!s.use_totp_step(ann.account.id, 5).await.unwrap());

    let secret = TotpSecret::generate();
    assert!(
        s.enroll_totp(ann.account.id, &secret, 100, &enrolling.id_hash)
            .await
            .unwrap()
    );
    let stored = s.account_by_id(ann.account.id).await.unwrap().unwrap();
    assert_eq!(stored.totp_secret, Some(secret.clone()));
    let satisfied = |hash: String| {
        let s = Arc::clone(&s);
        async move {
            s.session_by_hash(&hash)
                .await
                .unwrap()
                .unwrap()
                .mfa_satisfied
        }
    };
    assert!(satisfied(enrolling.id_hash.clone()).await);
    assert!(
        !satisfied(other.id_hash.clone()).await,
        "other sessions must give the code"
    );
    assert!(
        !s.enroll_totp(ann.account.id, &TotpSecret::generate(), 200, "")
            .await
            .unwrap(),
        "a second enrollment changes nothing"
    );
    assert_eq!(
        s.account_by_id(ann.account.id)
            .await
            .unwrap()
            .unwrap()
            .totp_secret,
        Some(secret)
    );

    // The enrolling step, and anything not later, is spent.
    assert!(!s.use_totp_step(ann.account.id, 100).await.unwrap());
    assert!(!s.use_totp_step(ann.account.id, 99).await.unwrap());
    assert!(s.use_totp_step(ann.account.id, 101).await.unwrap());
    assert!(!s.use_totp_step(ann.account.id, 101).await.unwrap());
    assert!(!s.use_totp_step(AccountId::new(), 500).await.unwrap());

    s.mark_mfa_satisfied(&other.id_hash).await.unwrap();
    assert!(satisfied(other.id_hash.clone()).await);
    s.mark_mfa_satisfied(&"9".repeat(64)).await.unwrap();
}

pub(super) async fn expired_sessions_are_swept<S: AccountStore + SessionStore + 'static>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    for (hash, hours) in [('1', 1), ('2', 2), ('3', 3)] {
        s.insert_session(&Session {
            id_hash: hash.to_string().repeat(64),
            account_id: ann.account.id,
            mfa_satisfied: true,
            created_at: clock.now(),
            expires_at: clock.now() + Duration::hours(hours),
        })
        .await
        .unwrap();
    }
    let at_two = clock.now() + Duration::hours(2);
    assert_eq!(s.delete_expired_sessions(at_two).await.unwrap(), 2);
    assert_eq!(s.session_by_hash(&"2".repeat(64)).await.unwrap(), None);
    assert!(s.session_by_hash(&"3".repeat(64)).await.unwrap().is_some());
    assert_eq!(s.delete_expired_sessions(at_two).await.unwrap(), 0);
}
