//! Activation against the in-memory fakes and a fixed clock: the order of the checks, the
//! captcha's lifetime and single use, the rolling window's edge, and the invitation list.

use std::sync::Arc;

use quire_accounts::captcha::{ACTIVATE, CHALLENGE_LIFETIME};
use quire_accounts::{
    AccountService, ActivationError, ActivationPorts, ActivationRequest, ActivationService,
    CaptchaCost, CaptchaKeys, CaptchaRefusal, CreateAccount, InvitationList, InviteError,
    PhoneError, Region, RequestProblem,
};
use quire_kernel::{AccountId, Clock};
use quire_testkit::captcha::solve;
use quire_testkit::fixtures::new_account;
use quire_testkit::memory::Op;
use quire_testkit::{FixedClock, MemoryStore, ThreadOffload};
use time::Duration;

const INVITED: &str = "+447400123456";
const ALSO_INVITED: &str = "+12015550123";
/// Cheap work: tests solve in a few derivations.
const COST: CaptchaCost = CaptchaCost {
    iterations: 1,
    max_counter: 20,
};

struct World {
    store: Arc<MemoryStore>,
    clock: Arc<FixedClock>,
    activation: ActivationService,
    invitations: InvitationList,
    dormant: AccountId,
    other: AccountId,
}

async fn world() -> World {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(FixedClock::new());
    let accounts = AccountService::new(store.clone(), clock.clone(), Arc::new(ThreadOffload));
    let mut ids = Vec::new();
    for handle in ["dormant", "other"] {
        let created = accounts
            .create(CreateAccount {
                activated: false,
                ..new_account(handle)
            })
            .await
            .unwrap();
        ids.push(created.account.id);
    }
    let activation = ActivationService::new(
        ActivationPorts {
            accounts: store.clone(),
            invitations: store.clone(),
            captchas: store.clone(),
            limiter: store.clone(),
            clock: clock.clone(),
        },
        CaptchaKeys::new("test secret", COST),
    );
    let invitations = InvitationList::new(store.clone(), clock.clone());
    invitations.add(INVITED, None).await.unwrap();
    invitations.add(ALSO_INVITED, None).await.unwrap();
    World {
        store,
        clock,
        activation,
        invitations,
        dormant: ids[0],
        other: ids[1],
    }
}

impl World {
    fn solved(&self, account: AccountId) -> String {
        solve(&self.activation.challenge(account), 10_000).unwrap()
    }

    fn request(
        &self,
        account: AccountId,
        phone: &str,
    ) -> Result<ActivationRequest, RequestProblem> {
        Ok(ActivationRequest {
            captcha: self.solved(account),
            phone: phone.into(),
        })
    }

    async fn activate(
        &self,
        account: AccountId,
        request: Result<ActivationRequest, RequestProblem>,
    ) -> Result<(), ActivationError> {
        self.activation.activate(account, request).await.map(|_| ())
    }

    fn activated(&self, account: AccountId) -> bool {
        self.store
            .snapshot()
            .accounts
            .iter()
            .any(|a| a.id == account && a.activated_at.is_some())
    }
}

#[tokio::test]
async fn an_invited_number_and_a_solved_captcha_activate_the_account_and_bind_the_number() {
    let w = world().await;
    let state = w
        .activation
        .activate(w.dormant, w.request(w.dormant, "+44 7400 123456"))
        .await
        .unwrap();
    assert_eq!(state.activated_at(), Some(w.clock.now()));
    assert!(w.activated(w.dormant));
    let list = w.invitations.list().await.unwrap();
    let entry = list.iter().find(|i| i.number.as_str() == INVITED).unwrap();
    assert_eq!(entry.bound_to.as_ref().unwrap().1.as_str(), "dormant");
    assert_eq!(entry.bound_at, Some(w.clock.now()));
    // Now activated: a second attempt is refused before its captcha is looked at.
    assert_eq!(
        w.activate(w.dormant, w.request(w.dormant, ALSO_INVITED))
            .await
            .unwrap_err(),
        ActivationError::AlreadyActivated
    );
}

