//! The spec's error codes, each defined once with its HTTP status, and the opaque
//! infrastructure error every port uses for "the database or store failed".

use std::fmt;

macro_rules! error_codes {
    ($($variant:ident = ($code:literal, $status:literal)),+ $(,)?) => {
        /// Every stable error code of the API, with its HTTP status.
        ///
        /// This is the one table that maps codes to statuses: the HTTP layer asks
        /// [`ErrorCode::http_status`] and never picks a status of its own.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode { $($variant),+ }

        impl ErrorCode {
            /// All codes, in table order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The wire string, as in the `error` field of a response body.
            #[must_use]
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $code),+ }
            }

            /// The HTTP status the code is answered with.
            #[must_use]
            pub fn http_status(self) -> u16 {
                match self { $(ErrorCode::$variant => $status),+ }
            }
        }
    };
}

error_codes! {
    InvalidApiKey = ("invalid_api_key", 401),
    InvalidToken = ("invalid_token", 401),
    InsufficientScope = ("insufficient_scope", 403),
    NotActivated = ("not_activated", 403),
    CaptchaFailed = ("captcha_failed", 400),
    RateLimited = ("rate_limited", 429),
    InvalidPhone = ("invalid_phone", 400),
    NotEligible = ("not_eligible", 400),
    AlreadyActivated = ("already_activated", 409),
    InvalidJson = ("invalid_json", 400),
    InvalidBody = ("invalid_body", 400),
    InvalidProject = ("invalid_project", 400),
    InvalidSlug = ("invalid_slug", 400),
    SlugTaken = ("slug_taken", 409),
    SlugConflict = ("slug_conflict", 409),
    AliasConflict = ("alias_conflict", 409),
    PasswordRequired = ("password_required", 400),
    PublicIdExhausted = ("public_id_exhausted", 500),
    ProfileHandleMissing = ("profile_handle_missing", 500),
    StorageCleanupFailed = ("storage_cleanup_failed", 500),
    LinkCleanupFailed = ("link_cleanup_failed", 500),
    InvalidMultipartBody = ("invalid_multipart_body", 400),
    InvalidResourceType = ("invalid_resource_type", 400),
    ClientAlreadyAttached = ("client_already_attached", 409),
    ProjectNotEmpty = ("project_not_empty", 409),
    LastProject = ("last_project", 409),
    CannotRevokeCurrentKey = ("cannot_revoke_current_key", 400),
    Forbidden = ("forbidden", 403),
    InvalidEmailInput = ("invalid_email_input", 400),
    EmailQuotaExceeded = ("email_quota_exceeded", 429),
    SendFailed = ("send_failed", 502),
    DataApiDisabled = ("data_api_disabled", 409),
    DataApiNotEnabled = ("data_api_not_enabled", 400),
    NotFound = ("not_found", 404),
    MfaRequired = ("mfa_required", 403),
    InternalError = ("internal_error", 500),
    // Device login (RFC 8628 names).
    InvalidRequest = ("invalid_request", 400),
    UnsupportedGrantType = ("unsupported_grant_type", 400),
    AuthorizationPending = ("authorization_pending", 400),
    SlowDown = ("slow_down", 400),
    AccessDenied = ("access_denied", 400),
    ExpiredToken = ("expired_token", 400),
    InvalidGrant = ("invalid_grant", 400),
    // The OAuth token and revocation endpoints (RFC 6749 §5.2, RFC 7009 §2.2.1).
    InvalidClient = ("invalid_client", 401),
    InvalidScope = ("invalid_scope", 400),
    UnsupportedTokenType = ("unsupported_token_type", 400),
    // RFC 8707 §2: a resource indicator naming no resource of this server.
    InvalidTarget = ("invalid_target", 400),
    // Dynamic client registration (RFC 7591 §3.2.2), and Quire's own for the operator's off
    // switch.
    InvalidRedirectUri = ("invalid_redirect_uri", 400),
    InvalidClientMetadata = ("invalid_client_metadata", 400),
    RegistrationDisabled = ("registration_disabled", 403),
    // Quire's own, beyond the spec's table: a request body over the route's size limit.
    PayloadTooLarge = ("payload_too_large", 413),
    // Quire's own: a method the path does not take (with `Allow`).
    MethodNotAllowed = ("method_not_allowed", 405),
    // Quire's own: the server holds as many long bodies as it takes at once (with
    // `Retry-After`).
    ServerBusy = ("server_busy", 503),
    // Quire's own: a list's `limit` outside 1..=1000, or a `cursor` that is not one of the
    // list's `nextCursor`s.
    InvalidLimit = ("invalid_limit", 400),
    InvalidCursor = ("invalid_cursor", 400),
    // Quire's own: a URL link's `url` or `expiredUrl` broke one of the URL rules.
    InvalidUrl = ("invalid_url", 400),
    UrlTooLong = ("url_too_long", 400),
    UrlCredentials = ("url_credentials", 400),
    UrlLoop = ("url_loop", 400),
    UrlDenied = ("url_denied", 400),
    // Quire's own: the database service has no PostgreSQL cluster configured.
    DatabaseServiceUnavailable = ("database_service_unavailable", 503),
    // Quire's own: a database's SQL failed in PostgreSQL (with its SQLSTATE).
    SqlError = ("sql_error", 400),
    // Quire's own: the account has as many databases as its quota allows (with the figures).
    QuotaExceeded = ("quota_exceeded", 403),
    // Quire's own: what the account stores (its databases, its objects) is at or would pass
    // its quota of bytes (with the figures).
    StorageQuotaExceeded = ("storage_quota_exceeded", 413),
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of infrastructure failed, for logs and for what a caller may retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfraKind {
    /// Nothing answered in time, or no connection was free (pool exhausted, server down):
    /// worth retrying later.
    Unavailable,
    /// Stored data does not read back as the domain's types.
    Corrupt,
    /// Anything else (a failed query, an I/O error).
    Failed,
}

/// A failure of infrastructure behind a port (database unreachable, pool exhausted, I/O
/// error), with its kind and the adapter's error as its source. Its text is for logs only
/// and is never shown to API clients.
#[derive(Debug, Clone)]
pub struct InfraError {
    kind: InfraKind,
    message: String,
    /// `Arc` keeps the error `Clone` (caches hand one failure to every waiter).
    source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
}

impl InfraError {
    /// A failure described by `msg` alone, of kind [`InfraKind::Failed`].
    pub fn new(msg: impl Into<String>) -> Self {
        Self {
            kind: InfraKind::Failed,
            message: msg.into(),
            source: None,
        }
    }

    /// A failure described by `msg` alone, of kind [`InfraKind::Unavailable`]: nothing
    /// answered in time or no connection came free, so a caller may answer "retry".
    pub fn unavailable(msg: impl Into<String>) -> Self {
        Self {
            kind: InfraKind::Unavailable,
            message: msg.into(),
            source: None,
        }
    }

    /// A failure of `kind` caused by `source`, whose text becomes the message.
    pub fn caused_by(
        kind: InfraKind,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            kind,
            message: source.to_string(),
            source: Some(std::sync::Arc::new(source)),
        }
    }

    #[must_use]
    pub fn kind(&self) -> InfraKind {
        self.kind
    }

    /// The message and every cause below it, joined by `: `, for a log line.
    #[must_use]
    pub fn chain(&self) -> String {
        let mut out = self.message.clone();
        let mut next = std::error::Error::source(self);
        while let Some(cause) = next {
            let text = cause.to_string();
            if !out.ends_with(&text) {
                out.push_str(": ");
                out.push_str(&text);
            }
            next = cause.source();
        }
        out
    }
}

