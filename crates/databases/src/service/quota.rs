//! The account's quotas of databases: how many it may have (its provisioning and ready
//! databases, in every project of the account), and how many bytes they may hold together
//! (their sizes as the cluster tells them) before it may make no more. Both are checked
//! when a database is made; the size is not enforced on writes (owner SQL and the data API
//! keep writing past it): `docs/decisions/quotas.md` says why.
//!
//! Creations of one account that run at once each count the others' records once written,
//! so a creation counts again after its record is written and undoes itself when the count
//! passed the quota: two racing for the last place may both be refused, never both made.

use std::collections::HashMap;

use quire_kernel::{AccountId, Principal, Usage};
use quire_projects::quota_account;

use super::{DatabaseError, DatabaseService};
use crate::model::{Database, DatabaseStatus};

/// Default cap of one account's databases.
pub const DEFAULT_MAX_DATABASES: u64 = 10;
/// Default cap of the bytes one account's databases hold: 1 GiB (an empty database takes
/// about 8 MB).
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// An account's databases and their bytes, each beside its quota.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DatabaseUsage {
    pub databases: Usage,
    pub bytes: Usage,
}

impl DatabaseService {
    /// The databases of the account that owns a project (default: the key's home project)
    /// beside its quotas. Without a cluster there are none.
    ///
    /// # Errors
    /// `InsufficientScope`, `Infra`.
    pub async fn usage(
        &self,
        principal: &Principal,
        project: Option<&str>,
    ) -> Result<DatabaseUsage, DatabaseError> {
        let account = quota_account(self.ports.projects.as_ref(), principal, project).await?;
        self.usage_of(account).await
    }

    /// Every account's databases beside the quotas, for the operator (the admin's account
    /// list, the metrics); an account with none is left out.
    ///
    /// # Errors
    /// `Infra` (the records or the cluster).
    pub async fn usage_by_account(
        &self,
    ) -> Result<HashMap<AccountId, DatabaseUsage>, DatabaseError> {
        let live = self.live(None).await?;
        let sizes = self.sizes(&live).await?;
        let mut by_account: HashMap<AccountId, (u64, u64)> = HashMap::new();
        for d in &live {
            let (count, bytes) = by_account.entry(d.account_id).or_default();
            *count += 1;
            *bytes += sizes.get(&d.names().database).copied().unwrap_or(0);
        }
        Ok(by_account
            .into_iter()
            .map(|(account, (count, bytes))| (account, self.quotas(count, bytes)))
            .collect())
    }

    /// An account's use with no database: the quotas alone.
    #[must_use]
    pub fn unused(&self) -> DatabaseUsage {
        self.quotas(0, 0)
    }

    pub(crate) async fn usage_of(
        &self,
        account: AccountId,
    ) -> Result<DatabaseUsage, DatabaseError> {
        let live = self.live(Some(account)).await?;
        let sizes = self.sizes(&live).await?;
        Ok(self.quotas(live.len() as u64, sizes.values().sum()))
    }

    /// Refuses a new database when the account has as many as it may, or its databases
    /// hold their bytes' quota.
    pub(crate) fn check_room(usage: DatabaseUsage) -> Result<(), DatabaseError> {
        if let Some(limit) = usage.databases.limit
            && usage.databases.reached()
        {
            return Err(DatabaseError::QuotaExceeded {
                used: usage.databases.used,
                limit,
            });
        }
        if let Some(limit) = usage.bytes.limit
            && usage.bytes.reached()
        {
            return Err(DatabaseError::StorageQuotaExceeded {
                used: usage.bytes.used,
                limit,
            });
        }
        Ok(())
    }

    /// Once a new database's record is written: the refusal when the account's databases,
    /// this one among them, are now more than the quota (another creation won the race).
    pub(crate) async fn passed_quota(
        &self,
        account: AccountId,
    ) -> Result<Option<DatabaseError>, DatabaseError> {
        let limit = self.config.max_databases;
        if limit == 0 {
            return Ok(None);
        }
        let count = self.live(Some(account)).await?.len() as u64;
        Ok((count > limit).then_some(DatabaseError::QuotaExceeded {
            used: count - 1,
            limit,
        }))
    }

    fn quotas(&self, databases: u64, bytes: u64) -> DatabaseUsage {
        DatabaseUsage {
            databases: Usage::of(databases, self.config.max_databases),
            bytes: Usage::of(bytes, self.config.max_bytes),
        }
    }

    /// The records the quota counts: provisioning and ready, less the ephemeral ones whose
    /// time is up (the janitor's now, and no longer shown).
    async fn live(&self, account: Option<AccountId>) -> Result<Vec<Database>, DatabaseError> {
        let now = self.ports.clock.now();
        Ok(self
            .ports
            .records
            .live_databases(account)
            .await?
            .into_iter()
            .filter(|d| !d.lapsed(now))
            .collect())
    }

    /// The sizes of the ready ones among `databases`, by their name in the cluster; none
    /// without a cluster.
    async fn sizes(&self, databases: &[Database]) -> Result<HashMap<String, u64>, DatabaseError> {
        let Some(cluster) = self.ports.cluster.as_ref() else {
            return Ok(HashMap::new());
        };
        let names: Vec<_> = databases
            .iter()
            .filter(|d| d.status == DatabaseStatus::Ready)
            .map(Database::names)
            .collect();
        if names.is_empty() {
            return Ok(HashMap::new());
        }
        Ok(cluster.sizes(&names).await?)
    }
}
