//! What the database use cases refuse.

use quire_kernel::InfraError;
use quire_projects::AddressError;

use crate::ports::SqlRefusal;

/// Errors of the database use cases; each use case documents which it returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatabaseError {
    /// No cluster is configured: the service is off on this server.
    #[error(
        "the database service needs PostgreSQL: set QUIRE_DATABASES_URL to a cluster whose role has CREATEDB and CREATEROLE, or QUIRE_DATABASES=local"
    )]
    Unavailable,
    #[error("this credential cannot reach that project or database")]
    InsufficientScope,
    #[error("database not found")]
    NotFound,
    #[error("slug must be 3-30 lowercase letters, digits or underscores")]
    InvalidSlug,
    /// A field failed validation; the message names it.
    #[error("{0}")]
    Invalid(String),
    #[error("a database with that slug exists")]
    SlugTaken,
    /// The account has as many databases as its quota allows: the figures are its
    /// databases and the quota.
    #[error("this account has {used} databases and may have {limit}: delete one first")]
    QuotaExceeded { used: u64, limit: u64 },
    /// The account's databases hold their quota of bytes (or more: owner SQL and the data
    /// API still write): no new database until they hold less.
    #[error(
        "this account's databases hold {used} bytes and may hold {limit}: delete data or a database first"
    )]
    StorageQuotaExceeded { used: u64, limit: u64 },
    /// PostgreSQL refused the SQL.
    #[error("{}", .0.message)]
    Sql(SqlRefusal),
    /// Too much runs at once: the account's SQL queries, or the database's connections.
    /// The message says which, for the caller to wait and try again.
    #[error("{0}")]
    Busy(String),
    #[error("the data API of this database was never enabled: enable it first")]
    DataApiNotEnabled,
    #[error("the data API of this database is disabled: enable it first")]
    DataApiDisabled,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

impl From<AddressError> for DatabaseError {
    fn from(e: AddressError) -> Self {
        match e {
            AddressError::InsufficientScope => DatabaseError::InsufficientScope,
            AddressError::Infra(e) => DatabaseError::Infra(e),
        }
    }
}
