//! The email quota: reservations counted exactly per account in a rolling window (racing
//! ones included), the oldest send of a full window, release and forgetting.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::Clock;
use quire_mail::{MailQuota, Reservation};
use time::Duration;
use uuid::Uuid;

use super::support::seed;
use quire_testkit::fixtures::FixedClock;

pub(super) async fn sends_are_counted_exactly_in_a_rolling_window<
    S: AccountStore + MailQuota + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await.account.id;
    let bob = seed(&s, &clock, "bob").await.account.id;
    let day = Duration::hours(24);
    let t0 = clock.now();
    let first = Uuid::now_v7();
    assert_eq!(
        s.reserve(ann, first, t0, day, 3).await.unwrap(),
        Reservation::Reserved { used: 1 }
    );
    let second = Uuid::now_v7();
    let t1 = t0 + Duration::hours(1);
    assert_eq!(
        s.reserve(ann, second, t1, day, 3).await.unwrap(),
        Reservation::Reserved { used: 2 }
    );
    // Another account has its own count.
    assert_eq!(
        s.reserve(bob, Uuid::now_v7(), t1, day, 3).await.unwrap(),
        Reservation::Reserved { used: 1 }
    );
    let third = Uuid::now_v7();
    assert_eq!(
        s.reserve(ann, third, t1, day, 3).await.unwrap(),
        Reservation::Reserved { used: 3 }
    );
    assert_eq!(
        s.reserve(ann, Uuid::now_v7(), t1, day, 3).await.unwrap(),
        Reservation::Full { oldest: t0 }
    );
    // A released slot is free again; at exactly 24 h the first send leaves the window.
    s.release(third).await.unwrap();
    let fourth = Uuid::now_v7();
    assert_eq!(
        s.reserve(ann, fourth, t1, day, 3).await.unwrap(),
        Reservation::Reserved { used: 3 }
    );
    assert_eq!(
        s.reserve(ann, Uuid::now_v7(), t0 + day - Duration::seconds(1), day, 3)
            .await
            .unwrap(),
        Reservation::Full { oldest: t0 }
    );
    assert_eq!(
        s.reserve(ann, Uuid::now_v7(), t0 + day, day, 3)
            .await
            .unwrap(),
        Reservation::Reserved { used: 3 }
    );
    // Forgetting drops only what left the window.
    assert_eq!(
        s.forget_sends_before(t0 + Duration::minutes(1))
            .await
            .unwrap(),
        1
    );

    // Twenty racing reservations of an empty window: exactly ten.
    let carl = seed(&s, &clock, "carl").await.account.id;
    let now = clock.now();
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let s = s.clone();
            tokio::spawn(
                async move { s.reserve(carl, Uuid::now_v7(), now, day, 10).await.unwrap() },
            )
        })
        .collect();
    let mut reserved = 0;
    for t in tasks {
        if matches!(t.await.unwrap(), Reservation::Reserved { .. }) {
            reserved += 1;
        }
    }
    assert_eq!(reserved, 10);
}
