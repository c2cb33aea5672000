//! Accounts: the bootstrap unit, conflicts, and times kept to the microsecond.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_accounts::{AccountService, CreateAccount, CreateAccountError};
use quire_kernel::{ProjectSlug, Tier};
use quire_keys::KeyStore;
use quire_keys::PlaintextKey;
use quire_projects::ProjectStore;
use time::OffsetDateTime;

use super::support::{project_of, seed};
use quire_testkit::fixtures::{FixedClock, ThreadOffload};

pub(super) async fn account_bootstrap_is_readable<
    S: AccountStore + ProjectStore + KeyStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let seeded = seed(&s, &clock, "ann").await;
    let a = &seeded.account;
    assert_eq!(s.account_by_id(a.id).await.unwrap().as_ref(), Some(a));
    assert_eq!(
        s.project_by_id(seeded.project.id).await.unwrap().as_ref(),
        Some(&seeded.project)
    );
    assert_eq!(
        s.project_by_slug(&seeded.project.slug)
            .await
            .unwrap()
            .as_ref(),
        Some(&seeded.project)
    );
    assert_eq!(
        s.default_project_of(a.id).await.unwrap(),
        Some(seeded.project.id)
    );
    let owner = s
        .find_by_hash(&seeded.master_key.hash())
        .await
        .unwrap()
        .expect("key found by hash");
    assert_eq!(owner.key.account_id, a.id);
    assert_eq!(owner.key.tier, Tier::Master);
    assert!(owner.account_activated);
    assert_eq!(owner.default_project_id, seeded.project.id);
    assert_eq!(
        s.key_by_id(owner.key.id).await.unwrap().as_ref(),
        Some(&owner.key)
    );
    assert!(
        s.find_by_hash(&PlaintextKey::generate().hash())
            .await
            .unwrap()
            .is_none()
    );
}

pub(super) async fn account_conflicts_store_nothing<
    S: AccountStore + ProjectStore + KeyStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let svc = AccountService::new(s.clone(), clock.clone(), Arc::new(ThreadOffload));
    let attempt = |email: &str, handle: &str| CreateAccount {
        email: email.into(),
        handle: handle.into(),
        password: None,
        platform_admin: false,
        activated: true,
    };
    let err = svc
        .create(attempt("other@example.com", "ann"))
        .await
        .unwrap_err();
    assert_eq!(err, CreateAccountError::HandleTaken);
    let err = svc
        .create(attempt("ANN@example.com", "bob"))
        .await
        .unwrap_err();
    assert_eq!(err, CreateAccountError::EmailTaken);
    // A handle equal to an existing project slug would collide with the default project.
    s.insert_project(&project_of(&ann.account, "carol", &clock))
        .await
        .unwrap();
    let err = svc
        .create(attempt("carol@example.com", "carol"))
        .await
        .unwrap_err();
    assert_eq!(err, CreateAccountError::HandleTaken);
    // None of the failed attempts left an account, a project or a key behind.
    assert_eq!(s.keys_of_account(ann.account.id).await.unwrap().len(), 1);
    let bob_slug = ProjectSlug::parse("bob").unwrap();
    assert!(s.project_by_slug(&bob_slug).await.unwrap().is_none());
    assert_eq!(
        s.projects_of_account(ann.account.id).await.unwrap().len(),
        2
    );
}

pub(super) async fn times_keep_microseconds<S: AccountStore + ProjectStore + KeyStore + 'static>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::at(
        OffsetDateTime::from_unix_timestamp_nanos(1_767_225_600_123_456_000).unwrap(),
    ));
    let ann = seed(&s, &clock, "ann").await;
    let stored = s.project_by_id(ann.project.id).await.unwrap().unwrap();
    assert_eq!(stored.created_at, ann.project.created_at);
    assert_eq!(stored.created_at.nanosecond(), 123_456_000);
}
