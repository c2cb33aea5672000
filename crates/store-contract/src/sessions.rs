//! Dashboard sessions: lookups by login and hash, TOTP enrollment and steps used once,
//! recovery codes spent once, the factor turned off, legacy secrets resealed, expiry.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_accounts::SessionStore;
use quire_accounts::{RecoveryCodes, SealedSecret, SealingKey, Session, TotpSecret};
use quire_kernel::AccountId;
use quire_kernel::Clock;
use time::Duration;

use super::support::seed;
use quire_testkit::fixtures::FixedClock;

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
    clock.advance(Duration::seconds(1));
    let bob = seed(&s, &clock, "bob").await;
    let all: Vec<_> = s
        .accounts()
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.id)
        .collect();
    assert_eq!(all, vec![ann.account.id, bob.account.id], "oldest first");
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
        pending_totp: None,
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
        pending_totp: None,
    };
    let (enrolling, other) = (session('a', true), session('b', true));
    s.insert_session(&enrolling).await.unwrap();
    s.insert_session(&other).await.unwrap();
    // A step before enrollment is refused: there is no factor to use it with.
    assert!(!s.use_totp_step(ann.account.id, 5).await.unwrap());

    let key = SealingKey::ephemeral();
    let secret = key.seal_totp(ann.account.id, &TotpSecret::generate());
    s.set_pending_totp(&enrolling.id_hash, Some(&secret))
        .await
        .unwrap();
    assert_eq!(
        s.session_by_hash(&enrolling.id_hash)
            .await
            .unwrap()
            .unwrap()
            .pending_totp,
        Some(secret.clone())
    );
    let codes = RecoveryCodes::generate().hashes();
    assert!(
        s.enroll_totp(
            ann.account.id,
            &secret,
            100,
            &enrolling.id_hash,
            &codes,
            clock.now()
        )
        .await
        .unwrap()
    );
    let stored = s.account_by_id(ann.account.id).await.unwrap().unwrap();
    assert_eq!(stored.totp_secret, Some(secret.clone()));
    assert_eq!(s.recovery_codes_left(ann.account.id).await.unwrap(), 10);
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
    assert_eq!(
        s.session_by_hash(&enrolling.id_hash)
            .await
            .unwrap()
            .unwrap()
            .pending_totp,
        None,
        "the pending secret is forgotten once enrolled"
    );
    assert!(
        !satisfied(other.id_hash.clone()).await,
        "other sessions must give the code"
    );
    let another = key.seal_totp(ann.account.id, &TotpSecret::generate());
    assert!(
        !s.enroll_totp(ann.account.id, &another, 200, "", &[], clock.now())
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
    assert_eq!(s.recovery_codes_left(ann.account.id).await.unwrap(), 10);

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

pub(super) async fn recovery_codes_are_spent_once_and_the_factor_comes_off<
    S: AccountStore + SessionStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let id = ann.account.id;
    let session = |hash: char| Session {
        id_hash: hash.to_string().repeat(64),
        account_id: id,
        mfa_satisfied: false,
        created_at: clock.now(),
        expires_at: clock.now() + Duration::hours(12),
        pending_totp: None,
    };
    s.insert_session(&session('c')).await.unwrap();
    s.insert_session(&session('d')).await.unwrap();
    let codes = RecoveryCodes::generate().hashes();
    assert!(
        !s.replace_recovery_codes(id, &codes, clock.now())
            .await
            .unwrap(),
        "no codes without a factor"
    );
    assert!(!s.remove_totp(id).await.unwrap());
    let secret = SealingKey::ephemeral().seal_totp(id, &TotpSecret::generate());
    assert!(
        s.enroll_totp(id, &secret, 7, "", &codes, clock.now())
            .await
            .unwrap()
    );

    assert!(
        !s.use_recovery_code(bob.account.id, &codes[0], clock.now())
            .await
            .unwrap()
    );
    assert!(
        s.use_recovery_code(id, &codes[0], clock.now())
            .await
            .unwrap()
    );
    assert!(
        !s.use_recovery_code(id, &codes[0], clock.now())
            .await
            .unwrap()
    );
    assert!(
        !s.use_recovery_code(id, &"0".repeat(64), clock.now())
            .await
            .unwrap()
    );
    assert_eq!(s.recovery_codes_left(id).await.unwrap(), 9);

    let fresh = RecoveryCodes::generate().hashes();
    assert!(
        s.replace_recovery_codes(id, &fresh, clock.now())
            .await
            .unwrap()
    );
    assert_eq!(s.recovery_codes_left(id).await.unwrap(), 10);
    assert!(
        !s.use_recovery_code(id, &codes[1], clock.now())
            .await
            .unwrap(),
        "replaced codes stop working"
    );

    assert!(s.remove_totp(id).await.unwrap());
    let account = s.account_by_id(id).await.unwrap().unwrap();
    assert_eq!(account.totp_secret, None);
    assert_eq!(s.recovery_codes_left(id).await.unwrap(), 0);
    assert!(
        !s.use_recovery_code(id, &fresh[0], clock.now())
            .await
            .unwrap()
    );
    assert!(!s.use_totp_step(id, 8).await.unwrap());
    for hash in ['c', 'd'] {
        let x = s
            .session_by_hash(&hash.to_string().repeat(64))
            .await
            .unwrap()
            .unwrap();
        assert!(x.mfa_satisfied, "without a factor the password is enough");
    }
    assert!(!s.remove_totp(id).await.unwrap());

    // Other sessions end; this one and other accounts' stay.
    s.insert_session(&Session {
        account_id: bob.account.id,
        ..session('e')
    })
    .await
    .unwrap();
    assert_eq!(
        s.delete_other_sessions(id, &"c".repeat(64)).await.unwrap(),
        1
    );
    assert!(s.session_by_hash(&"c".repeat(64)).await.unwrap().is_some());
    assert!(s.session_by_hash(&"d".repeat(64)).await.unwrap().is_none());
    assert!(s.session_by_hash(&"e".repeat(64)).await.unwrap().is_some());
}

pub(super) async fn legacy_secrets_are_listed_and_resealed_once<
    S: AccountStore + SessionStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let key = SealingKey::ephemeral();
    let bare = TotpSecret::generate();
    let legacy = SealedSecret::stored(bare.expose().to_owned());
    s.enroll_totp(ann.account.id, &legacy, 1, "", &[], clock.now())
        .await
        .unwrap();
    let sealed = key.seal_totp(bob.account.id, &TotpSecret::generate());
    s.enroll_totp(bob.account.id, &sealed, 1, "", &[], clock.now())
        .await
        .unwrap();
    assert_eq!(
        s.legacy_totp_secrets().await.unwrap(),
        vec![(ann.account.id, legacy.clone())]
    );
    let resealed = key.seal_totp(ann.account.id, &bare);
    assert!(
        s.reseal_totp(ann.account.id, &legacy, &resealed)
            .await
            .unwrap()
    );
    assert!(
        !s.reseal_totp(ann.account.id, &legacy, &resealed)
            .await
            .unwrap(),
        "a replica that lost the race changes nothing"
    );
    assert_eq!(s.legacy_totp_secrets().await.unwrap(), vec![]);
    let stored = s.account_by_id(ann.account.id).await.unwrap().unwrap();
    assert_eq!(
        key.open_totp(ann.account.id, &stored.totp_secret.unwrap()),
        Ok(bare)
    );
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
            pending_totp: None,
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
