//! An account's activation and the email it sends.

use quire_accounts::{ActivationError, RequestProblem};
use quire_kernel::ErrorCode;
use quire_mail::MailError;
use serde_json::Value;

use crate::error::{ApiError, worded};

impl From<ActivationError> for ApiError {
    fn from(e: ActivationError) -> Self {
        let code = match &e {
            ActivationError::RateLimited { retry_after_secs } => {
                let mut err = worded(ErrorCode::RateLimited, &e);
                err.retry_after = Some(*retry_after_secs);
                return err;
            }
            ActivationError::InvalidBody(RequestProblem::NotJson(_)) => ErrorCode::InvalidJson,
            ActivationError::InvalidBody(RequestProblem::Fields(_)) => ErrorCode::InvalidBody,
            ActivationError::AlreadyActivated => ErrorCode::AlreadyActivated,
            ActivationError::CaptchaFailed(_) => ErrorCode::CaptchaFailed,
            ActivationError::InvalidPhone(_) => ErrorCode::InvalidPhone,
            ActivationError::NotEligible => ErrorCode::NotEligible,
            ActivationError::UnknownAccount => ErrorCode::InvalidApiKey,
            ActivationError::Infra(e) => return e.clone().into(),
        };
        worded(code, &e)
    }
}

impl From<MailError> for ApiError {
    fn from(e: MailError) -> Self {
        match e {
            MailError::InsufficientScope => worded(ErrorCode::InsufficientScope, &e),
            MailError::InvalidInput(_) => worded(ErrorCode::InvalidEmailInput, &e),
            MailError::QuotaExceeded { retry_after_hours } => {
                worded(ErrorCode::EmailQuotaExceeded, &e)
                    .with_field("retry_after_hours", Value::from(retry_after_hours))
            }
            MailError::SendFailed(_) => worded(ErrorCode::SendFailed, &e),
            MailError::Infra(e) => e.into(),
        }
    }
}
