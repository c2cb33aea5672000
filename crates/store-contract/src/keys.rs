//! Keys: listing, revocation, lookup by hash.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::{Clock, KeyId, Tier};
use quire_keys::KeyStore;
use quire_projects::ProjectStore;
use time::Duration;

use super::support::{app_key_in, seed};
use quire_testkit::fixtures::FixedClock;

pub(super) async fn keys_are_listed_revoked_once_and_found_by_hash<
    S: AccountStore + KeyStore + ProjectStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let (plain, key) = app_key_in(&ann.account, ann.project.id, &clock);
    s.insert_key(&key).await.unwrap();
    let listed = s.keys_of_account(ann.account.id).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[1], key);
    assert_eq!(listed[0].tier, Tier::Master);

    // A use is recorded unless one was recorded since `unless_since`.
    let t0 = clock.now();
    s.touch_key(key.id, t0, t0 - Duration::minutes(1))
        .await
        .unwrap();
    s.touch_key(
        key.id,
        t0 + Duration::seconds(30),
        t0 - Duration::seconds(30),
    )
    .await
    .unwrap();
    let seen = s.find_by_hash(&plain.hash()).await.unwrap().unwrap();
    assert_eq!(
        seen.key.last_used_at,
        Some(t0),
        "a use within the minute is not written"
    );
    s.touch_key(
        key.id,
        t0 + Duration::seconds(61),
        t0 + Duration::seconds(1),
    )
    .await
    .unwrap();
    let seen = s.find_by_hash(&plain.hash()).await.unwrap().unwrap();
    assert_eq!(seen.key.last_used_at, Some(t0 + Duration::seconds(61)));
    s.touch_key(KeyId::new(), t0, t0).await.unwrap();

    let first = clock.now() + Duration::seconds(5);
    s.revoke_key(key.id, first).await.unwrap();
    s.revoke_key(key.id, first + Duration::seconds(5))
        .await
        .unwrap();
    let owner = s.find_by_hash(&plain.hash()).await.unwrap().unwrap();
    assert_eq!(owner.key.revoked_at, Some(first));
    // Revoked keys stop counting as held by their project.
    assert!(s.resources(ann.project.id).await.unwrap().keys.is_empty());
}
