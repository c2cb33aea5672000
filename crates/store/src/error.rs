//! The adapter's internal error and its mapping to the domain's `InfraError`.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use quire_kernel::{InfraError, InfraKind};

/// What can go wrong inside the store. Converted to domain errors at each port method.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Query(#[from] DieselError),
    #[error("database connection unavailable: {0}")]
    Pool(String),
    #[error("migration failed: {0}")]
    Migration(String),
    #[error("stored data is invalid: {0}")]
    Corrupt(String),
    /// No sealing key, or a sealed value that does not open under it (names the value,
    /// never shows it).
    #[error("{0}")]
    Sealing(String),
    #[error("injected fault at step {0}")]
    Fault(&'static str),
    /// A domain outcome decided inside a transaction (the transaction is rolled back).
    #[error("{0:?}")]
    Outcome(Outcome),
}

/// The outcomes a transaction decides and its caller turns into a domain error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    PublicIdTaken,
    /// The owner has a page or an object of that slug.
    SlugTaken,
    ProjectNotEmpty,
    ResourceNotFound,
    MasterKey,
    /// A project names an OAuth client that does not exist or was deleted.
    UnknownClient,
    /// A number is not on the invitation list, or is bound to another account.
    NotEligible,
    /// An account exists already, so the first-run setup is over.
    AlreadySetUp,
    /// The page a write was for is gone.
    PageGone,
    /// A page's manifest would pass its file-count limit, or its size limit: the files and
    /// bytes it would hold.
    TooManyFiles(i64, i64),
    PageTooLarge(i64, i64),
    /// A view lease lapsed and was settled by a sweep.
    LeaseLapsed,
    /// Another lease took the views a grant was computed from.
    LeaseRaced,
}

impl StoreError {
    /// Whether this is a unique violation on the named constraint. PostgreSQL reports the
    /// constraint name; SQLite reports `table.column` in the message.
    pub(crate) fn is_unique_violation(&self, pg_constraint: &str, sqlite_column: &str) -> bool {
        match self {
            StoreError::Query(DieselError::DatabaseError(
                DatabaseErrorKind::UniqueViolation,
                info,
            )) => {
                info.constraint_name() == Some(pg_constraint)
                    || info.message().contains(sqlite_column)
            }
            _ => false,
        }
    }

    pub(crate) fn is_outcome(&self, what: Outcome) -> bool {
        matches!(self, StoreError::Outcome(o) if *o == what)
    }
}

/// The domain's error for a store error, typed so a query body's `map_err` needs no
/// annotation.
pub(crate) fn infra(e: StoreError) -> InfraError {
    e.into()
}

impl From<StoreError> for InfraError {
    fn from(e: StoreError) -> Self {
        let kind = match &e {
            StoreError::Pool(_) => InfraKind::Unavailable,
            StoreError::Corrupt(_) => InfraKind::Corrupt,
            _ => InfraKind::Failed,
        };
        InfraError::caused_by(kind, e)
    }
}
