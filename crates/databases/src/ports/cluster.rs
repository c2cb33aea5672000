//! The PostgreSQL cluster the databases live on: each step of a creation, the owner's SQL
//! and what it answers, the tables it leaves open to `anon`, reloads and sizes.

use std::collections::HashMap;
use std::fmt::Debug;

use async_trait::async_trait;
use quire_kernel::InfraError;
use serde_json::Value;

use crate::model::{TenantAccess, TenantNames};

/// The result of the last statement of some SQL.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlOutcome {
    pub columns: Vec<String>,
    /// At most the limit asked for; values as JSON (numbers, booleans and JSON as such,
    /// everything else as PostgreSQL's text).
    pub rows: Vec<Vec<Value>>,
    /// Rows the statement returned or touched (a `SELECT` of more rows than were kept
    /// counts them all).
    pub row_count: u64,
    /// The tables the SQL left open to `anon` (read once it ran, on its connection); `None`
    /// when they could not be read.
    pub open_tables: Option<Vec<OpenTable>>,
}

/// A table or view in `public`, the schema the data API exposes, that `anon` (whoever holds
/// the anon key, every visitor of a page linked to the database) can reach with nothing
/// to stop it: row-level security off on a table, or a view that runs as its owner (not
/// `security_invoker`), and a privilege of `anon` on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenTable {
    pub name: String,
    /// `table`, `view`, `materialized view` or `foreign table`.
    pub kind: String,
    /// What `anon` may do to it, of `select`, `insert`, `update` and `delete`, in that
    /// order (a privilege on some of its columns counts).
    pub privileges: Vec<String>,
}

/// PostgreSQL refused the SQL: its own words, never the SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlRefusal {
    pub message: String,
    pub sqlstate: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// 1-based character position in the SQL, when PostgreSQL gives one.
    pub position: Option<u32>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("PostgreSQL refused the SQL: {} ({})", .0.message, .0.sqlstate)]
    Refused(SqlRefusal),
    /// The database takes no more connections now (its owner role's connection limit); the
    /// message says so in the owner's terms.
    #[error("{0}")]
    Busy(String),
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The PostgreSQL cluster the databases live on. Each step of a creation is its own call,
/// so the use case can undo exactly what was done; every undo is [`Cluster::drop_tenant`].
#[async_trait]
pub trait Cluster: Send + Sync + Debug {
    /// Creates the owner role and the authenticator role (`LOGIN` with their passwords; the
    /// authenticator `NOINHERIT`, a member of `anon`, `authenticated` and `service_role`,
    /// with a connection limit).
    ///
    /// # Errors
    /// The cluster failed or refused (a role of that name exists).
    async fn create_roles(&self, tenant: &TenantAccess) -> Result<(), InfraError>;

    /// Creates the database, owned by the owner role, `CONNECT` for its two roles alone.
    ///
    /// # Errors
    /// The cluster failed or refused.
    async fn create_database(&self, names: &TenantNames) -> Result<(), InfraError>;

    /// Inside the new database: what the shared roles may use (Supabase's default grants),
    /// the trigger that announces DDL to the data API, and, as the owner, the `auth` schema
    /// ([`crate::auth::AUTH_SCHEMA_SQL`]), so tutorial SQL naming `auth.users` works at once.
    ///
    /// # Errors
    /// The cluster failed or refused.
    async fn prepare_database(&self, tenant: &TenantAccess) -> Result<(), InfraError>;

    /// Drops the database (closing its connections) and both roles. What is missing is no
    /// error, so it undoes any prefix of a creation and can be retried.
    ///
    /// # Errors
    /// The cluster failed.
    async fn drop_tenant(&self, names: &TenantNames) -> Result<(), InfraError>;

    /// Runs `sql` (one statement or several) connected as the owner role, and returns the
    /// last statement's result with at most `max_rows` rows.
    ///
    /// # Errors
    /// `Refused` with PostgreSQL's error, or before anything runs for what cannot run here
    /// (`COPY` to or from the client); `Busy` when the database takes no more connections;
    /// `Infra` when the cluster failed.
    async fn run_sql(
        &self,
        tenant: &TenantAccess,
        sql: &str,
        max_rows: usize,
    ) -> Result<SqlOutcome, ClusterError>;

    /// For each of these databases (by database name), the tables and views that `anon`
    /// can reach with nothing to stop it ([`OpenTable`]), by name, read as its owner. A
    /// database whose tables could not be read (it takes no more connections, the cluster
    /// failed) is left out; the adapter says why in its log.
    async fn open_tables(&self, tenants: &[TenantAccess]) -> HashMap<String, Vec<OpenTable>>;

    /// Ends the owners' SQL sessions that have run longer than any request can still be
    /// waiting for (what a replica that stopped mid-query left), and says how many. Safe
    /// with several replicas: it ends only what is already over. A cluster that keeps no
    /// sessions of its own has nothing to end, hence the default.
    ///
    /// # Errors
    /// The cluster failed.
    async fn end_abandoned_sessions(&self) -> Result<u64, InfraError> {
        Ok(0)
    }

    /// Tells every data API instance serving the database to load its schema again
    /// (a `NOTIFY` in the database, which every replica's instance listens for).
    ///
    /// # Errors
    /// The cluster failed.
    async fn announce_reload(&self, tenant: &TenantAccess) -> Result<(), InfraError>;

    /// The size in bytes of each of these databases that exists, by database name.
    ///
    /// # Errors
    /// The cluster failed.
    async fn sizes(&self, names: &[TenantNames]) -> Result<HashMap<String, u64>, InfraError>;
}