#[tokio::test]
async fn each_refusal_in_the_contract_order() {
    let w = world().await;
    let body = RequestProblem::Fields("phone is required".into());
    assert_eq!(
        w.activate(w.dormant, Err(body.clone())).await.unwrap_err(),
        ActivationError::InvalidBody(body)
    );
    assert_eq!(
        w.activate(
            w.dormant,
            Ok(ActivationRequest {
                captcha: String::new(),
                phone: INVITED.into()
            })
        )
        .await
        .unwrap_err(),
        ActivationError::CaptchaFailed(CaptchaRefusal::Missing)
    );
    assert_eq!(
        w.activate(w.dormant, w.request(w.dormant, "07400 123456"))
            .await
            .unwrap_err(),
        ActivationError::InvalidPhone(PhoneError::NotInternational)
    );
    assert_eq!(
        w.activate(w.dormant, w.request(w.dormant, "+447400654321"))
            .await
            .unwrap_err(),
        ActivationError::NotEligible
    );
    // Five attempts counted, refused or not: the sixth is refused before anything else,
    // even with a good body.
    w.activate(w.dormant, w.request(w.dormant, INVITED))
        .await
        .unwrap();
    assert!(matches!(
        w.activate(w.dormant, w.request(w.dormant, INVITED))
            .await
            .unwrap_err(),
        ActivationError::RateLimited {
            retry_after_secs: 900
        }
    ));
}

#[tokio::test]
async fn a_captcha_is_spent_even_when_a_later_step_fails() {
    let w = world().await;
    let captcha = w.solved(w.dormant);
    let with = |phone: &str| {
        Ok(ActivationRequest {
            captcha: captcha.clone(),
            phone: phone.into(),
        })
    };
    assert_eq!(
        w.activate(w.dormant, with("not a number"))
            .await
            .unwrap_err(),
        ActivationError::InvalidPhone(PhoneError::NotInternational)
    );
    assert_eq!(
        w.activate(w.dormant, with(INVITED)).await.unwrap_err(),
        ActivationError::CaptchaFailed(CaptchaRefusal::AlreadyUsed)
    );
    assert!(!w.activated(w.dormant));
    // A number not on the list spends it too: one solution cannot probe two numbers.
    let captcha = w.solved(w.dormant);
    for (phone, refusal) in [
        ("+447400654321", ActivationError::NotEligible),
        (
            INVITED,
            ActivationError::CaptchaFailed(CaptchaRefusal::AlreadyUsed),
        ),
    ] {
        let request = Ok(ActivationRequest {
            captcha: captcha.clone(),
            phone: phone.into(),
        });
        assert_eq!(w.activate(w.dormant, request).await.unwrap_err(), refusal);
    }
    assert_eq!(w.store.snapshot().spent_captchas.len(), 2);
}

#[tokio::test]
async fn a_challenge_lasts_ten_minutes_and_belongs_to_one_account() {
    let w = world().await;
    let fresh = w.solved(w.dormant);
    w.clock.advance(CHALLENGE_LIFETIME - Duration::seconds(1));
    assert_eq!(
        w.activate(
            w.dormant,
            Ok(ActivationRequest {
                captcha: fresh,
                phone: INVITED.into()
            })
        )
        .await,
        Ok(())
    );

    let stale = w.solved(w.other);
    w.clock.advance(CHALLENGE_LIFETIME);
    let request = |captcha: &str| {
        Ok(ActivationRequest {
            captcha: captcha.into(),
            phone: ALSO_INVITED.into(),
        })
    };
    assert_eq!(
        w.activate(w.other, request(&stale)).await.unwrap_err(),
        ActivationError::CaptchaFailed(CaptchaRefusal::Expired)
    );
    // Another account's solution, or one for another action, does not count.
    let theirs = w.solved(w.dormant);
    assert_eq!(
        w.activate(w.other, request(&theirs)).await.unwrap_err(),
        ActivationError::CaptchaFailed(CaptchaRefusal::WrongBinding)
    );
    let keys = CaptchaKeys::new("test secret", COST);
    let other_action = solve(&keys.challenge(w.other, "sign-up", w.clock.now()), 10_000).unwrap();
    assert_eq!(
        w.activate(w.other, request(&other_action))
            .await
            .unwrap_err(),
        ActivationError::CaptchaFailed(CaptchaRefusal::WrongBinding)
    );
    // Signed with another server's secret: rejected.
    let foreign = CaptchaKeys::new("another secret", COST);
    let forged = solve(&foreign.challenge(w.other, ACTIVATE, w.clock.now()), 10_000).unwrap();
    assert_eq!(
        w.activate(w.other, request(&forged)).await.unwrap_err(),
        ActivationError::CaptchaFailed(CaptchaRefusal::Rejected)
    );
    assert_eq!(
        w.activate(w.other, request("bm90IGpzb24="))
            .await
            .unwrap_err(),
        ActivationError::CaptchaFailed(CaptchaRefusal::Malformed)
    );
    assert!(!w.activated(w.other));
    // The janitor forgets solutions whose challenges have expired.
    assert_eq!(w.activation.sweep().await.unwrap(), 1);
}

