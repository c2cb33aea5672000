//! Links and the refusals of their URLs.

use quire_kernel::ErrorCode;
use quire_links::{LinkError, UrlRefusal};

use crate::error::{ApiError, worded};

impl From<LinkError> for ApiError {
    fn from(e: LinkError) -> Self {
        let code = match e {
            LinkError::InsufficientScope => ErrorCode::InsufficientScope,
            LinkError::NotFound => ErrorCode::NotFound,
            LinkError::Invalid(_) => ErrorCode::InvalidRequest,
            LinkError::Url { refusal, .. } => match refusal {
                UrlRefusal::Invalid => ErrorCode::InvalidUrl,
                UrlRefusal::TooLong => ErrorCode::UrlTooLong,
                UrlRefusal::Credentials => ErrorCode::UrlCredentials,
                UrlRefusal::Loop => ErrorCode::UrlLoop,
                UrlRefusal::Denied => ErrorCode::UrlDenied,
            },
            LinkError::PasswordRequired => ErrorCode::PasswordRequired,
            LinkError::AliasConflict => ErrorCode::AliasConflict,
            LinkError::PublicIdExhausted => ErrorCode::PublicIdExhausted,
            LinkError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}
