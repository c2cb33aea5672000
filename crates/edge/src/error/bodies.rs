//! Every refusal the mapping words, and those the edge words itself, answered as clients
//! read them (status, the headers a refusal adds, the JSON body) and compared with a
//! reviewed snapshot: a message, field or status that changes shows in review. The codes
//! the surfaces word in their handlers (`SURFACE_CODES`) are pinned by the black-box tests
//! that produce them.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::BTreeSet;

use actix_web::ResponseError;
use actix_web::http::header;
use quire_accounts::{ActivationError, CaptchaRefusal, PhoneError, RequestProblem};
use quire_databases::{DatabaseError, SqlRefusal};
use quire_device_auth::{PollError, StartError};
use quire_kernel::{ErrorCode, InfraError, PagingError};
use quire_keys::{AuthError, ListKeysError, MintError, RevokeError, RevokeSelfError};
use quire_links::{LinkError, UrlRefusal};
use quire_mail::{MailError, SendFailure};
use quire_oauth::{ClientError, DecisionError, RegistrationError, TokenError};
use quire_objects::ObjectError;
use quire_pages::PageError;
use quire_pages::validate::LimitKind;
use quire_projects::{
    AddressError, AssignError, DeleteProjectError, GetProjectError, GrantError, ListProjectsError,
    WriteProjectError,
};
use serde_json::{Map, Value, json};

use super::{ApiError, SessionRefusal};
use crate::in_flight::Busy;
use crate::json::RequestBody;

/// Codes a surface crate words in its own handler, not here: their bodies are snapshots of
/// the black-box tests that produce them (`tests/blackbox/snapshots/`).
const SURFACE_CODES: [ErrorCode; 3] = [
    ErrorCode::InvalidMultipartBody,
    ErrorCode::InvalidResourceType,
    ErrorCode::MfaRequired,
];

/// A body with one required field, for the JSON parser's refusals.
#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)] // read by serde only
struct Named {
    name: String,
}

impl RequestBody for Named {}

/// `e` as a client reads it: the status, the headers a refusal adds, the body.
fn answered(refusal: &str, e: &ApiError) -> Value {
    let response = e.error_response();
    let mut headers = Map::new();
    for name in [
        header::WWW_AUTHENTICATE,
        header::RETRY_AFTER,
        header::CONNECTION,
        header::ALLOW,
    ] {
        if let Some(value) = response.headers().get(&name) {
            headers.insert(name.to_string(), json!(value.to_str().unwrap()));
        }
    }
    // The label is the expression as `stringify!` wrote it, on one line.
    let refusal = refusal.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut entry = json!({ "refusal": refusal, "status": response.status().as_u16() });
    if !headers.is_empty() {
        entry["headers"] = Value::Object(headers);
    }
    entry["body"] = e.body();
    entry
}

/// The 405 the routes answer, read back from its response (it is built as one).
fn method_not_allowed() -> Value {
    let req = actix_web::test::TestRequest::delete().to_http_request();
    let response = crate::routing::method_not_allowed(&req, "GET, HEAD, PATCH");
    let headers = response.headers().clone();
    let body = actix_web::body::MessageBody::try_into_bytes(response.into_body()).unwrap();
    json!({
        "refusal": "routing::method_not_allowed",
        "status": 405,
        "headers": {
            "allow": headers.get(header::ALLOW).unwrap().to_str().unwrap(),
        },
        "body": serde_json::from_slice::<Value>(&body).unwrap(),
    })
}

/// The refusals, each labelled by the expression that makes it.
macro_rules! labelled {
    ($($e:expr),+ $(,)?) => {
        vec![$((stringify!($e), ApiError::from($e))),+]
    };
}