#[tokio::test]
async fn a_solution_whose_work_was_not_done_is_rejected() {
    let w = world().await;
    let payload = w.solved(w.dormant);
    let bytes = base64_decode(&payload);
    let mut json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let counter = json["solution"]["counter"].as_u64().unwrap();
    json["solution"]["counter"] = (counter + 1).into();
    json["solution"]["derivedKey"] = "00".repeat(32).into();
    let tampered = base64_encode(&serde_json::to_vec(&json).unwrap());
    assert_eq!(
        w.activate(
            w.dormant,
            Ok(ActivationRequest {
                captcha: tampered,
                phone: INVITED.into()
            })
        )
        .await
        .unwrap_err(),
        ActivationError::CaptchaFailed(CaptchaRefusal::Rejected)
    );
}

#[tokio::test]
async fn the_fifteen_minute_window_rolls() {
    let w = world().await;
    for _ in 0..5 {
        let _ = w
            .activate(w.dormant, w.request(w.dormant, "+447400654321"))
            .await;
        w.clock.advance(Duration::minutes(1));
    }
    // Minute 5: five attempts in the last 15 minutes.
    assert!(matches!(
        w.activate(w.dormant, w.request(w.dormant, INVITED)).await,
        Err(ActivationError::RateLimited { .. })
    ));
    // Minute 15, just before the first attempt leaves the window: still five.
    w.clock
        .advance(Duration::minutes(10) - Duration::seconds(1));
    assert!(matches!(
        w.activate(w.dormant, w.request(w.dormant, INVITED)).await,
        Err(ActivationError::RateLimited { .. })
    ));
    // Once the first is 15 minutes old, one slot is free again.
    w.clock.advance(Duration::seconds(1));
    assert_eq!(
        w.activate(w.dormant, w.request(w.dormant, INVITED)).await,
        Ok(())
    );
}

#[tokio::test]
async fn a_number_activates_one_account_only() {
    let w = world().await;
    w.activate(w.dormant, w.request(w.dormant, INVITED))
        .await
        .unwrap();
    assert_eq!(
        w.activate(w.other, w.request(w.other, INVITED))
            .await
            .unwrap_err(),
        ActivationError::NotEligible
    );
    assert!(!w.activated(w.other));
}

#[tokio::test]
async fn a_failed_store_activates_nothing() {
    let w = world().await;
    let before = w.store.snapshot();
    w.store.fail(Op::BindAndActivate);
    assert!(matches!(
        w.activate(w.dormant, w.request(w.dormant, INVITED)).await,
        Err(ActivationError::Infra(_))
    ));
    let after = w.store.snapshot();
    assert_eq!(after.accounts, before.accounts);
    assert_eq!(after.invitations, before.invitations);
    w.store.heal();
    w.store.fail(Op::SpendCaptcha);
    assert!(matches!(
        w.activate(w.dormant, w.request(w.dormant, INVITED)).await,
        Err(ActivationError::Infra(_))
    ));
    assert!(!w.activated(w.dormant));
}

#[tokio::test]
async fn the_invitation_list_normalises_and_imports_all_or_nothing() {
    let w = world().await;
    let gb: Region = "GB".parse().unwrap();
    let (number, new) = w.invitations.add("07400 123456", Some(gb)).await.unwrap();
    assert_eq!((number.as_str(), new), (INVITED, false));
    assert!(matches!(
        w.invitations.add("12", None).await.unwrap_err(),
        InviteError::InvalidNumber(_)
    ));
    let before = w.store.snapshot().invitations;
    let err = w
        .invitations
        .import("# staff\n07400 654321\n\nnonsense\n+44 1\n", Some(gb))
        .await
        .unwrap_err();
    match err {
        InviteError::BadLines(lines) => {
            assert_eq!(lines.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [4, 5]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w.store.snapshot().invitations, before);
    let huge = "+447400654321\n".repeat(quire_accounts::invitations::MAX_IMPORT_LINES + 1);
    assert_eq!(
        w.invitations.import(&huge, None).await.unwrap_err(),
        InviteError::TooLong
    );
    assert_eq!(w.store.snapshot().invitations, before);
    let (held, added) = w
        .invitations
        .import("07400 654321\n+447400654321\n07400123456\n", Some(gb))
        .await
        .unwrap();
    assert_eq!((held, added), (2, 1));
    let (number, removed) = w.invitations.remove("+44 7400 654321", None).await.unwrap();
    assert_eq!((number.as_str(), removed), ("+447400654321", true));
    assert!(!w.invitations.remove("+447400654321", None).await.unwrap().1);
    assert_eq!(w.invitations.list().await.unwrap().len(), 2);
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}
