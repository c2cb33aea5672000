//! API keys.

use async_trait::async_trait;
use quire_kernel::{AccountId, InfraError, KeyId, TimeKey};
use quire_keys::{CredentialOwner, KeyHash, KeyRecord, KeyStore};
use time::OffsetDateTime;

use super::{MemoryStore, Op};

#[async_trait]
impl KeyStore for MemoryStore {
    async fn insert_key(&self, key: &KeyRecord) -> Result<(), InfraError> {
        self.check(Op::InsertKey)?;
        self.with(|s| s.keys.push(key.clone()));
        Ok(())
    }

    async fn touch_key(
        &self,
        id: KeyId,
        at: OffsetDateTime,
        unless_since: OffsetDateTime,
    ) -> Result<(), InfraError> {
        self.check(Op::TouchKey)?;
        self.with(|s| {
            if let Some(k) = s.keys.iter_mut().find(|k| k.id == id)
                && k.last_used_at.is_none_or(|t| t < unless_since)
            {
                k.last_used_at = Some(at);
            }
        });
        Ok(())
    }

    async fn find_by_hash(&self, hash: &KeyHash) -> Result<Option<CredentialOwner>, InfraError> {
        self.check(Op::FindByHash)?;
        Ok(self.with(|s| {
            let key = s.keys.iter().find(|k| &k.key_hash == hash)?;
            let account = s.accounts.iter().find(|a| a.id == key.account_id)?;
            Some(CredentialOwner {
                key: key.clone(),
                account_activated: account.activated_at.is_some(),
                is_platform_admin: account.is_platform_admin,
                default_project_id: account.default_project_id,
            })
        }))
    }

    async fn keys_after(
        &self,
        account: AccountId,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<KeyRecord>, InfraError> {
        let mut all = self.keys_of_account(account).await?;
        all.retain(|k| after.is_none_or(|a| (k.created_at, k.id.0) > (a.at, a.id)));
        all.truncate(limit as usize);
        Ok(all)
    }

    async fn keys_of_account(&self, account: AccountId) -> Result<Vec<KeyRecord>, InfraError> {
        self.check(Op::KeysOfAccount)?;
        Ok(self.with(|s| {
            let mut v: Vec<KeyRecord> = s
                .keys
                .iter()
                .filter(|k| k.account_id == account)
                .cloned()
                .collect();
            v.sort_by_key(|k| (k.created_at, k.id));
            v
        }))
    }

    async fn key_by_id(&self, id: KeyId) -> Result<Option<KeyRecord>, InfraError> {
        self.check(Op::KeyById)?;
        Ok(self.with(|s| s.keys.iter().find(|k| k.id == id).cloned()))
    }

    async fn revoke_key(&self, id: KeyId, at: OffsetDateTime) -> Result<(), InfraError> {
        self.check(Op::RevokeKey)?;
        self.with(|s| {
            if let Some(k) = s.keys.iter_mut().find(|k| k.id == id)
                && k.revoked_at.is_none()
            {
                k.revoked_at = Some(at);
            }
        });
        Ok(())
    }
}