/// Each domain error of the mapping (every variant, with the wording its crate gives where
/// the caller words it), then the edge's own refusals.
#[rustfmt::skip]
fn refusals() -> Vec<(&'static str, ApiError)> {
    labelled![
        PagingError::InvalidLimit,
        PagingError::InvalidCursor,
        StartError::InvalidRequest("client_id is required".into()),
        StartError::RateLimited,
        PollError::UnsupportedGrantType,
        PollError::InvalidRequest("device_code is required".into()),
        PollError::InvalidGrant,
        PollError::AccessDenied,
        PollError::ExpiredToken,
        PollError::AuthorizationPending,
        PollError::SlowDown { interval: 10 },
        PollError::RateLimited,
        TokenError::InvalidRequest("code_verifier is required".into()),
        TokenError::InvalidClient { basic: true },
        TokenError::InvalidClient { basic: false },
        TokenError::InvalidGrant("authorization code is unknown, used or expired"),
        TokenError::UnsupportedGrantType,
        TokenError::InvalidScope("scope widens the grant".into()),
        TokenError::InvalidTarget("resource is not this server's MCP endpoint"),
        TokenError::UnsupportedTokenType,
        TokenError::RateLimited,
        RegistrationError::Disabled,
        RegistrationError::InvalidRedirectUri("redirect_uris[0] must use https".into()),
        RegistrationError::InvalidClientMetadata("client_name is too long".into()),
        RegistrationError::RateLimited,
        MailError::InsufficientScope,
        MailError::InvalidInput("subject is required".into()),
        MailError::QuotaExceeded { retry_after_hours: 3 },
        MailError::SendFailed(SendFailure::Rejected("550 5.1.1 no such user".into())),
        MailError::SendFailed(SendFailure::Unreachable("connection timed out".into())),
        DecisionError::UnknownRequest,
        DecisionError::ProjectRefused,
        DecisionError::ReadOnlyRefused,
        AuthError::InvalidApiKey,
        AuthError::InvalidToken("token expired"),
        AuthError::NotActivated,
        AuthError::NotMaster,
        AddressError::InsufficientScope,
        ListProjectsError::InsufficientScope,
        GetProjectError::NotFound,
        WriteProjectError::InsufficientScope,
        WriteProjectError::NotFound,
        WriteProjectError::InvalidProject("name must be 1-60 characters".into()),
        WriteProjectError::InvalidSlug("slug is too long".into()),
        WriteProjectError::SlugTaken,
        WriteProjectError::ClientAlreadyAttached,
        DeleteProjectError::InsufficientScope,
        DeleteProjectError::NotFound,
        DeleteProjectError::ConfirmMismatch,
        DeleteProjectError::InvalidMoveTo("move_to is not a project of this account".into()),
        DeleteProjectError::LastProject,
        DeleteProjectError::NotEmpty,
        AssignError::InsufficientScope,
        AssignError::NotFound,
        AssignError::MasterKey,
        GrantError::InsufficientScope,
        GrantError::NotFound,
        MintError::InsufficientScope,
        MintError::InvalidInput("name must be 1-60 characters".into()),
        MintError::InvalidProject("slug is too long".into()),
        MintError::ProjectNotOwned,
        ListKeysError::InsufficientScope,
        RevokeError::InsufficientScope,
        RevokeError::NotFound,
        RevokeError::CurrentKey,
        RevokeSelfError::NotAnApiKey,
        ClientError::InsufficientScope,
        ClientError::Forbidden,
        ClientError::Invalid("redirect_uris[0] must not have a fragment".into()),
        ClientError::NotFound,
        PageError::InsufficientScope,
        PageError::NotFound,
        PageError::Invalid("files[0].path must be relative".into()),
        PageError::PasswordRequired,
        PageError::SlugConflict,
        PageError::SlugTaken,
        PageError::AliasConflict,
        PageError::TooLarge {
            limit: LimitKind::Files,
            message: "a page may hold at most 1000 files; this would make 1001".into(),
        },
        PageError::PublicIdExhausted,
        PageError::ProfileHandleMissing,
        PageError::StorageCleanupFailed,
        PageError::LinkCleanupFailed,
        ActivationError::RateLimited { retry_after_secs: 900 },
        ActivationError::InvalidBody(RequestProblem::NotJson("request body is not valid JSON".into())),
        ActivationError::InvalidBody(RequestProblem::Fields("phone is required".into())),
        ActivationError::AlreadyActivated,
        ActivationError::CaptchaFailed(CaptchaRefusal::Expired),
        ActivationError::InvalidPhone(PhoneError::NotInternational),
        ActivationError::NotEligible,
        ActivationError::UnknownAccount,
        ObjectError::InsufficientScope,
        ObjectError::NotFound,
        ObjectError::Invalid("contentType is not a media type".into()),
        ObjectError::PasswordRequired,
        ObjectError::SlugConflict,
        ObjectError::SlugTaken,
        ObjectError::AliasConflict,
        ObjectError::TooLarge { limit: 104_857_600 },
        ObjectError::StorageQuotaExceeded { used: 9_000, limit: 10_000 },
        ObjectError::PublicIdExhausted,
        ObjectError::ProfileHandleMissing,
        ObjectError::StorageCleanupFailed,
        ObjectError::LinkCleanupFailed,
        ObjectError::UploadUrlUnknown,
        ObjectError::UploadUrlUsed,
        ObjectError::UploadUrlExpired,
        DatabaseError::Unavailable,
        DatabaseError::InsufficientScope,
        DatabaseError::NotFound,
        DatabaseError::InvalidSlug,
        DatabaseError::Invalid("sql is required".into()),
        DatabaseError::SlugTaken,
        DatabaseError::QuotaExceeded { used: 3, limit: 3 },
        DatabaseError::StorageQuotaExceeded { used: 12_000_000, limit: 10_000_000 },
        DatabaseError::Sql(relation_missing()),
        DatabaseError::Sql(duplicate_key()),
        DatabaseError::Busy(SQL_BUSY.into()),
        DatabaseError::DataApiNotEnabled,
        DatabaseError::DataApiDisabled,
        LinkError::InsufficientScope,
        LinkError::NotFound,
        LinkError::Invalid("alias must be 3-64 characters".into()),
        LinkError::Url { field: "url", refusal: UrlRefusal::Invalid },
        LinkError::Url { field: "url", refusal: UrlRefusal::TooLong },
        LinkError::Url { field: "url", refusal: UrlRefusal::Credentials },
        LinkError::Url { field: "expiredUrl", refusal: UrlRefusal::Loop },
        LinkError::Url { field: "url", refusal: UrlRefusal::Denied },
        LinkError::PasswordRequired,
        LinkError::AliasConflict,
        LinkError::PublicIdExhausted,
        InfraError::new("connection refused to 10.0.0.5"),
        ApiError::session(SessionRefusal::InvalidOrigin, "this form was not sent from the dashboard"),
        ApiError::session(SessionRefusal::NotSignedIn, "sign in to the dashboard first"),
        crate::body::busy(Busy::Key),
        crate::body::busy(Busy::Server),
        parse(b"{\"name\":"),
        parse(b"[1]"),
        parse(b"{}"),
    ]
}

