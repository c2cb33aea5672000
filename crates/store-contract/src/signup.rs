//! Accounts made without an operator, and the one-time links: a link is spent once and only
//! for its purpose, a newer link of an account voids the older, the first account is
//! created once even by racing setups, and every refusal changes nothing.

use std::sync::Arc;

use quire_accounts::{AccountStore, CreateAccountStoreError, Session, SessionStore, new_account};
use quire_kernel::{Clock, Email, Handle};
use quire_signup::{AccountToken, FirstAccount, LinkPurpose, SignupStore};
use time::Duration;

use quire_testkit::fixtures::FixedClock;

fn draft(
    handle: &str,
    now: time::OffsetDateTime,
) -> (quire_accounts::Account, quire_projects::Project) {
    new_account(
        Email::parse(&format!("{handle}@example.com")).expect("email"),
        Handle::parse(handle).expect("handle"),
        Some("$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA".into()),
        now,
    )
}

pub(super) async fn links_are_spent_once_and_for_their_purpose<
    S: SignupStore + AccountStore + SessionStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = FixedClock::new();
    let now = clock.now();
    let (account, project) = draft("newbie", now);
    let (_, verification) = AccountToken::issue(LinkPurpose::VerifyEmail, Some(account.id), now);
    s.sign_up(&account, &project, &verification).await.unwrap();
    let stored = s.account_by_id(account.id).await.unwrap().expect("stored");
    assert_eq!(stored.email_verified_at, None);
    assert_eq!(
        s.live_link(&verification.hash, now).await.unwrap(),
        Some(verification.clone())
    );

    // A verification link cannot reset a password.
    assert_eq!(
        s.reset_password(&verification.hash, "$x", now)
            .await
            .unwrap(),
        None
    );
    clock.advance(Duration::seconds(5));
    let later = clock.now();
    assert_eq!(
        s.verify_email(&verification.hash, later).await.unwrap(),
        Some(account.id)
    );
    assert_eq!(
        s.verify_email(&verification.hash, later).await.unwrap(),
        None,
        "spent once"
    );
    assert_eq!(s.live_link(&verification.hash, later).await.unwrap(), None);
    let verified = s.account_by_id(account.id).await.unwrap().expect("stored");
    assert_eq!(verified.email_verified_at, Some(later));

    // A newer reset link voids the older; the reset ends every session of the account.
    let (_, older) = AccountToken::issue(LinkPurpose::ResetPassword, Some(account.id), later);
    s.issue_link(&older).await.unwrap();
    let (_, newer) = AccountToken::issue(LinkPurpose::ResetPassword, Some(account.id), later);
    s.issue_link(&newer).await.unwrap();
    assert_eq!(s.live_link(&older.hash, later).await.unwrap(), None);
    for n in 0..2 {
        s.insert_session(&Session {
            id_hash: format!("session-{n}"),
            account_id: account.id,
            mfa_satisfied: true,
            created_at: later,
            expires_at: later + Duration::hours(1),
            pending_totp: None,
        })
        .await
        .unwrap();
    }
    assert_eq!(
        s.reset_password(&older.hash, "$older", later)
            .await
            .unwrap(),
        None
    );
    assert!(
        s.session_by_hash("session-0").await.unwrap().is_some(),
        "a refusal ends nothing"
    );
    assert_eq!(
        s.reset_password(&newer.hash, "$newer", later)
            .await
            .unwrap(),
        Some(account.id)
    );
    let reset = s.account_by_id(account.id).await.unwrap().expect("stored");
    assert_eq!(reset.password_hash.as_deref(), Some("$newer"));
    for n in 0..2 {
        assert_eq!(
            s.session_by_hash(&format!("session-{n}")).await.unwrap(),
            None
        );
    }

    // Expiry is exclusive, and the janitor forgets what expired.
    let (_, last) = AccountToken::issue(LinkPurpose::ResetPassword, Some(account.id), later);
    s.issue_link(&last).await.unwrap();
    assert_eq!(
        s.reset_password(&last.hash, "$late", last.expires_at)
            .await
            .unwrap(),
        None
    );
    assert_eq!(s.forget_links_before(last.expires_at).await.unwrap(), 0);
    let a_second_on = Duration::seconds(1);
    assert_eq!(
        s.forget_links_before(last.expires_at + a_second_on)
            .await
            .unwrap(),
        3
    );
    assert_eq!(
        s.forget_links_before(verification.expires_at + a_second_on)
            .await
            .unwrap(),
        1
    );
}

