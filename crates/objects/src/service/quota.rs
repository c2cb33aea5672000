//! The account's quota of object bytes: every ready object of every project of the account,
//! summed (pages are not counted: they have limits of their own per page). An upload is
//! refused before any byte is stored when its declared length would pass the quota, and
//! stopped as its running count passes what was free at its start; a replacement counts the
//! difference. Uploads of one account that run at once each see the others' bytes only once
//! ready, so the finished upload checks the sum again after its record is written and undoes
//! itself when the sum passed the quota (`quire_kernel::quota::kept_within`): two racing for
//! the last room may both be refused, never both kept.

use std::collections::HashMap;

use quire_kernel::{AccountId, Principal, Usage};
use quire_projects::quota_account;

use super::{ObjectError, ObjectService};

/// Default cap of one account's object bytes: 10 GiB, ten of the largest objects.
pub const DEFAULT_MAX_ACCOUNT_BYTES: u64 = 10 << 30;

impl ObjectService {
    /// The object bytes of the account that owns a project (default: the key's home
    /// project) beside its quota.
    ///
    /// # Errors
    /// `InsufficientScope`, `Infra`.
    pub async fn usage(
        &self,
        principal: &Principal,
        project: Option<&str>,
    ) -> Result<Usage, ObjectError> {
        let account = quota_account(self.ports.projects.as_ref(), principal, project).await?;
        self.usage_of(account).await
    }

    /// Every account's object bytes beside the quota, for the operator (the admin's account
    /// list, the metrics); an account with no object is left out.
    ///
    /// # Errors
    /// `Infra`.
    pub async fn usage_by_account(&self) -> Result<HashMap<AccountId, Usage>, ObjectError> {
        Ok(self
            .ports
            .records
            .stored_bytes(None)
            .await?
            .into_iter()
            .map(|(account, bytes)| (account, self.quota(bytes)))
            .collect())
    }

    /// An account's use with no object: the quota alone.
    #[must_use]
    pub fn unused(&self) -> Usage {
        self.quota(0)
    }

    pub(crate) async fn usage_of(&self, account: AccountId) -> Result<Usage, ObjectError> {
        let stored = self.ports.records.stored_bytes(Some(account)).await?;
        Ok(self.quota(stored.iter().map(|(_, bytes)| bytes).sum()))
    }

    fn quota(&self, used: u64) -> Usage {
        Usage::of(used, self.config.max_account_bytes)
    }

    /// Refuses an upload of `declared` bytes (an unknown length: at least one) when `usage`
    /// leaves no room for it.
    pub(crate) fn check_room(usage: Usage, declared: Option<u64>) -> Result<(), ObjectError> {
        if usage.admits(declared.unwrap_or(1)) {
            return Ok(());
        }
        Err(exceeded(usage))
    }

    /// Once an upload of `own` bytes is written: the refusal when the account's objects,
    /// its own among them, now hold more than the quota (another upload of the account
    /// finished meanwhile).
    pub(crate) async fn passed_quota(
        &self,
        account: AccountId,
        own: u64,
    ) -> Result<Option<ObjectError>, ObjectError> {
        if self.config.max_account_bytes == 0 {
            return Ok(None);
        }
        Ok(self.usage_of(account).await?.passed(own).map(exceeded))
    }
}

/// The refusal of an upload that `usage` has no room for.
pub(crate) fn exceeded(usage: Usage) -> ObjectError {
    ObjectError::StorageQuotaExceeded {
        used: usage.used,
        limit: usage.limit.unwrap_or(u64::MAX),
    }
}
