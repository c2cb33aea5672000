//! API keys held in memory for [`KEY_LOOKUP_TTL`], in front of the key store: an
//! authenticated API call reads no key from the database while its key is fresh here.
//!
//! A key revoked through this replica is refused at once (every entry is dropped on a
//! revocation: they are rare), and on every other replica within [`KEY_LOOKUP_TTL`]; so is
//! an account deactivated anywhere. Only working keys are held: unknown keys (so guessing
//! fills nothing), revoked ones, and those of accounts not activated yet (so an activation
//! is seen at once) are asked of the store every time.
//! A project deleted through this replica drops every entry too (it may have been a master
//! key's home). Key use is recorded through here too: this replica writes a key's use at most once per
//! window, whatever its entries say.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use quire_kernel::{
    AccountId, Clock, InfraError, KeyId, LinkId, PageChanges, PageId, ProjectId, TimeKey,
};
use quire_keys::{CredentialOwner, KeyHash, KeyRecord, KeyStore};
use time::OffsetDateTime;

use crate::ClockCache;

/// How long a key's lookup is trusted: the longest a revocation or a deactivation made on
/// another replica takes to reach this one.
pub const KEY_LOOKUP_TTL: Duration = Duration::from_secs(1);

/// The key store, with lookups by hash cached.
#[derive(Debug)]
pub struct CachedKeyStore {
    store: Arc<dyn KeyStore>,
    owners: ClockCache<String, CredentialOwner>,
    /// When this replica last recorded each key's use.
    touched: Mutex<HashMap<KeyId, OffsetDateTime>>,
}

impl CachedKeyStore {
    /// Lookups of `store`, each trusted for [`KEY_LOOKUP_TTL`] by `clock`.
    #[must_use]
    pub fn new(store: Arc<dyn KeyStore>, clock: Arc<dyn Clock>) -> Self {
        Self {
            store,
            owners: ClockCache::new(10_000, KEY_LOOKUP_TTL, clock).named("api_keys"),
            touched: Mutex::new(HashMap::new()),
        }
    }

    fn touched(&self) -> std::sync::MutexGuard<'_, HashMap<KeyId, OffsetDateTime>> {
        self.touched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait]
impl KeyStore for CachedKeyStore {
    async fn insert_key(&self, key: &KeyRecord) -> Result<(), InfraError> {
        self.store.insert_key(key).await
    }

    async fn touch_key(
        &self,
        id: KeyId,
        at: OffsetDateTime,
        unless_since: OffsetDateTime,
    ) -> Result<(), InfraError> {
        if self.touched().get(&id).is_some_and(|t| *t >= unless_since) {
            return Ok(());
        }
        self.store.touch_key(id, at, unless_since).await?;
        let mut touched = self.touched();
        // Bounded like the cache: a replica forgets old marks rather than grow.
        if touched.len() >= 10_000 {
            touched.retain(|_, t| *t >= unless_since);
        }
        touched.insert(id, at);
        Ok(())
    }

    async fn find_by_hash(&self, hash: &KeyHash) -> Result<Option<CredentialOwner>, InfraError> {
        if let Some(owner) = self.owners.get(&hash.0).await {
            return Ok(Some(owner));
        }
        let found = self.store.find_by_hash(hash).await?;
        // Only keys that work are held: a revoked key, or one of an account waiting for
        // activation, is asked again, so an activation is seen at once.
        if let Some(owner) = found
            .as_ref()
            .filter(|o| o.account_activated && o.key.revoked_at.is_none())
        {
            self.owners.insert(hash.0.clone(), owner.clone()).await;
        }
        Ok(found)
    }

    async fn keys_of_account(&self, account: AccountId) -> Result<Vec<KeyRecord>, InfraError> {
        self.store.keys_of_account(account).await
    }

    async fn keys_after(
        &self,
        account: AccountId,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<KeyRecord>, InfraError> {
        self.store.keys_after(account, after, limit).await
    }

    async fn key_by_id(&self, id: KeyId) -> Result<Option<KeyRecord>, InfraError> {
        self.store.key_by_id(id).await
    }

    async fn revoke_key(&self, id: KeyId, at: OffsetDateTime) -> Result<(), InfraError> {
        let revoked = self.store.revoke_key(id, at).await;
        self.owners.invalidate_all();
        revoked
    }
}

/// A deleted project may have been an account's default, which is its master keys' home:
/// every entry goes (deletions are rare). Pages and links are not what keys hold.
impl PageChanges for CachedKeyStore {
    fn page_changed(&self, _: PageId) {}
    fn link_changed(&self, _: LinkId) {}
    fn project_changed(&self, _: ProjectId) {
        self.owners.invalidate_all();
    }
}
