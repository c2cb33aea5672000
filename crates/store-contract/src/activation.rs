//! The invitation list and activation: a number binds one account and an account one
//! number, racing activations of one number activate exactly one account, refusals change
//! nothing; captcha solutions are spent once, on every replica, and forgotten after expiry.

use std::sync::Arc;

use quire_accounts::{
    AccountService, AccountStore, Binding, CaptchaLedger, CreateAccount, InvitationStore,
    PhoneNumber,
};
use quire_kernel::{AccountId, Clock};
use time::Duration;

use quire_testkit::fixtures::{FixedClock, ThreadOffload, new_account};

async fn dormant<S: AccountStore + 'static>(
    s: &Arc<S>,
    clock: &Arc<FixedClock>,
    handle: &str,
) -> AccountId {
    AccountService::new(s.clone(), clock.clone(), Arc::new(ThreadOffload))
        .create(CreateAccount {
            activated: false,
            ..new_account(handle)
        })
        .await
        .expect("create account")
        .account
        .id
}

async fn activated_at<S: AccountStore>(s: &S, id: AccountId) -> Option<time::OffsetDateTime> {
    s.account_by_id(id)
        .await
        .expect("read account")
        .expect("account exists")
        .activated_at
}

pub(super) async fn numbers_bind_one_account_once<S: AccountStore + InvitationStore + 'static>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let number = PhoneNumber::parse("+447400123456").expect("valid");
    let other = PhoneNumber::parse("+12015550123").expect("valid");
    let now = clock.now();
    assert_eq!(
        s.add_invitations(&[number.clone(), other.clone()], now)
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        s.add_invitations(std::slice::from_ref(&number), now)
            .await
            .unwrap(),
        0,
        "already listed"
    );

    // Racing: eight accounts want one number; exactly one gets it.
    let mut racers = Vec::new();
    for i in 0..8 {
        racers.push(dormant(&s, &clock, &format!("racer{i}")).await);
    }
    let at = clock.now();
    let tasks: Vec<_> = racers
        .iter()
        .map(|id| {
            let (s, number, id) = (s.clone(), number.clone(), *id);
            tokio::spawn(async move { s.bind_and_activate(id, &number, at).await.unwrap() })
        })
        .collect();
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(t.await.unwrap());
    }
    let winners: Vec<AccountId> = racers
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| **o == Binding::Activated)
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(winners.len(), 1, "{outcomes:?}");
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Binding::Activated | Binding::NotEligible))
    );
    let winner = winners[0];
    assert_eq!(activated_at(&*s, winner).await, Some(at));
    for loser in racers.iter().filter(|id| **id != winner) {
        assert_eq!(activated_at(&*s, *loser).await, None, "refused: unchanged");
    }
    // The winner is activated: another number does not bind to it.
    assert_eq!(
        s.bind_and_activate(winner, &other, at).await.unwrap(),
        Binding::AlreadyActivated
    );
    // An unlisted number binds nothing.
    let loser = racers.iter().find(|id| **id != winner).copied().unwrap();
    let unlisted = PhoneNumber::parse("+447400654321").expect("valid");
    assert_eq!(
        s.bind_and_activate(loser, &unlisted, at).await.unwrap(),
        Binding::NotEligible
    );

    let list = s.invitations().await.unwrap();
    assert_eq!(
        list.iter().map(|i| i.number.as_str()).collect::<Vec<_>>(),
        ["+12015550123", "+447400123456"],
        "by number"
    );
    let bound = &list[1];
    assert_eq!(bound.bound_to.as_ref().map(|(id, _)| *id), Some(winner));
    assert_eq!(bound.bound_at, Some(at));
    assert_eq!(list[0].bound_to, None);

    // Removing an entry leaves its account activated.
    assert!(s.remove_invitation(&number).await.unwrap());
    assert!(!s.remove_invitation(&number).await.unwrap());
    assert_eq!(activated_at(&*s, winner).await, Some(at));
    assert_eq!(s.invitations().await.unwrap().len(), 1);
}

pub(super) async fn captcha_solutions_are_spent_once<S: CaptchaLedger + 'static>(s: Arc<S>) {
    let clock = FixedClock::new();
    let expires = clock.now() + Duration::minutes(10);
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let s = s.clone();
            tokio::spawn(async move { s.spend_captcha("nonce-a", expires).await.unwrap() })
        })
        .collect();
    let mut spent = 0;
    for t in tasks {
        if t.await.unwrap() {
            spent += 1;
        }
    }
    assert_eq!(spent, 1);
    assert!(
        s.spend_captcha("nonce-b", expires + Duration::minutes(1))
            .await
            .unwrap()
    );
    assert_eq!(s.forget_captchas_before(expires).await.unwrap(), 0);
    assert_eq!(
        s.forget_captchas_before(expires + Duration::seconds(1))
            .await
            .unwrap(),
        1
    );
    // Forgotten after its challenge expired; the other is still spent.
    assert!(!s.spend_captcha("nonce-b", expires).await.unwrap());
}
