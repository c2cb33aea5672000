//! The API error: a code from the kernel's table (or, for key-mint validation, prose), a
//! human message, and the extra fields the spec names. Domain errors map here, once each.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use quire_device_auth::{PollError, StartError};
use quire_kernel::{ErrorCode, InfraError};
use quire_keys::{AuthError, ListKeysError, MintError, RevokeError};
use quire_pages::PageError;
use quire_projects::{
    AddressError, AssignError, DeleteProjectError, GetProjectError, GrantError, ListProjectsError,
    WriteProjectError,
};
use serde_json::{Map, Value, json};

/// Why a dashboard form post is refused before it reaches the domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionRefusal {
    /// Neither `Origin` nor `Referer` is the dashboard's own origin (a cross-site post).
    InvalidOrigin,
    /// A required field is missing or malformed.
    InvalidRequest,
    /// No live dashboard session cookie.
    NotSignedIn,
}

/// An error response. Its `Display` and `Debug` (what the request log shows) name the
/// status and code only: the message may quote the client's input, which stays out of logs.
pub struct ApiError {
    status: StatusCode,
    /// The `error` field: a stable code, or prose where the spec says so.
    error: String,
    message: String,
    extra: Map<String, Value>,
    www_authenticate: Option<String>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let code = if self.error.len() <= 64 {
            self.error.as_str()
        } else {
            "(prose)"
        };
        write!(f, "{} {code}", self.status.as_u16())
    }
}

impl std::fmt::Debug for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiError({self})")
    }
}

impl ApiError {
    /// An error with a stable code; the status comes from the kernel's table.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::from_u16(code.http_status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            error: code.as_str().to_owned(),
            message: message.into(),
            extra: Map::new(),
            www_authenticate: None,
        }
    }

    /// A 400 whose `error` is prose (key-mint `name`/`apps` validation, per the spec).
    pub fn prose(message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            status: StatusCode::BAD_REQUEST,
            error: message.clone(),
            message,
            extra: Map::new(),
            www_authenticate: None,
        }
    }

    /// A refusal of a dashboard form post (the agent-login decision): the spec gives these
    /// prose codes rather than snake_case ones.
    pub fn session(refusal: SessionRefusal, message: impl Into<String>) -> Self {
        let (status, error) = match refusal {
            SessionRefusal::InvalidOrigin => (StatusCode::FORBIDDEN, "invalid origin"),
            SessionRefusal::InvalidRequest => (StatusCode::BAD_REQUEST, "invalid request"),
            SessionRefusal::NotSignedIn => (StatusCode::UNAUTHORIZED, "not signed in"),
        };
        Self {
            status,
            error: error.to_owned(),
            message: message.into(),
            extra: Map::new(),
            www_authenticate: None,
        }
    }

    /// A 500 for an infrastructure failure; the cause is logged, never shown.
    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(ErrorCode::InternalError, "internal error; try again later")
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(ErrorCode::NotFound, format!("{what} not found"))
    }

    pub fn with_field(mut self, name: &str, value: Value) -> Self {
        self.extra.insert(name.to_owned(), value);
        self
    }

    #[must_use]
    pub fn code(&self) -> &str {
        &self.error
    }

    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut body = json!({ "error": self.error, "message": self.message });
        if let Value::Object(map) = &mut body {
            map.extend(self.extra.clone());
        }
        let mut response = HttpResponse::build(self.status);
        if let Some(challenge) = &self.www_authenticate
            && let Ok(v) = HeaderValue::from_str(challenge)
        {
            response.insert_header((header::WWW_AUTHENTICATE, v));
        }
        response.insert_header((header::CACHE_CONTROL, "no-store"));
        response.json(body)
    }
}

/// RFC 8628 fixes the codes; the device-login service words the messages.
impl From<StartError> for ApiError {
    fn from(e: StartError) -> Self {
        let message = e.to_string();
        match e {
            StartError::InvalidRequest(m) => ApiError::new(ErrorCode::InvalidRequest, m),
            StartError::RateLimited => ApiError::new(ErrorCode::RateLimited, message),
            StartError::Infra(e) => e.into(),
        }
    }
}

impl From<PollError> for ApiError {
    fn from(e: PollError) -> Self {
        let message = e.to_string();
        let code = match e {
            PollError::UnsupportedGrantType => ErrorCode::UnsupportedGrantType,
            PollError::InvalidRequest(m) => return ApiError::new(ErrorCode::InvalidRequest, m),
            PollError::InvalidGrant => ErrorCode::InvalidGrant,
            PollError::AccessDenied => ErrorCode::AccessDenied,
            PollError::ExpiredToken => ErrorCode::ExpiredToken,
            PollError::AuthorizationPending => ErrorCode::AuthorizationPending,
            PollError::SlowDown { interval } => {
                return ApiError::new(ErrorCode::SlowDown, message)
                    .with_field("interval", Value::from(interval));
            }
            PollError::RateLimited => ErrorCode::RateLimited,
            PollError::Infra(e) => return e.into(),
        };
        ApiError::new(code, message)
    }
}

