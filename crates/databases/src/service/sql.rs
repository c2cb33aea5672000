//! The owner's SQL, and how many queries an account runs at once.
//!
//! Each query holds a connection to the cluster for as long as it runs (up to the SQL
//! deadline), so an account gets [`DatabaseConfig::sql_per_account`] at once on each
//! replica; past that, `Busy`. The count is this replica's, in memory: a shared one would
//! cost a store write per query and outlive a replica that died holding it. What bounds a
//! database across replicas is its owner role's connection limit in the cluster, which
//! answers `Busy` too.
//!
//! [`DatabaseConfig::sql_per_account`]: super::DatabaseConfig::sql_per_account

use std::sync::Arc;

use quire_kernel::per_key::{Counted, PerKeyCounts};
use quire_kernel::{AccountId, DatabaseId, InfraError, Principal};
use quire_projects::ProjectAccess;

use super::{DatabaseError, DatabaseService, MAX_QUERY_ROWS};
use crate::ports::{ClusterError, SqlOutcome};

/// Longest SQL taken, in bytes.
pub const MAX_SQL_BYTES: usize = 1 << 20;

impl DatabaseService {
    /// Runs `sql` connected as the database's owner role (never a role switch on an admin
    /// connection, which `RESET ROLE` would undo) and returns the last statement's result,
    /// at most [`MAX_QUERY_ROWS`] rows.
    ///
    /// # Errors
    /// `Unavailable`, `NotFound`, `InsufficientScope`, `Invalid` (empty or longer than
    /// 1 MiB), `Busy` (the account runs as many queries as it may, or the database takes no
    /// more connections), `Sql` (PostgreSQL's refusal, or `COPY` to or from the client),
    /// `Infra`.
    pub async fn query(
        &self,
        principal: &Principal,
        id: DatabaseId,
        sql: &str,
    ) -> Result<SqlOutcome, DatabaseError> {
        if sql.trim().is_empty() {
            return Err(DatabaseError::Invalid("sql must not be empty".into()));
        }
        if sql.len() > MAX_SQL_BYTES {
            return Err(DatabaseError::Invalid("sql may be at most 1 MiB".into()));
        }
        let (database, _) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let tenant = self.access(&database)?;
        let limit = self.config.sql_per_account.max(1);
        // Counted against the database's account, not the caller's: a project's members
        // share its owner's allowance. Held until the query's future ends, however it ends
        // (a client that went away drops it).
        let _running = self
            .running
            .enter(database.account_id, limit)
            .ok_or_else(|| {
                DatabaseError::Busy(format!(
                    "this account already runs {limit} SQL queries at once, the most this server \
                 allows: try again when one has ended"
                ))
            })?;
        self.cluster()?
            .run_sql(&tenant, sql, MAX_QUERY_ROWS)
            .await
            .map_err(|e| match e {
                ClusterError::Refused(r) => DatabaseError::Sql(r),
                ClusterError::Busy(message) => DatabaseError::Busy(message),
                ClusterError::Infra(e) => DatabaseError::Infra(e),
            })
    }

    /// Ends the owners' SQL sessions that outlived every request (a replica that stopped
    /// mid-query leaves them): the janitor's pass, safe on every replica at once.
    ///
    /// # Errors
    /// The cluster failed.
    pub async fn end_abandoned_sql(&self) -> Result<u64, InfraError> {
        match &self.ports.cluster {
            Some(cluster) => cluster.end_abandoned_sessions().await,
            None => Ok(0),
        }
    }
}

/// How many owner's SQL queries each account runs on this replica now.
#[derive(Debug, Default)]
pub(crate) struct RunningQueries(Arc<PerKeyCounts<AccountId>>);

impl RunningQueries {
    /// A place for one more query of `account`, counted until dropped, or `None` when it
    /// runs `limit` already.
    fn enter(&self, account: AccountId, limit: usize) -> Option<Counted<AccountId>> {
        let limit = u64::try_from(limit).unwrap_or(u64::MAX);
        self.0
            .take(account, 1, |held| {
                (held.of_key < limit).then_some(()).ok_or(())
            })
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_runs_at_most_its_limit_and_gets_each_place_back() {
        let queries = Arc::new(RunningQueries::default());
        let (ann, bob) = (AccountId::new(), AccountId::new());
        let first = queries.enter(ann, 2);
        let second = queries.enter(ann, 2);
        assert!(first.is_some() && second.is_some());
        assert!(queries.enter(ann, 2).is_none());
        // Another account counts apart.
        assert!(queries.enter(bob, 2).is_some());
        drop(first);
        let third = queries.enter(ann, 2);
        assert!(third.is_some());
        drop((second, third));
        assert_eq!(queries.0.total(), 0);
    }
}
