//! Objects (files) and their upload URLs.

use quire_kernel::ErrorCode;
use quire_objects::ObjectError;
use serde_json::Value;

use super::quota;
use crate::error::{ApiError, worded};

impl From<ObjectError> for ApiError {
    fn from(e: ObjectError) -> Self {
        let code = match e {
            ObjectError::InsufficientScope => ErrorCode::InsufficientScope,
            ObjectError::NotFound => ErrorCode::NotFound,
            ObjectError::Invalid(_) => ErrorCode::InvalidRequest,
            ObjectError::PasswordRequired => ErrorCode::PasswordRequired,
            ObjectError::SlugConflict => ErrorCode::SlugConflict,
            ObjectError::SlugTaken => ErrorCode::SlugTaken,
            ObjectError::AliasConflict => ErrorCode::AliasConflict,
            ObjectError::TooLarge { .. } => {
                return worded(ErrorCode::PayloadTooLarge, &e)
                    .with_field("limit", Value::from("object_size"));
            }
            ObjectError::StorageQuotaExceeded { used, limit } => {
                let code = ErrorCode::StorageQuotaExceeded;
                return quota(code, &e, "object_bytes", used, limit);
            }
            ObjectError::PublicIdExhausted => ErrorCode::PublicIdExhausted,
            ObjectError::ProfileHandleMissing => ErrorCode::ProfileHandleMissing,
            ObjectError::StorageCleanupFailed => ErrorCode::StorageCleanupFailed,
            ObjectError::LinkCleanupFailed => ErrorCode::LinkCleanupFailed,
            // An upload URL is a one-time grant: the device login's RFC 8628 codes say
            // what became of it (docs/decisions/object-service.md).
            ObjectError::UploadUrlUnknown => ErrorCode::NotFound,
            ObjectError::UploadUrlUsed => ErrorCode::InvalidGrant,
            ObjectError::UploadUrlExpired => ErrorCode::ExpiredToken,
            ObjectError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}
