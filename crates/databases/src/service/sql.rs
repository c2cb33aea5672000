//! The owner's SQL.

use quire_kernel::{DatabaseId, Principal};
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
    /// 1 MiB), `Sql` (PostgreSQL's refusal), `Infra`.
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
        self.cluster()?
            .run_sql(&tenant, sql, MAX_QUERY_ROWS)
            .await
            .map_err(|e| match e {
                ClusterError::Refused(r) => DatabaseError::Sql(r),
                ClusterError::Infra(e) => DatabaseError::Infra(e),
            })
    }
}
