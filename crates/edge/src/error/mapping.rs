//! Each domain error to its code, once.

use quire_accounts::{ActivationError, RequestProblem};
use quire_databases::DatabaseError;
use quire_device_auth::{PollError, StartError};
use quire_kernel::{ErrorCode, PagingError};
use quire_keys::{AuthError, ListKeysError, MintError, RevokeError, RevokeSelfError};
use quire_links::{LinkError, UrlRefusal};
use quire_mail::MailError;
use quire_oauth::{ClientError, DecisionError, RegistrationError, TokenError};
use quire_objects::ObjectError;
use quire_pages::PageError;
use quire_projects::{
    AddressError, AssignError, DeleteProjectError, GetProjectError, GrantError, ListProjectsError,
    WriteProjectError,
};
use serde_json::Value;

use super::{ApiError, SessionRefusal, worded};

/// A list's `limit` or `cursor` (`quire_kernel::paging`).
impl From<PagingError> for ApiError {
    fn from(e: PagingError) -> Self {
        let code = match e {
            PagingError::InvalidLimit => ErrorCode::InvalidLimit,
            PagingError::InvalidCursor => ErrorCode::InvalidCursor,
        };
        worded(code, &e)
    }
}

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

impl From<AddressError> for ApiError {
    fn from(e: AddressError) -> Self {
        match e {
            AddressError::InsufficientScope => worded(ErrorCode::InsufficientScope, &e),
            AddressError::Infra(e) => e.into(),
        }
    }
}

impl From<ListProjectsError> for ApiError {
    fn from(e: ListProjectsError) -> Self {
        match e {
            ListProjectsError::InsufficientScope => worded(ErrorCode::InsufficientScope, &e),
            ListProjectsError::Infra(e) => e.into(),
        }
    }
}

impl From<GetProjectError> for ApiError {
    fn from(e: GetProjectError) -> Self {
        match e {
            GetProjectError::NotFound => worded(ErrorCode::NotFound, &e),
            GetProjectError::Infra(e) => e.into(),
        }
    }
}

impl From<WriteProjectError> for ApiError {
    fn from(e: WriteProjectError) -> Self {
        let code = match e {
            WriteProjectError::InsufficientScope => ErrorCode::InsufficientScope,
            WriteProjectError::NotFound => ErrorCode::NotFound,
            WriteProjectError::InvalidProject(_) => ErrorCode::InvalidProject,
            WriteProjectError::InvalidSlug(_) => ErrorCode::InvalidSlug,
            WriteProjectError::SlugTaken => ErrorCode::SlugTaken,
            WriteProjectError::ClientAlreadyAttached => ErrorCode::ClientAlreadyAttached,
            WriteProjectError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}

impl From<DeleteProjectError> for ApiError {
    fn from(e: DeleteProjectError) -> Self {
        let code = match e {
            DeleteProjectError::InsufficientScope => ErrorCode::InsufficientScope,
            DeleteProjectError::NotFound => ErrorCode::NotFound,
            DeleteProjectError::ConfirmMismatch | DeleteProjectError::InvalidMoveTo(_) => {
                ErrorCode::InvalidBody
            }
            DeleteProjectError::LastProject => ErrorCode::LastProject,
            DeleteProjectError::NotEmpty => ErrorCode::ProjectNotEmpty,
            DeleteProjectError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}

impl From<AssignError> for ApiError {
    fn from(e: AssignError) -> Self {
        let code = match e {
            AssignError::InsufficientScope => ErrorCode::InsufficientScope,
            AssignError::NotFound => ErrorCode::NotFound,
            AssignError::MasterKey => ErrorCode::InvalidBody,
            AssignError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}

impl From<GrantError> for ApiError {
    fn from(e: GrantError) -> Self {
        let code = match e {
            GrantError::InsufficientScope => ErrorCode::InsufficientScope,
            GrantError::NotFound => ErrorCode::NotFound,
            GrantError::Infra(e) => return e.into(),
        };
        worded(code, &e)
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

/// A quota's refusal: which (`limit`, as the size limits name theirs), the account's use
/// and the quota, as figures.
fn quota(code: ErrorCode, e: &dyn std::error::Error, which: &str, used: u64, of: u64) -> ApiError {
    worded(code, e)
        .with_field("limit", Value::from(which))
        .with_field("used", Value::from(used))
        .with_field("quota", Value::from(of))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The message a client reads is the domain error's own text, whatever the code.
    #[test]
    fn domain_errors_answer_in_their_own_words() {
        fn same<E: std::fmt::Display>(e: E) -> bool
        where
            ApiError: From<E>,
        {
            let text = e.to_string();
            ApiError::from(e).message() == text
        }
        assert!(same(AuthError::InvalidApiKey));
        assert!(same(AuthError::InvalidToken("malformed bearer token")));
        assert!(same(AddressError::InsufficientScope));
        assert!(same(ListProjectsError::InsufficientScope));
        assert!(same(GetProjectError::NotFound));
        assert!(same(WriteProjectError::SlugTaken));
        assert!(same(WriteProjectError::InvalidSlug(
            "slug is too long".into()
        )));
        assert!(same(DeleteProjectError::ConfirmMismatch));
        assert!(same(DeleteProjectError::NotEmpty));
        assert!(same(AssignError::NotFound));
        assert!(same(GrantError::InsufficientScope));
        assert!(same(MintError::InvalidProject("not a uuid".into())));
        assert!(same(MintError::ProjectNotOwned));
        assert!(same(ListKeysError::InsufficientScope));
        assert!(same(RevokeError::CurrentKey));
        assert!(same(PageError::PasswordRequired));
        assert!(same(PageError::StorageCleanupFailed));
        assert!(same(PollError::SlowDown { interval: 8 }));
        assert!(same(StartError::RateLimited));
        assert!(same(ClientError::Forbidden));
        assert!(same(ActivationError::NotEligible));
        assert!(same(ActivationError::RateLimited {
            retry_after_secs: 900
        }));
        assert!(same(ClientError::Invalid(
            "redirect_uris[0] must not have a fragment".into()
        )));
    }

    #[test]
    fn activation_refusals_carry_their_codes_and_retry_after() {
        use actix_web::ResponseError as _;
        let limited = ApiError::from(ActivationError::RateLimited {
            retry_after_secs: 900,
        });
        let response = limited.error_response();
        assert_eq!(response.status().as_u16(), 429);
        assert_eq!(
            response
                .headers()
                .get("retry-after")
                .unwrap()
                .to_str()
                .unwrap(),
            "900"
        );
        for (e, code) in [
            (ActivationError::AlreadyActivated, "already_activated"),
            (ActivationError::NotEligible, "not_eligible"),
            (
                ActivationError::InvalidBody(RequestProblem::NotJson("x".into())),
                "invalid_json",
            ),
            (
                ActivationError::InvalidBody(RequestProblem::Fields("x".into())),
                "invalid_body",
            ),
        ] {
            assert_eq!(ApiError::from(e).code(), code);
        }
    }
}
