//! Device login and rate limits: compare-and-set grant states, exact windows, sweeping.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_device_auth::DeviceGrantStore;
use quire_device_auth::GrantState;
use quire_device_auth::ports::InsertGrantError;
use quire_kernel::{Budget, RateLimiter, Slot, Take};
use quire_kernel::{Clock, Tier};
use quire_keys::KeyStore;
use quire_keys::new_key;
use time::Duration;

use super::support::{grant, seed};
use quire_testkit::fixtures::FixedClock;

pub(super) async fn device_grants_change_state_by_compare_and_set<
    S: AccountStore + DeviceGrantStore + KeyStore + RateLimiter + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let g = grant("BCDFGHJK", &"a".repeat(64), &clock);
    s.insert_grant(&g).await.unwrap();
    assert_eq!(
        s.insert_grant(&grant("BCDFGHJK", &"b".repeat(64), &clock))
            .await
            .unwrap_err(),
        InsertGrantError::UserCodeTaken
    );
    assert_eq!(
        s.grant_by_device_hash(&g.device_code_hash).await.unwrap(),
        Some(g.clone())
    );
    assert_eq!(
        s.grant_by_user_code("BCDFGHJK").await.unwrap(),
        Some(g.clone())
    );
    assert_eq!(s.grant_by_user_code("ZZZZZZZZ").await.unwrap(), None);

    let polled = clock.now() + Duration::seconds(4);
    s.record_poll(g.id, polled, 8).await.unwrap();
    let stored = s.grant_by_user_code("BCDFGHJK").await.unwrap().unwrap();
    assert_eq!(
        (stored.last_polled_at, stored.interval_secs),
        (Some(polled), 8)
    );

    let approved = GrantState::Approved {
        account: ann.account.id,
    };
    assert!(s.decide(g.id, approved, clock.now()).await.unwrap());
    assert!(
        !s.decide(g.id, GrantState::Denied, clock.now())
            .await
            .unwrap(),
        "decided twice"
    );
    let (plain, key) = new_key(
        ann.account.id,
        "agent: cli".into(),
        Tier::Master,
        None,
        clock.now(),
    );
    assert!(s.claim(g.id, &key).await.unwrap());
    assert_eq!(
        s.grant_by_user_code("BCDFGHJK")
            .await
            .unwrap()
            .unwrap()
            .state,
        GrantState::Claimed { key: key.id }
    );
    assert!(
        s.find_by_hash(&plain.hash()).await.unwrap().is_some(),
        "claimed key stored"
    );
    let (second_plain, second) =
        new_key(ann.account.id, "x".into(), Tier::Master, None, clock.now());
    assert!(!s.claim(g.id, &second).await.unwrap(), "claimed twice");
    assert!(
        s.find_by_hash(&second_plain.hash())
            .await
            .unwrap()
            .is_none(),
        "a lost claim stores no key"
    );

    let denied = grant("CDFGHJKL", &"c".repeat(64), &clock);
    s.insert_grant(&denied).await.unwrap();
    assert!(
        s.decide(denied.id, GrantState::Denied, clock.now())
            .await
            .unwrap()
    );
    let (_, k) = new_key(ann.account.id, "x".into(), Tier::Master, None, clock.now());
    assert!(
        !s.claim(denied.id, &k).await.unwrap(),
        "a denied grant cannot be claimed"
    );
}

pub(super) async fn old_grants_and_rate_windows_are_swept<
    S: AccountStore + DeviceGrantStore + KeyStore + RateLimiter + 'static,
>(
    s: Arc<S>,
) {
    let clock = FixedClock::new();
    let old = grant("BCDFGHJK", &"1".repeat(64), &clock);
    s.insert_grant(&old).await.unwrap();
    let later = FixedClock::at(clock.now() + Duration::hours(1));
    let fresh = grant("LMNPQRST", &"2".repeat(64), &later);
    s.insert_grant(&fresh).await.unwrap();
    let cutoff = old.expires_at + Duration::seconds(1);
    assert_eq!(s.delete_grants_expired_before(cutoff).await.unwrap(), 1);
    assert_eq!(s.grant_by_user_code("BCDFGHJK").await.unwrap(), None);
    assert!(s.grant_by_user_code("LMNPQRST").await.unwrap().is_some());
    // The freed user code can be issued again.
    s.insert_grant(&grant("BCDFGHJK", &"3".repeat(64), &later))
        .await
        .unwrap();

    let window = std::time::Duration::from_secs(900);
    let t0 = clock.now();
    assert!(s.hit("token", "10.0.0.1", window, 1, t0).await.unwrap());
    let t1 = t0 + Duration::hours(2);
    assert!(s.hit("token", "10.0.0.1", window, 1, t1).await.unwrap());
    assert_eq!(
        s.forget_windows_before(t0 + Duration::hours(1))
            .await
            .unwrap(),
        1
    );
    assert!(
        !s.hit("token", "10.0.0.1", window, 1, t1).await.unwrap(),
        "the current window keeps its count"
    );
}

pub(super) async fn rate_limits_count_exactly_per_window<
    S: AccountStore + DeviceGrantStore + KeyStore + RateLimiter + 'static,
