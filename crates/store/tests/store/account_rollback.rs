//! Rollback of the account flows' multi-step writes (sign-up, verification, reset, the
//! first-run setup) and of the second factor's and the password change's: a fault injected
//! between two steps leaves nothing of the first, and the same write then succeeds.

use std::sync::Arc;

use quire_accounts::{AccountService, AccountStore};
use quire_kernel::{Clock, SystemClock};
use quire_store::Database;
use quire_testkit::ThreadOffload;

use crate::common;
use common::on_both_databases;

/// A fault inside each multi-step write of the account flows leaves no trace: no account
/// and no link after a failed sign-up, the link unspent after a failed verification or
/// reset (with the password and sessions as they were), no account after a failed setup.
async fn account_flows_roll_back(db: Database) {
    use quire_accounts::{Session, SessionStore, new_account};
    use quire_kernel::{Email, Handle};
    use quire_signup::{AccountToken, FirstAccount, LinkPurpose, SignupStore};

    db.migrate().await.expect("migrate");
    let now = SystemClock.now();
    let draft = |handle: &str| {
        new_account(
            Email::parse(&format!("{handle}@example.com")).unwrap(),
            Handle::parse(handle).unwrap(),
            Some("$before".into()),
            now,
        )
    };

    let (root, root_project) = draft("root");
    let (_, setup) = AccountToken::issue(LinkPurpose::Setup, None, now);
    db.issue_link(&setup).await.unwrap();
    for step in [
        "create_first_account:account",
        "create_first_account:project",
    ] {
        db.fail_at(step);
        assert!(
            db.create_first_account(&setup.hash, &root, &root_project, now)
                .await
                .is_err()
        );
        assert!(!db.has_accounts().await.unwrap(), "{step}");
        assert!(
            db.live_link(&setup.hash, now).await.unwrap().is_some(),
            "{step}"
        );
    }
    assert_eq!(
        db.create_first_account(&setup.hash, &root, &root_project, now)
            .await,
        Ok(FirstAccount::Created)
    );

    let (ann, ann_project) = draft("ann");
    let (_, verification) = AccountToken::issue(LinkPurpose::VerifyEmail, Some(ann.id), now);
    for step in ["sign_up:account", "sign_up:project"] {
        db.fail_at(step);
        assert!(db.sign_up(&ann, &ann_project, &verification).await.is_err());
        assert_eq!(db.account_by_id(ann.id).await.unwrap(), None, "{step}");
        assert_eq!(
            db.live_link(&verification.hash, now).await.unwrap(),
            None,
            "{step}"
        );
    }
    db.sign_up(&ann, &ann_project, &verification).await.unwrap();

    db.fail_at("verify_email:spent");
    assert!(db.verify_email(&verification.hash, now).await.is_err());
    assert!(
        db.live_link(&verification.hash, now)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        db.verify_email(&verification.hash, now).await.unwrap(),
        Some(ann.id)
    );

    db.insert_session(&Session {
        id_hash: "ann-session".into(),
        account_id: ann.id,
        mfa_satisfied: true,
        created_at: now,
        expires_at: now + time::Duration::hours(1),
        pending_totp: None,
    })
    .await
    .unwrap();
    let (_, reset) = AccountToken::issue(LinkPurpose::ResetPassword, Some(ann.id), now);
    db.issue_link(&reset).await.unwrap();
    for step in ["reset_password:spent", "reset_password:password"] {
        db.fail_at(step);
        assert!(db.reset_password(&reset.hash, "$after", now).await.is_err());
        let stored = db.account_by_id(ann.id).await.unwrap().unwrap();
        assert_eq!(stored.password_hash.as_deref(), Some("$before"), "{step}");
        assert!(
            db.session_by_hash("ann-session").await.unwrap().is_some(),
            "{step}"
        );
        assert!(
            db.live_link(&reset.hash, now).await.unwrap().is_some(),
            "{step}"
        );
    }
    // A failed newer link leaves the older one working.
    let (_, newer) = AccountToken::issue(LinkPurpose::ResetPassword, Some(ann.id), now);
    db.fail_at("issue_link:voided");
    assert!(db.issue_link(&newer).await.is_err());
    assert!(db.live_link(&reset.hash, now).await.unwrap().is_some());
    assert_eq!(
        db.reset_password(&reset.hash, "$after", now).await.unwrap(),
        Some(ann.id)
    );
    assert_eq!(db.session_by_hash("ann-session").await.unwrap(), None);
}