pub(super) async fn sign_up_conflicts_store_nothing<S: SignupStore + AccountStore + 'static>(
    s: Arc<S>,
) {
    let now = FixedClock::new().now();
    let (first, first_project) = draft("taken", now);
    let (_, token) = AccountToken::issue(LinkPurpose::VerifyEmail, Some(first.id), now);
    s.sign_up(&first, &first_project, &token).await.unwrap();

    let (mut same_email, project) = draft("fresh", now);
    same_email.email = first.email.clone();
    let (_, t1) = AccountToken::issue(LinkPurpose::VerifyEmail, Some(same_email.id), now);
    assert_eq!(
        s.sign_up(&same_email, &project, &t1).await,
        Err(CreateAccountStoreError::EmailTaken)
    );
    let (mut same_handle, _) = draft("other", now);
    same_handle.handle = first.handle.clone();
    let (_, project) = draft("taken", now);
    let (_, t2) = AccountToken::issue(LinkPurpose::VerifyEmail, Some(same_handle.id), now);
    assert_eq!(
        s.sign_up(&same_handle, &project, &t2).await,
        Err(CreateAccountStoreError::HandleTaken)
    );
    for refused in [&same_email, &same_handle] {
        assert_eq!(s.account_by_id(refused.id).await.unwrap(), None);
    }
    for t in [&t1, &t2] {
        assert_eq!(s.live_link(&t.hash, now).await.unwrap(), None);
    }
}

pub(super) async fn the_first_account_is_created_once<S: SignupStore + AccountStore + 'static>(
    s: Arc<S>,
) {
    let now = FixedClock::new().now();
    assert!(!s.has_accounts().await.unwrap());
    let mut links = Vec::new();
    for _ in 0..2 {
        let (_, link) = AccountToken::issue(LinkPurpose::Setup, None, now);
        s.issue_link(&link).await.unwrap();
        links.push(link);
    }
    assert!(
        s.live_link(&links[0].hash, now).await.unwrap().is_some(),
        "setup links void nothing"
    );
    let (admin, project) = draft("root", now);
    assert_eq!(
        s.create_first_account("unknown", &admin, &project, now)
            .await,
        Ok(FirstAccount::LinkRefused)
    );
    assert!(!s.has_accounts().await.unwrap());

    // Two setups race with the two links: exactly one account results.
    let (a, pa) = draft("racer_a", now);
    let (b, pb) = draft("racer_b", now);
    let (ra, rb) = tokio::join!(
        s.create_first_account(&links[0].hash, &a, &pa, now),
        s.create_first_account(&links[1].hash, &b, &pb, now),
    );
    let outcomes = [ra.unwrap(), rb.unwrap()];
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == FirstAccount::Created)
            .count(),
        1,
        "{outcomes:?}"
    );
    assert!(s.has_accounts().await.unwrap());
    for link in &links {
        assert_eq!(
            s.live_link(&link.hash, now).await.unwrap(),
            None,
            "every setup link forgotten"
        );
    }

    // A setup link issued while an account exists refuses and stays as it was.
    let (_, late) = AccountToken::issue(LinkPurpose::Setup, None, now);
    s.issue_link(&late).await.unwrap();
    assert_eq!(
        s.create_first_account(&late.hash, &admin, &project, now)
            .await,
        Ok(FirstAccount::AlreadySetUp)
    );
    assert_eq!(s.account_by_id(admin.id).await.unwrap(), None);
    assert!(s.live_link(&late.hash, now).await.unwrap().is_some());
}
