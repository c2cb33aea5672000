//! The key cache in front of the key store, over the in-memory fake: a fresh key is read
//! once, a revocation through this replica is refused at once, a change made elsewhere is
//! seen within the lookup TTL, unknown keys are never cached, and a key's use is written
//! once per window.

use std::sync::Arc;

use quire_kernel::Clock;
use quire_keys::{KeyHash, KeyStore};
use quire_read_cache::{CachedKeyStore, KEY_LOOKUP_TTL};
use quire_testkit::memory::Op;
use quire_testkit::{FixedClock, MemoryStore};
use time::Duration;

fn key_of(store: &MemoryStore, account: quire_kernel::AccountId) -> quire_kernel::KeyId {
    store
        .snapshot()
        .keys
        .iter()
        .find(|k| k.account_id == account)
        .unwrap()
        .id
}

#[tokio::test]
async fn keys_are_read_once_per_ttl_and_revocation_here_is_at_once() {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(FixedClock::new());
    let ann = quire_testkit::fixtures::create_account(store.clone(), clock.clone(), "ann").await;
    let cached = CachedKeyStore::new(store.clone(), clock.clone());
    let hash = ann.master_key.hash();

    let owner = cached.find_by_hash(&hash).await.unwrap().unwrap();
    assert_eq!(owner.key.account_id, ann.account.id);
    // Fresh: served without the store.
    store.fail(Op::FindByHash);
    assert_eq!(
        cached.find_by_hash(&hash).await.unwrap(),
        Some(owner.clone())
    );
    store.heal();

    // Revoked through this replica: refused at once.
    cached.revoke_key(owner.key.id, clock.now()).await.unwrap();
    let now = cached.find_by_hash(&hash).await.unwrap().unwrap();
    assert!(now.key.revoked_at.is_some());

    // Revoked elsewhere (straight in the store): seen once the lookup is stale.
    let other = quire_testkit::fixtures::create_account(store.clone(), clock.clone(), "bob").await;
    let bob_hash = other.master_key.hash();
    assert!(
        cached
            .find_by_hash(&bob_hash)
            .await
            .unwrap()
            .unwrap()
            .key
            .revoked_at
            .is_none()
    );
    store
        .revoke_key(key_of(&store, other.account.id), clock.now())
        .await
        .unwrap();
    let revoked_elsewhere = || async {
        cached
            .find_by_hash(&bob_hash)
            .await
            .unwrap()
            .unwrap()
            .key
            .revoked_at
            .is_some()
    };
    assert!(!revoked_elsewhere().await, "held for the lookup TTL");
    clock.advance(Duration::try_from(KEY_LOOKUP_TTL).unwrap() + Duration::milliseconds(50));
    assert!(revoked_elsewhere().await, "seen once the lookup is stale");

    // Unknown keys are asked of the store every time.
    let unknown = KeyHash("0".repeat(64));
    assert_eq!(cached.find_by_hash(&unknown).await.unwrap(), None);
    store.fail(Op::FindByHash);
    assert!(cached.find_by_hash(&unknown).await.is_err());
    store.heal();
}

#[tokio::test]
async fn a_key_use_is_written_once_per_window_by_this_replica() {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(FixedClock::new());
    let ann = quire_testkit::fixtures::create_account(store.clone(), clock.clone(), "ann").await;
    let cached = CachedKeyStore::new(store.clone(), clock.clone());
    let id = key_of(&store, ann.account.id);
    let t0 = clock.now();
    cached
        .touch_key(id, t0, t0 - Duration::minutes(1))
        .await
        .unwrap();
    // Within the window the store is not asked at all.
    store.fail(Op::TouchKey);
    cached
        .touch_key(id, t0 + Duration::seconds(30), t0 - Duration::seconds(30))
        .await
        .unwrap();
    store.heal();
    cached
        .touch_key(id, t0 + Duration::seconds(61), t0 + Duration::seconds(1))
        .await
        .unwrap();
    assert_eq!(
        store.snapshot().keys[0].last_used_at,
        Some(t0 + Duration::seconds(61))
    );
}