impl From<InfraError> for ApiError {
    fn from(e: InfraError) -> Self {
        tracing::error!(kind = ?e.kind(), error = %e.chain(), "infrastructure failure");
        Self::new(ErrorCode::InternalError, "internal error; try again later")
    }
}

fn insufficient_scope(why: &str) -> ApiError {
    ApiError::new(ErrorCode::InsufficientScope, why)
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::InvalidApiKey => {
                let mut err = ApiError::new(
                    ErrorCode::InvalidApiKey,
                    "missing, unrecognised or revoked API key",
                );
                err.www_authenticate = Some(r#"Bearer realm="quire""#.into());
                err
            }
            AuthError::InvalidToken(description) => {
                let mut err = ApiError::new(ErrorCode::InvalidToken, "bearer token rejected")
                    .with_field("error_description", Value::from(description));
                err.www_authenticate = Some(format!(
                    r#"Bearer realm="quire", error="invalid_token", error_description="{description}""#
                ));
                err
            }
            AuthError::NotActivated => {
                ApiError::new(ErrorCode::NotActivated, "this account is not activated yet")
            }
            AuthError::Infra(e) => e.into(),
        }
    }
}

impl From<AddressError> for ApiError {
    fn from(e: AddressError) -> Self {
        match e {
            AddressError::InsufficientScope => {
                insufficient_scope("this credential cannot reach that project")
            }
            AddressError::Infra(e) => e.into(),
        }
    }
}

impl From<ListProjectsError> for ApiError {
    fn from(e: ListProjectsError) -> Self {
        match e {
            ListProjectsError::InsufficientScope => {
                insufficient_scope("listing projects needs a master key or a bearer token")
            }
            ListProjectsError::Infra(e) => e.into(),
        }
    }
}

impl From<GetProjectError> for ApiError {
    fn from(e: GetProjectError) -> Self {
        match e {
            GetProjectError::NotFound => ApiError::not_found("project"),
            GetProjectError::Infra(e) => e.into(),
        }
    }
}

impl From<WriteProjectError> for ApiError {
    fn from(e: WriteProjectError) -> Self {
        match e {
            WriteProjectError::InsufficientScope => insufficient_scope("a master key is required"),
            WriteProjectError::NotFound => ApiError::not_found("project"),
            WriteProjectError::InvalidProject(m) => ApiError::new(ErrorCode::InvalidProject, m),
            WriteProjectError::InvalidSlug(m) => ApiError::new(ErrorCode::InvalidSlug, m),
            WriteProjectError::SlugTaken => {
                ApiError::new(ErrorCode::SlugTaken, "that slug is already taken")
            }
            WriteProjectError::ClientAlreadyAttached => ApiError::new(
                ErrorCode::ClientAlreadyAttached,
                "that OAuth client already has a home project",
            ),
            WriteProjectError::Infra(e) => e.into(),
        }
    }
}

impl From<DeleteProjectError> for ApiError {
    fn from(e: DeleteProjectError) -> Self {
        match e {
            DeleteProjectError::InsufficientScope => insufficient_scope("a master key is required"),
            DeleteProjectError::NotFound => ApiError::not_found("project"),
            DeleteProjectError::ConfirmMismatch => ApiError::new(
                ErrorCode::InvalidBody,
                "confirm must equal the id of the project being deleted",
            ),
            DeleteProjectError::InvalidMoveTo(m) => ApiError::new(ErrorCode::InvalidBody, m),
            DeleteProjectError::LastProject => ApiError::new(
                ErrorCode::LastProject,
                "the account's only project cannot be deleted",
            ),
            DeleteProjectError::NotEmpty => ApiError::new(
                ErrorCode::ProjectNotEmpty,
                "the project still holds resources; move them or pass move_to",
            ),
            DeleteProjectError::Infra(e) => e.into(),
        }
    }
}

impl From<AssignError> for ApiError {
    fn from(e: AssignError) -> Self {
        match e {
            AssignError::InsufficientScope => insufficient_scope("a master key is required"),
            AssignError::NotFound => ApiError::not_found("resource or project"),
            AssignError::MasterKey => ApiError::new(
                ErrorCode::InvalidBody,
                "master keys always belong to the account's default project",
            ),
            AssignError::Infra(e) => e.into(),
        }
    }
}

