//! Databases, and the owner's SQL in PostgreSQL's own words.

use quire_databases::DatabaseError;
use quire_kernel::ErrorCode;
use serde_json::Value;

use super::quota;
use crate::error::{ApiError, worded};

impl From<DatabaseError> for ApiError {
    fn from(e: DatabaseError) -> Self {
        let code = match e {
            DatabaseError::Unavailable => ErrorCode::DatabaseServiceUnavailable,
            DatabaseError::InsufficientScope => ErrorCode::InsufficientScope,
            DatabaseError::NotFound => ErrorCode::NotFound,
            DatabaseError::InvalidSlug => ErrorCode::InvalidSlug,
            DatabaseError::Invalid(_) => ErrorCode::InvalidRequest,
            DatabaseError::SlugTaken => ErrorCode::SlugTaken,
            DatabaseError::QuotaExceeded { used, limit } => {
                return quota(ErrorCode::QuotaExceeded, &e, "databases", used, limit);
            }
            DatabaseError::StorageQuotaExceeded { used, limit } => {
                let code = ErrorCode::StorageQuotaExceeded;
                return quota(code, &e, "database_bytes", used, limit);
            }
            DatabaseError::DataApiNotEnabled => ErrorCode::DataApiNotEnabled,
            DatabaseError::DataApiDisabled => ErrorCode::DataApiDisabled,
            // Too much at once, not too often: a second is when a place may be free.
            DatabaseError::Busy(_) => {
                let mut error = worded(ErrorCode::RateLimited, &e);
                error.retry_after = Some(1);
                return error;
            }
            // PostgreSQL's own words about the owner's SQL: they quote only what the owner
            // sent, to the owner.
            DatabaseError::Sql(ref refusal) => {
                let mut error = worded(ErrorCode::SqlError, &e)
                    .with_field("sqlstate", Value::from(refusal.sqlstate.clone()));
                if let Some(detail) = &refusal.detail {
                    error = error.with_field("detail", Value::from(detail.clone()));
                }
                if let Some(hint) = &refusal.hint {
                    error = error.with_field("hint", Value::from(hint.clone()));
                }
                if let Some(position) = refusal.position {
                    error = error.with_field("position", Value::from(position));
                }
                return error;
            }
            DatabaseError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}
