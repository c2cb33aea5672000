//! Pages: what a write, an address or a size limit refuses.

use quire_kernel::ErrorCode;
use quire_pages::PageError;
use serde_json::Value;

use crate::error::{ApiError, worded};

impl From<PageError> for ApiError {
    fn from(e: PageError) -> Self {
        let code = match e {
            PageError::InsufficientScope => ErrorCode::InsufficientScope,
            PageError::NotFound => ErrorCode::NotFound,
            PageError::Invalid(_) => ErrorCode::InvalidRequest,
            PageError::PasswordRequired => ErrorCode::PasswordRequired,
            PageError::SlugConflict => ErrorCode::SlugConflict,
            PageError::SlugTaken => ErrorCode::SlugTaken,
            PageError::AliasConflict => ErrorCode::AliasConflict,
            PageError::TooLarge { limit, .. } => {
                return worded(ErrorCode::PayloadTooLarge, &e)
                    .with_field("limit", Value::from(limit.as_str()));
            }
            PageError::PublicIdExhausted => ErrorCode::PublicIdExhausted,
            PageError::ProfileHandleMissing => ErrorCode::ProfileHandleMissing,
            PageError::StorageCleanupFailed => ErrorCode::StorageCleanupFailed,
            PageError::LinkCleanupFailed => ErrorCode::LinkCleanupFailed,
            PageError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}
