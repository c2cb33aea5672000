//! The OAuth server's errors and the device login's: the RFCs fix their codes.

use quire_device_auth::{PollError, StartError};
use quire_kernel::ErrorCode;
use quire_oauth::{ClientError, DecisionError, RegistrationError, TokenError};
use serde_json::Value;

use crate::error::{ApiError, SessionRefusal, worded};

/// RFC 8628 fixes the codes.
impl From<StartError> for ApiError {
    fn from(e: StartError) -> Self {
        let code = match e {
            StartError::InvalidRequest(_) => ErrorCode::InvalidRequest,
            StartError::RateLimited => ErrorCode::RateLimited,
            StartError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}

impl From<PollError> for ApiError {
    fn from(e: PollError) -> Self {
        let code = match e {
            PollError::UnsupportedGrantType => ErrorCode::UnsupportedGrantType,
            PollError::InvalidRequest(_) => ErrorCode::InvalidRequest,
            PollError::InvalidGrant => ErrorCode::InvalidGrant,
            PollError::AccessDenied => ErrorCode::AccessDenied,
            PollError::ExpiredToken => ErrorCode::ExpiredToken,
            PollError::AuthorizationPending => ErrorCode::AuthorizationPending,
            PollError::SlowDown { interval } => {
                return worded(ErrorCode::SlowDown, &e)
                    .with_field("interval", Value::from(interval));
            }
            PollError::RateLimited => ErrorCode::RateLimited,
            PollError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}

/// RFC 6749 §5.2: the body also carries `error_description`, and a client that tried
/// Basic authentication is answered with a Basic challenge.
impl From<TokenError> for ApiError {
    fn from(e: TokenError) -> Self {
        let code = match e {
            TokenError::InvalidRequest(_) => ErrorCode::InvalidRequest,
            TokenError::InvalidClient { .. } => ErrorCode::InvalidClient,
            TokenError::InvalidGrant(_) => ErrorCode::InvalidGrant,
            TokenError::UnsupportedGrantType => ErrorCode::UnsupportedGrantType,
            TokenError::InvalidScope(_) => ErrorCode::InvalidScope,
            TokenError::InvalidTarget(_) => ErrorCode::InvalidTarget,
            TokenError::UnsupportedTokenType => ErrorCode::UnsupportedTokenType,
            TokenError::RateLimited => ErrorCode::RateLimited,
            TokenError::Infra(e) => return e.into(),
        };
        let mut err = worded(code, &e).with_field("error_description", Value::from(e.to_string()));
        if let TokenError::InvalidClient { basic: true } = e {
            err.www_authenticate = Some(r#"Basic realm="quire""#.into());
        }
        err
    }
}

/// RFC 7591 §3.2.2: the body also carries `error_description`.
impl From<RegistrationError> for ApiError {
    fn from(e: RegistrationError) -> Self {
        let code = match e {
            RegistrationError::Disabled => ErrorCode::RegistrationDisabled,
            RegistrationError::InvalidRedirectUri(_) => ErrorCode::InvalidRedirectUri,
            RegistrationError::InvalidClientMetadata(_) => ErrorCode::InvalidClientMetadata,
            RegistrationError::RateLimited => ErrorCode::RateLimited,
            RegistrationError::Infra(e) => return e.into(),
        };
        worded(code, &e).with_field("error_description", Value::from(e.to_string()))
    }
}

impl From<DecisionError> for ApiError {
    fn from(e: DecisionError) -> Self {
        match e {
            DecisionError::UnknownRequest
            | DecisionError::ProjectRefused
            | DecisionError::ReadOnlyRefused => {
                ApiError::session(SessionRefusal::InvalidRequest, e.to_string())
            }
            DecisionError::Infra(e) => e.into(),
        }
    }
}

impl From<ClientError> for ApiError {
    fn from(e: ClientError) -> Self {
        let code = match e {
            ClientError::InsufficientScope => ErrorCode::InsufficientScope,
            ClientError::Forbidden => ErrorCode::Forbidden,
            ClientError::Invalid(_) => ErrorCode::InvalidBody,
            ClientError::NotFound => ErrorCode::NotFound,
            ClientError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}