impl fmt::Display for InfraError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for InfraError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

/// Two failures are equal when of one kind with one message (domain errors that carry one
/// derive `PartialEq` for their tests).
impl PartialEq for InfraError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.message == other.message
    }
}

impl Eq for InfraError {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_snake_case_and_have_error_statuses() {
        let mut seen = HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "duplicate {code}");
            assert!(
                code.as_str()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_')
            );
            assert!((400..600).contains(&code.http_status()));
        }
        assert_eq!(ErrorCode::ALL.len(), 64);
    }

    #[derive(Debug, thiserror::Error)]
    #[error("pool timed out")]
    struct Timeout(#[source] std::io::Error);

    #[test]
    fn infrastructure_errors_keep_their_kind_and_causes() {
        let e = InfraError::caused_by(
            InfraKind::Unavailable,
            Timeout(std::io::Error::other("connection refused")),
        );
        assert_eq!(e.kind(), InfraKind::Unavailable);
        assert_eq!(e.to_string(), "pool timed out");
        assert_eq!(e.chain(), "pool timed out: connection refused");
        let copy = e.clone();
        assert_eq!(copy, e);
        assert_eq!(InfraError::new("x").kind(), InfraKind::Failed);
        assert_ne!(InfraError::new("x"), InfraError::new("y"));
    }

    #[test]
    fn statuses_match_the_spec_table() {
        assert_eq!(ErrorCode::InvalidApiKey.http_status(), 401);
        assert_eq!(ErrorCode::NotActivated.http_status(), 403);
        assert_eq!(ErrorCode::ProjectNotEmpty.http_status(), 409);
        assert_eq!(ErrorCode::CannotRevokeCurrentKey.http_status(), 400);
        assert_eq!(ErrorCode::InvalidClient.http_status(), 401);
        assert_eq!(ErrorCode::EmailQuotaExceeded.http_status(), 429);
        assert_eq!(ErrorCode::SendFailed.http_status(), 502);
        assert_eq!(ErrorCode::PublicIdExhausted.http_status(), 500);
    }

    /// The whole table, code by status in table order: a status that changes, or a code that
    /// comes or goes, shows in review as a snapshot diff.
    #[test]
    fn every_code_answers_its_reviewed_status() {
        let table: String = ErrorCode::ALL
            .iter()
            .map(|code| format!("{:<30} {}\n", code.as_str(), code.http_status()))
            .collect();
        insta::assert_snapshot!(table);
    }
}
