//! The gateway's own answers: the spec's table (`{message, code, hint, details}`, `code`
//! the status as a string, as Kong writes them), each of the domain's refusals mapped to
//! its answer in one place ([`refused`]), and the CORS headers every answer carries.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use quire_dataapi::RestAnswer;
use quire_databases::{DatabaseError, GatewayError, InstanceError};
use quire_edge::ApiError;
use serde_json::{Value, json};

/// What browsers may send and read: what supabase-js and supabase-py send, and the headers
/// the REST answers carry.
pub const ALLOW_HEADERS: &str = "apikey, authorization, content-type, content-profile, accept-profile, prefer, range, range-unit, x-client-info, x-supabase-api-version, x-retry-count";
pub const EXPOSE_HEADERS: &str =
    "content-range, content-location, location, preference-applied, proxy-status, retry-after";

/// One of the spec's gateway errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayRefusal {
    NoApiKey,
    InvalidApiKey,
    DatabaseNotFound,
    PathNotFound,
    Starting,
    /// The replica's data API connections are all busy.
    Busy,
    /// The database's account holds its share of them, all busy.
    AccountBusy,
    Unavailable,
    Internal,
}

impl From<&InstanceError> for GatewayRefusal {
    fn from(e: &InstanceError) -> Self {
        match e {
            InstanceError::Starting => Self::Starting,
            // Busy, not broken: the client retries.
            InstanceError::Saturated => Self::Busy,
            InstanceError::AccountBusy => Self::AccountBusy,
            InstanceError::Unavailable => Self::Unavailable,
        }
    }
}

impl GatewayRefusal {
    fn status(self) -> StatusCode {
        match self {
            Self::NoApiKey | Self::InvalidApiKey => StatusCode::UNAUTHORIZED,
            Self::DatabaseNotFound | Self::PathNotFound => StatusCode::NOT_FOUND,
            Self::Starting | Self::Busy | Self::AccountBusy => StatusCode::SERVICE_UNAVAILABLE,
            Self::Unavailable => StatusCode::BAD_GATEWAY,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn message(self) -> &'static str {
        match self {
            Self::NoApiKey => "No API key found in request",
            Self::InvalidApiKey => "Invalid API key",
            Self::DatabaseNotFound => "database not found",
            Self::PathNotFound => "Not found",
            Self::Starting => "database starting",
            Self::Busy => "too many data API connections",
            Self::AccountBusy => "too many data API connections for this account",
            Self::Unavailable => "upstream unavailable",
            Self::Internal => "internal error",
        }
    }

    fn hint(self) -> Value {
        match self {
            Self::NoApiKey => {
                json!("send the database's anon or service_role key in the apikey header")
            }
            Self::Starting | Self::Busy => json!("retry in a second"),
            Self::AccountBusy => json!(
                "retry in a second; this account's other databases are using its share of connections"
            ),
            _ => Value::Null,
        }
    }

    pub fn answer(self) -> HttpResponse {
        let status = self.status();
        let mut response = HttpResponse::build(status);
        response.insert_header((header::CONTENT_TYPE, "application/json; charset=utf-8"));
        if matches!(self, Self::Starting | Self::Busy | Self::AccountBusy) {
            response.insert_header((header::RETRY_AFTER, "1"));
        }
        if matches!(self, Self::NoApiKey | Self::InvalidApiKey) {
            response.insert_header((header::WWW_AUTHENTICATE, "Key realm=\"kong\""));
        }
        let body = json!({
            "message": self.message(),
            "code": status.as_u16().to_string(),
            "hint": self.hint(),
            "details": Value::Null,
        });
        cors(response.body(body.to_string()))
    }
}

/// The answer to a request the domain refused.
pub fn refused(e: &GatewayError) -> HttpResponse {
    match e {
        GatewayError::NotFound => GatewayRefusal::DatabaseNotFound.answer(),
        GatewayError::NoApiKey => GatewayRefusal::NoApiKey.answer(),
        GatewayError::InvalidApiKey => GatewayRefusal::InvalidApiKey.answer(),
        GatewayError::Rest(e) => rest(e.to_answer()),
        GatewayError::Instance(e) => GatewayRefusal::from(e).answer(),
        // The service is off on this server: the platform API's answer, as for the rest
        // of the database service.
        GatewayError::Service(DatabaseError::Unavailable) => {
            cors(ApiError::from(DatabaseError::Unavailable).error_response())
        }
        GatewayError::Service(e) => {
            tracing::error!(error = %e, "a data gateway request failed");
            GatewayRefusal::Internal.answer()
        }
    }
}

/// An answer of the REST subset, as `quire-dataapi` made it.
pub fn rest(answer: RestAnswer) -> HttpResponse {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = HttpResponse::build(status);
    for (name, value) in &answer.headers {
        response.insert_header((name.as_str(), value.as_str()));
    }
    cors(match answer.body {
        Some(body) => response.body(body),
        None => response.finish(),
    })
}

/// A preflight: any origin, the methods the REST subset takes, a day's caching.
pub fn preflight() -> HttpResponse {
    let mut response = HttpResponse::NoContent().finish();
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, HEAD, POST, PATCH, PUT, DELETE, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(ALLOW_HEADERS),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    cors(response)
}

/// Open to every origin, as Supabase's gateway: the keys are what guard a database, and a
/// browser sends none of its own (no cookie is ever read here).
pub fn cors(mut response: HttpResponse) -> HttpResponse {
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSE_HEADERS),
    );
    response
}
