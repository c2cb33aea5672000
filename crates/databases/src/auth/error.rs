//! Why an auth request is refused, each with GoTrue's status and `error_code`, so
//! supabase-js and supabase-py raise the errors their users already handle.

use quire_kernel::{InfraError, InfraKind};

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// A malformed request: the message says what is wrong.
    #[error("{0}")]
    Validation(String),
    #[error(
        "Password should be at least {} characters.",
        super::MIN_PASSWORD_CHARS
    )]
    WeakPassword,
    #[error("Signups not allowed for this instance")]
    SignupDisabled,
    #[error("User already registered")]
    UserExists,
    #[error("A user with this email address has already been registered")]
    EmailExists,
    #[error("Invalid login credentials")]
    InvalidCredentials,
    #[error("Email not confirmed")]
    EmailNotConfirmed,
    #[error("Invalid Refresh Token: Refresh Token Not Found")]
    RefreshTokenNotFound,
    #[error("Invalid Refresh Token: Already Used")]
    RefreshTokenReused,
    #[error("unsupported_grant_type")]
    UnsupportedGrant,
    #[error("This endpoint requires a Bearer token")]
    NoAuthorization,
    #[error("invalid JWT: unable to parse or verify signature, {0}")]
    BadJwt(&'static str),
    #[error("Session from session_id claim in JWT does not exist")]
    SessionNotFound,
    #[error("User from sub claim in JWT does not exist")]
    UserNotFound,
    #[error("Request rate limit reached")]
    RateLimited { retry_after_secs: u64 },
    /// The account's daily email quota cannot carry the confirmation (for a registered
    /// address too, whose sign-up sends nothing: the refusal tells nobody who is registered).
    #[error("Email rate limit exceeded")]
    EmailQuotaExceeded,
    /// The confirmation could not be made or queued; the cause is for the log only.
    #[error("Error sending confirmation email")]
    EmailNotSent(String),
    #[error("Email link is invalid or has expired")]
    LinkInvalid,
    /// A one-time code that is not the address's, or none awaits its use.
    #[error("Token has expired or is invalid")]
    TokenInvalid,
    /// A mail to this address left less than a minute ago (GoTrue's `SMTP_MAX_FREQUENCY`).
    #[error("For security purposes, you can only request this after {retry_after_secs} seconds.")]
    MailTooSoon { retry_after_secs: u64 },
    /// `POST otp` for an address with no user, which may not be made one (`create_user`
    /// false).
    #[error("Signups not allowed for otp")]
    OtpDisabled,
    /// The admin API with a credential that is not the database's `service_role`.
    #[error("User not allowed")]
    NotAdmin,
    /// The admin API's path names no user id.
    #[error("user_id must be an UUID")]
    UserIdInvalid,
    /// The admin API names a user there is not: the message says which.
    #[error("{0}")]
    NoSuchUser(&'static str),
    /// The password typed on a confirmation link's page is not its sign-up's; the try
    /// counted, and `tries_left` more are allowed (none: the link is dead).
    #[error("Invalid login credentials")]
    LinkPasswordWrong { tries_left: u32 },
    #[error(transparent)]
    Infra(#[from] InfraError),
}

impl AuthError {
    /// GoTrue's HTTP status for the refusal.
    #[must_use]
    pub fn status(&self) -> u16 {
        match self {
            Self::Validation(_)
            | Self::InvalidCredentials
            | Self::EmailNotConfirmed
            | Self::RefreshTokenNotFound
            | Self::RefreshTokenReused
            | Self::UnsupportedGrant
            | Self::LinkPasswordWrong { .. } => 400,
            Self::NoAuthorization => 401,
            Self::BadJwt(_)
            | Self::SessionNotFound
            | Self::LinkInvalid
            | Self::TokenInvalid
            | Self::NotAdmin => 403,
            Self::UserNotFound | Self::UserIdInvalid | Self::NoSuchUser(_) => 404,
            Self::WeakPassword
            | Self::SignupDisabled
            | Self::UserExists
            | Self::EmailExists
            | Self::OtpDisabled => 422,
            Self::RateLimited { .. } | Self::EmailQuotaExceeded | Self::MailTooSoon { .. } => 429,
            Self::Infra(e) if e.kind() == InfraKind::Unavailable => 503,
            Self::EmailNotSent(_) | Self::Infra(_) => 500,
        }
    }

    /// GoTrue's `error_code`.
    #[must_use]
    pub fn error_code(&self) -> &'static str {
        match self {
            Self::Validation(_) | Self::UserIdInvalid => "validation_failed",
            Self::WeakPassword => "weak_password",
            Self::SignupDisabled => "signup_disabled",
            Self::UserExists => "user_already_exists",
            Self::EmailExists => "email_exists",
            Self::InvalidCredentials | Self::LinkPasswordWrong { .. } => "invalid_credentials",
            Self::EmailNotConfirmed => "email_not_confirmed",
            Self::RefreshTokenNotFound => "refresh_token_not_found",
            Self::RefreshTokenReused => "refresh_token_already_used",
            Self::UnsupportedGrant => "unsupported_grant_type",
            Self::NoAuthorization => "no_authorization",
            Self::BadJwt(_) => "bad_jwt",
            Self::SessionNotFound => "session_not_found",
            Self::UserNotFound | Self::NoSuchUser(_) => "user_not_found",
            Self::RateLimited { .. } => "over_request_rate_limit",
            Self::EmailQuotaExceeded | Self::MailTooSoon { .. } => "over_email_send_rate_limit",
            Self::LinkInvalid | Self::TokenInvalid => "otp_expired",
            Self::OtpDisabled => "otp_disabled",
            Self::NotAdmin => "not_admin",
            Self::Infra(e) if e.kind() == InfraKind::Unavailable => "request_timeout",
            Self::EmailNotSent(_) | Self::Infra(_) => "unexpected_failure",
        }
    }

    /// The message a client may show: never the cause of an internal failure.
    #[must_use]
    pub fn public_message(&self) -> String {
        match self {
            Self::Infra(e) if e.kind() == InfraKind::Unavailable => {
                "The database is busy, please try again in a moment".to_owned()
            }
            Self::Infra(_) => "Unexpected failure, please try again".to_owned(),
            other => other.to_string(),
        }
    }
}

impl From<crate::ports::UserWriteError> for AuthError {
    fn from(e: crate::ports::UserWriteError) -> Self {
        match e {
            crate::ports::UserWriteError::EmailTaken => Self::UserExists,
            crate::ports::UserWriteError::Infra(e) => Self::Infra(e),
        }
    }
}
