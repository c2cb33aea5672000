//! The API error: a code from the kernel's table (or, for key-mint validation, prose), a
//! human message, and the extra fields the spec names. Domain errors map here, once each, to
//! a code only: the message is the domain error's own text, so each message a client reads
//! has one author. The edge words only what it refuses itself (a body, path or query it
//! cannot parse, a route or method that does not exist). An infrastructure failure is logged
//! with its kind and cause chain and answered with a fixed 500.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use quire_kernel::{ErrorCode, InfraError};
use serde_json::{Map, Value, json};

#[cfg(test)]
mod bodies;
mod mapping;

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
    /// Seconds for a `Retry-After` header.
    retry_after: Option<u64>,
    /// The request's body is refused unread: the connection closes after the answer.
    closes: bool,
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
            retry_after: None,
            closes: false,
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
            retry_after: None,
            closes: false,
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
            retry_after: None,
            closes: false,
        }
    }

    /// A 500 for a failure of the edge itself (a template, a cookie); the cause is logged,
    /// never shown. Domain infrastructure failures arrive as `InfraError` instead.
    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(ErrorCode::InternalError, "internal error; try again later")
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(ErrorCode::NotFound, format!("{what} not found"))
    }

    /// Adds a `Retry-After` of `secs` seconds.
    #[must_use]
    pub fn with_retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    /// Closes the connection after the answer: the request's body is refused unread (a
    /// long body with no place among the bodies in flight), as a 413's is.
    #[must_use]
    pub fn closing(mut self) -> Self {
        self.closes = true;
        self
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

    /// The HTTP status.
    #[must_use]
    pub fn status_code_u16(&self) -> u16 {
        self.status.as_u16()
    }

    /// The JSON body: `error`, `message` and the extra fields.
    #[must_use]
    pub fn body(&self) -> Value {
        let mut body = json!({ "error": self.error, "message": self.message });
        if let Value::Object(map) = &mut body {
            map.extend(self.extra.clone());
        }
        body
    }

    /// The `WWW-Authenticate` challenge, for a refused credential.
    #[must_use]
    pub fn challenge(&self) -> Option<&str> {
        self.www_authenticate.as_deref()
    }

    /// Seconds for a `Retry-After` header.
    #[must_use]
    pub fn retry_after(&self) -> Option<u64> {
        self.retry_after
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let body = self.body();
        let mut response = HttpResponse::build(self.status);
        if let Some(challenge) = &self.www_authenticate
            && let Ok(v) = HeaderValue::from_str(challenge)
        {
            response.insert_header((header::WWW_AUTHENTICATE, v));
        }
        if let Some(secs) = self.retry_after {
            response.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        response.insert_header((header::CACHE_CONTROL, "no-store"));
        if self.status == StatusCode::PAYLOAD_TOO_LARGE || self.closes {
            // The rest of the body is never read: a client that sends it all before reading
            // would wait on a connection nobody reads. Closing tells it to stop.
            response
                .insert_header((header::CONNECTION, "close"))
                .force_close();
        }
        response.json(body)
    }
}

impl From<InfraError> for ApiError {
    fn from(e: InfraError) -> Self {
        tracing::error!(kind = ?e.kind(), error = %e.chain(), "infrastructure failure");
        Self::new(ErrorCode::InternalError, "internal error; try again later")
    }
}

/// A domain error's answer: `code` with the error's own words. The domain crates author
/// every message a client reads (the `#[error]` text of each variant); this file only picks
/// codes, so a message is written once.
fn worded(code: ErrorCode, e: &dyn std::error::Error) -> ApiError {
    ApiError::new(code, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::to_bytes;
    use quire_keys::{AuthError, MintError};

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
