//! API keys: the key that authenticates a request, and minting, listing and revoking.

use quire_kernel::ErrorCode;
use quire_keys::{AuthError, ListKeysError, MintError, RevokeError, RevokeSelfError};
use serde_json::Value;

use crate::error::{ApiError, worded};

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::InvalidApiKey => {
                let mut err = worded(ErrorCode::InvalidApiKey, &e);
                err.www_authenticate = Some(r#"Bearer realm="quire""#.into());
                err
            }
            AuthError::InvalidToken(description) => {
                let mut err = worded(ErrorCode::InvalidToken, &e)
                    .with_field("error_description", Value::from(description));
                err.www_authenticate = Some(format!(
                    r#"Bearer realm="quire", error="invalid_token", error_description="{description}""#
                ));
                err
            }
            AuthError::NotActivated => worded(ErrorCode::NotActivated, &e),
            AuthError::NotMaster => worded(ErrorCode::InsufficientScope, &e),
            AuthError::Infra(e) => e.into(),
        }
    }
}

impl From<MintError> for ApiError {
    fn from(e: MintError) -> Self {
        let code = match e {
            MintError::InsufficientScope | MintError::ProjectNotOwned => {
                ErrorCode::InsufficientScope
            }
            // The spec gives key-mint validation a prose `error`.
            MintError::InvalidInput(m) => return ApiError::prose(m),
            MintError::InvalidProject(_) => ErrorCode::InvalidBody,
            MintError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}

impl From<ListKeysError> for ApiError {
    fn from(e: ListKeysError) -> Self {
        match e {
            ListKeysError::InsufficientScope => worded(ErrorCode::InsufficientScope, &e),
            ListKeysError::Infra(e) => e.into(),
        }
    }
}

impl From<RevokeError> for ApiError {
    fn from(e: RevokeError) -> Self {
        let code = match e {
            RevokeError::InsufficientScope => ErrorCode::InsufficientScope,
            RevokeError::NotFound => ErrorCode::NotFound,
            RevokeError::CurrentKey => ErrorCode::CannotRevokeCurrentKey,
            RevokeError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}

impl From<RevokeSelfError> for ApiError {
    fn from(e: RevokeSelfError) -> Self {
        match e {
            RevokeSelfError::NotAnApiKey => worded(ErrorCode::InvalidRequest, &e),
            RevokeSelfError::Infra(e) => e.into(),
        }
    }
}