>(
    s: Arc<S>,
) {
    let clock = FixedClock::new();
    let window = std::time::Duration::from_secs(900);
    let now = clock.now();
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.push(s.hit("token", "10.0.0.1", window, 2, now).await.unwrap());
    }
    assert_eq!(answers, vec![true, true, false]);
    assert!(s.hit("token", "10.0.0.2", window, 2, now).await.unwrap());
    assert!(
        s.hit("device_authorization", "10.0.0.1", window, 2, now)
            .await
            .unwrap()
    );
    assert!(
        s.hit("token", "10.0.0.1", window, 2, now + Duration::seconds(900))
            .await
            .unwrap()
    );
    // Concurrent hits are counted exactly.
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let s = s.clone();
            tokio::spawn(async move { s.hit("race", "10.0.0.9", window, 10, now).await.unwrap() })
        })
        .collect();
    let mut allowed = 0;
    for t in tasks {
        if t.await.unwrap() {
            allowed += 1;
        }
    }
    assert_eq!(allowed, 10);
}

/// The sliding log: no window of the limit's length ever admits more than the limit, even
/// for a burst straddling what a fixed window would call a boundary.
pub(super) async fn rate_limits_roll_instead_of_resetting<
    S: AccountStore + DeviceGrantStore + KeyStore + RateLimiter + 'static,
>(
    s: Arc<S>,
) {
    let clock = FixedClock::new();
    let window = std::time::Duration::from_secs(900);
    // 5 at 14:59 of a quarter, 5 more at 15:01: a fixed window let all ten through.
    let start = clock.now();
    let late = start + Duration::seconds(899);
    let early_next = start + Duration::seconds(901);
    let mut allowed = 0;
    for at in [late; 5].into_iter().chain([early_next; 5]) {
        if s.hit("activate", "acct-1", window, 5, at).await.unwrap() {
            allowed += 1;
        }
    }
    assert_eq!(
        allowed, 5,
        "a burst across a boundary passes the limit once, not twice"
    );
    // The slots come back once the allowed requests are a whole window old.
    let almost = late + Duration::seconds(900) - Duration::microseconds(1);
    assert!(
        !s.hit("activate", "acct-1", window, 5, almost)
            .await
            .unwrap()
    );
    let past = late + Duration::seconds(900);
    for _ in 0..5 {
        assert!(s.hit("activate", "acct-1", window, 5, past).await.unwrap());
    }
    assert!(!s.hit("activate", "acct-1", window, 5, past).await.unwrap());
}

/// Budgets of failures: a slot taken counts until given back, a refusal counts nothing and
/// says when to come back, waits grow past the free failures, and concurrent takes of one
/// key never pass the budget together.
pub(super) async fn budgets_take_slots_give_them_back_and_back_off<
    S: AccountStore + DeviceGrantStore + KeyStore + RateLimiter + 'static,
>(
    s: Arc<S>,
) {
    let clock = FixedClock::new();
    let window = std::time::Duration::from_secs(900);
    let t0 = clock.now();
    let fixed = Budget::fixed(3, window);
    let mut slots = Vec::new();
    for i in 0..3 {
        match s
            .take("unlock", "p:a", &fixed, t0 + Duration::seconds(i))
            .await
            .unwrap()
        {
            Take::Taken(slot) => slots.push(slot),
            refused => panic!("slot {i}: {refused:?}"),
        }
    }
    let late = t0 + Duration::seconds(10);
    assert_eq!(
        s.take("unlock", "p:a", &fixed, late).await.unwrap(),
        Take::Refused {
            retry_at: t0 + Duration::seconds(900)
        },
        "full: back when the oldest slot is a window old"
    );
    assert!(
        matches!(
            s.take("unlock", "p:b", &fixed, late).await.unwrap(),
            Take::Taken(_)
        ),
        "another key has its own budget"
    );
    // Another bucket's or key's give-back does not touch this one; an unknown slot is fine.
    s.give_back("other", "p:a", slots[0]).await.unwrap();
    s.give_back("unlock", "p:b", slots[0]).await.unwrap();
    s.give_back("unlock", "p:a", Slot(i64::MAX)).await.unwrap();
    assert!(matches!(
        s.take("unlock", "p:a", &fixed, late).await.unwrap(),
        Take::Refused { .. }
    ));
    s.give_back("unlock", "p:a", slots[1]).await.unwrap();
    s.give_back("unlock", "p:a", slots[1]).await.unwrap();
    assert!(
        matches!(
            s.take("unlock", "p:a", &fixed, late).await.unwrap(),
            Take::Taken(_)
        ),
        "a slot given back is free again"
    );

    // One failure free, then 1 s, 2 s, 4 s after the latest.
    let backoff = Budget::with_backoff(50, window, 1, std::time::Duration::from_secs(1));
    let take = |at: i64| {
        let s = s.clone();
        async move {
            s.take("backoff", "p", &backoff, t0 + Duration::seconds(at))
                .await
                .unwrap()
        }
    };
    assert!(matches!(take(0).await, Take::Taken(_)));
    assert_eq!(
        take(0).await,
        Take::Refused {
            retry_at: t0 + Duration::seconds(1)
        }
    );
    assert!(matches!(take(1).await, Take::Taken(_)));
    assert_eq!(
        take(2).await,
        Take::Refused {
            retry_at: t0 + Duration::seconds(3)
        }
    );
    assert!(matches!(take(3).await, Take::Taken(_)));
    assert!(matches!(take(6).await, Take::Refused { .. }));
    assert!(matches!(take(7).await, Take::Taken(_)));

    // Concurrent takes are decided one after another.
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let s = s.clone();
            tokio::spawn(async move {
                s.take("race", "p", &Budget::fixed(5, window), t0)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut taken = 0;
    for t in tasks {
        if matches!(t.await.unwrap(), Take::Taken(_)) {
            taken += 1;
        }
    }
    assert_eq!(taken, 5);
}