/// The words `quire-databases` gives an account's SQL past its cap.
const SQL_BUSY: &str = "this account already runs 2 SQL queries at once, the most this server \
     allows: try again when one has ended";

/// PostgreSQL's refusal with a position only.
fn relation_missing() -> SqlRefusal {
    SqlRefusal {
        message: "relation \"nope\" does not exist".into(),
        sqlstate: "42P01".into(),
        detail: None,
        hint: None,
        position: Some(15),
    }
}

/// PostgreSQL's refusal with a detail and a hint.
fn duplicate_key() -> SqlRefusal {
    SqlRefusal {
        message: "duplicate key value violates unique constraint \"notes_pkey\"".into(),
        sqlstate: "23505".into(),
        detail: Some("Key (id)=(1) already exists.".into()),
        hint: Some("pick another id".into()),
        position: None,
    }
}

fn parse(body: &[u8]) -> ApiError {
    crate::json::parse::<Named>(body).unwrap_err()
}

fn answers() -> Vec<Value> {
    let mut all: Vec<Value> = refusals()
        .iter()
        .map(|(refusal, e)| answered(refusal, e))
        .collect();
    all.push(method_not_allowed());
    all
}

#[test]
fn every_refusal_answers_its_reviewed_body() {
    insta::assert_json_snapshot!(answers());
}

/// A code added to the table needs a refusal pinned here, or among the surfaces' (and then
/// in the black-box snapshot).
#[test]
fn every_code_has_a_pinned_body() {
    let pinned: BTreeSet<String> = answers()
        .iter()
        .filter_map(|a| a["body"]["error"].as_str().map(str::to_owned))
        .collect();
    let missing: Vec<&str> = ErrorCode::ALL
        .iter()
        .filter(|code| !SURFACE_CODES.contains(code))
        .map(|code| code.as_str())
        .filter(|code| !pinned.contains(*code))
        .collect();
    assert!(missing.is_empty(), "no pinned body for {missing:?}");
}