/// A fault inside each multi-step write of the second factor and the password change
/// leaves the account, its codes and its sessions as they were.
async fn second_factor_writes_roll_back(db: Database) {
    use quire_accounts::{RecoveryCodes, SealingKey, Session, SessionStore, TotpSecret};
    use quire_signup::SignupStore;

    db.migrate().await.expect("migrate");
    let db = Arc::new(db);
    let now = SystemClock.now();
    let ann = AccountService::new(db.clone(), Arc::new(SystemClock), Arc::new(ThreadOffload))
        .create(quire_testkit::fixtures::new_account("ann"))
        .await
        .unwrap()
        .account;
    let session = |hash: &str, satisfied: bool| Session {
        id_hash: hash.into(),
        account_id: ann.id,
        mfa_satisfied: satisfied,
        created_at: now,
        expires_at: now + time::Duration::hours(1),
        pending_totp: None,
    };
    db.insert_session(&session("here", true)).await.unwrap();
    db.insert_session(&session("there", true)).await.unwrap();
    let sealed = SealingKey::ephemeral().seal_totp(ann.id, &TotpSecret::generate());
    db.set_pending_totp("here", Some(&sealed)).await.unwrap();
    let codes = RecoveryCodes::generate().hashes();

    for step in ["enroll_totp:account", "enroll_totp:recovery_codes"] {
        db.fail_at(step);
        assert!(
            db.enroll_totp(ann.id, &sealed, 1, "here", &codes, now)
                .await
                .is_err()
        );
        let stored = db.account_by_id(ann.id).await.unwrap().unwrap();
        assert_eq!(stored.totp_secret, None, "{step}");
        assert_eq!(db.recovery_codes_left(ann.id).await.unwrap(), 0, "{step}");
        let here = db.session_by_hash("here").await.unwrap().unwrap();
        assert_eq!(here.pending_totp.as_ref(), Some(&sealed), "{step}");
        assert!(
            db.session_by_hash("there")
                .await
                .unwrap()
                .unwrap()
                .mfa_satisfied
        );
    }
    assert!(
        db.enroll_totp(ann.id, &sealed, 1, "here", &codes, now)
            .await
            .unwrap()
    );

    db.fail_at("replace_recovery_codes:delete");
    let fresh = RecoveryCodes::generate().hashes();
    assert!(
        db.replace_recovery_codes(ann.id, &fresh, now)
            .await
            .is_err()
    );
    assert!(db.use_recovery_code(ann.id, &codes[0], now).await.unwrap());
    assert_eq!(db.recovery_codes_left(ann.id).await.unwrap(), 9);

    for step in ["remove_totp:account", "remove_totp:recovery_codes"] {
        db.fail_at(step);
        assert!(db.remove_totp(ann.id).await.is_err());
        let stored = db.account_by_id(ann.id).await.unwrap().unwrap();
        assert_eq!(stored.totp_secret.as_ref(), Some(&sealed), "{step}");
        assert_eq!(db.recovery_codes_left(ann.id).await.unwrap(), 9, "{step}");
        assert!(
            !db.session_by_hash("there")
                .await
                .unwrap()
                .unwrap()
                .mfa_satisfied
        );
    }
    assert!(db.remove_totp(ann.id).await.unwrap());

    db.fail_at("change_password:password");
    assert!(db.change_password(ann.id, "$after", "here").await.is_err());
    let stored = db.account_by_id(ann.id).await.unwrap().unwrap();
    assert_ne!(stored.password_hash.as_deref(), Some("$after"));
    assert!(db.session_by_hash("there").await.unwrap().is_some());
    assert_eq!(
        db.change_password(ann.id, "$after", "here").await.unwrap(),
        1
    );
    assert!(db.session_by_hash("there").await.unwrap().is_none());
    assert!(db.session_by_hash("here").await.unwrap().is_some());
}

on_both_databases!(account_flows_roll_back, second_factor_writes_roll_back,);