impl From<GrantError> for ApiError {
    fn from(e: GrantError) -> Self {
        match e {
            GrantError::InsufficientScope => insufficient_scope(
                "grants need a master key; OAuth bearer tokens can never manage grants",
            ),
            GrantError::NotFound => ApiError::not_found("key, project or grant"),
            GrantError::Infra(e) => e.into(),
        }
    }
}

impl From<MintError> for ApiError {
    fn from(e: MintError) -> Self {
        match e {
            MintError::InsufficientScope => insufficient_scope(
                "minting keys needs a master key; OAuth bearer tokens can never mint keys",
            ),
            MintError::InvalidInput(m) => ApiError::prose(m),
            MintError::InvalidProject(m) => {
                ApiError::new(ErrorCode::InvalidBody, format!("project: {m}"))
            }
            MintError::ProjectNotOwned => {
                insufficient_scope("project is not a project of this account")
            }
            MintError::Infra(e) => e.into(),
        }
    }
}

impl From<ListKeysError> for ApiError {
    fn from(e: ListKeysError) -> Self {
        match e {
            ListKeysError::InsufficientScope => insufficient_scope("a master key is required"),
            ListKeysError::Infra(e) => e.into(),
        }
    }
}

impl From<RevokeError> for ApiError {
    fn from(e: RevokeError) -> Self {
        match e {
            RevokeError::InsufficientScope => insufficient_scope("a master key is required"),
            RevokeError::NotFound => ApiError::not_found("key"),
            RevokeError::CurrentKey => ApiError::new(
                ErrorCode::CannotRevokeCurrentKey,
                "a key cannot revoke itself; use another master key",
            ),
            RevokeError::Infra(e) => e.into(),
        }
    }
}

impl From<PageError> for ApiError {
    fn from(e: PageError) -> Self {
        match e {
            PageError::InsufficientScope => {
                insufficient_scope("this credential cannot reach that project or page")
            }
            PageError::NotFound => ApiError::not_found("page"),
            PageError::Invalid(m) => ApiError::new(ErrorCode::InvalidRequest, m),
            PageError::PasswordRequired => ApiError::new(
                ErrorCode::PasswordRequired,
                "access is password, so a password is required",
            ),
            PageError::SlugConflict => ApiError::new(
                ErrorCode::SlugConflict,
                "you already have a page with that slug",
            ),
            PageError::SlugTaken => ApiError::new(
                ErrorCode::SlugTaken,
                "you already have a page with that slug",
            ),
            PageError::AliasConflict => {
                ApiError::new(ErrorCode::AliasConflict, "that alias is already in use")
            }
            PageError::TooLarge { limit, message } => {
                ApiError::new(ErrorCode::PayloadTooLarge, message)
                    .with_field("limit", Value::from(limit.as_str()))
            }
            PageError::PublicIdExhausted => ApiError::new(
                ErrorCode::PublicIdExhausted,
                "no free public id was found; retry the request",
            ),
            PageError::ProfileHandleMissing => ApiError::new(
                ErrorCode::ProfileHandleMissing,
                "the page owner has no handle",
            ),
            PageError::StorageCleanupFailed => ApiError::new(
                ErrorCode::StorageCleanupFailed,
                "the page was deleted but some of its stored files were not; they will be removed later",
            ),
            PageError::LinkCleanupFailed => ApiError::new(
                ErrorCode::LinkCleanupFailed,
                "the page was deleted but its short link was not",
            ),
            PageError::Infra(e) => e.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::to_bytes;

    async fn body_of(e: ApiError) -> (u16, Value, Option<String>) {
        let resp = e.error_response();
        let status = resp.status().as_u16();
        let challenge = resp
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .map(|v| v.to_str().unwrap().to_owned());
        let bytes = to_bytes(resp.into_body()).await.unwrap();
        (status, serde_json::from_slice(&bytes).unwrap(), challenge)
    }

    #[tokio::test]
    async fn error_bodies_have_code_message_and_extra_fields() {
        let (status, body, challenge) =
            body_of(AuthError::InvalidToken("malformed bearer token").into()).await;
        assert_eq!(status, 401);
        assert_eq!(body["error"], "invalid_token");
        assert_eq!(body["error_description"], "malformed bearer token");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert!(challenge.unwrap().contains("invalid_token"));

        let (status, body, _) =
            body_of(MintError::InvalidInput("name must be 1-60 characters".into()).into()).await;
        assert_eq!(status, 400);
        assert_eq!(body["error"], "name must be 1-60 characters");
    }

    #[tokio::test]
    async fn infrastructure_failures_are_500_without_their_cause() {
        let (status, body, _) =
            body_of(InfraError::new("connection refused to 10.0.0.5 password=hunter2").into())
                .await;
        assert_eq!(status, 500);
        assert_eq!(body["error"], "internal_error");
        assert!(!body.to_string().contains("hunter2"));
    }
}
