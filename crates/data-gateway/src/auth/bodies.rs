//! Every refusal of the auth subset as supabase-js and supabase-py read it (status, the
//! headers the refusal carries, GoTrue's `{code, error_code, msg}` body), compared with a
//! reviewed snapshot: a status, code or wording that changes shows in review. Every variant
//! of [`AuthError`] is pinned: one added to the domain does not compile here until it is
//! named in `variants!`, and then fails the test until a refusal of it is pinned.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::BTreeSet;

use actix_web::HttpResponse;
use actix_web::body::MessageBody;
use quire_databases::AuthError;
use quire_kernel::{InfraError, InfraKind};
use serde_json::{Map, Value, json};

/// The variants' names, and an exhaustive match (no wildcard) naming an error's variant:
/// both from one list, so the names cannot drift from the enum.
macro_rules! variants {
    ($($name:ident),+ $(,)?) => {
        const VARIANTS: &[&str] = &[$(stringify!($name)),+];

        fn variant(e: &AuthError) -> &'static str {
            match e {
                $(AuthError::$name { .. } => stringify!($name)),+
            }
        }
    };
}

variants![
    Validation,
    WeakPassword,
    SignupDisabled,
    UserExists,
    EmailExists,
    InvalidCredentials,
    EmailNotConfirmed,
    RefreshTokenNotFound,
    RefreshTokenReused,
    UnsupportedGrant,
    NoAuthorization,
    BadJwt,
    SessionNotFound,
    UserNotFound,
    RateLimited,
    EmailQuotaExceeded,
    EmailNotSent,
    LinkInvalid,
    LinkPasswordWrong,
    TokenInvalid,
    MailTooSoon,
    OtpDisabled,
    NotAdmin,
    UserIdInvalid,
    NoSuchUser,
    Infra,
];

/// The refusals, each labelled by the expression that makes it.
macro_rules! labelled {
    ($($e:expr),+ $(,)?) => {
        vec![$((stringify!($e), $e)),+]
    };
}

/// Each variant, with the wordings the gateway and the use cases give where the caller
/// words it, and an internal failure of each kind (whose cause must not reach the body).
#[rustfmt::skip]
fn refusals() -> Vec<(&'static str, AuthError)> {
    labelled![
        AuthError::Validation("Could not read the request body as JSON".into()),
        AuthError::Validation("email is required".into()),
        AuthError::Validation("scope must be global, local or others".into()),
        AuthError::Validation("Unable to validate email address: invalid format".into()),
        AuthError::WeakPassword,
        AuthError::SignupDisabled,
        AuthError::UserExists,
        AuthError::EmailExists,
        AuthError::InvalidCredentials,
        AuthError::EmailNotConfirmed,
        AuthError::RefreshTokenNotFound,
        AuthError::RefreshTokenReused,
        AuthError::UnsupportedGrant,
        AuthError::NoAuthorization,
        AuthError::BadJwt("token is expired"),
        AuthError::SessionNotFound,
        AuthError::UserNotFound,
        AuthError::RateLimited { retry_after_secs: 60 },
        AuthError::EmailQuotaExceeded,
        AuthError::EmailNotSent("relay refused: 550 mailbox unavailable".into()),
        AuthError::LinkInvalid,
        AuthError::LinkPasswordWrong { tries_left: 2 },
        AuthError::TokenInvalid,
        AuthError::MailTooSoon { retry_after_secs: 60 },
        AuthError::OtpDisabled,
        AuthError::NotAdmin,
        AuthError::UserIdInvalid,
        AuthError::NoSuchUser("User not found"),
        AuthError::NoSuchUser("User with this email not found"),
        AuthError::Validation("Verify requires either a token or a token hash".into()),
        AuthError::Infra(InfraError::unavailable("no connection free in 5s")),
        AuthError::Infra(InfraError::new("connection reset by peer")),
        AuthError::Infra(InfraError::caused_by(InfraKind::Corrupt, std::io::Error::other("row 7 is not a user"))),
    ]
}

/// `response` as a client reads it: the status, the headers but CORS's (every answer of
/// the gateway carries those, refusal or not), the body as JSON.
fn answered(label: &str, response: HttpResponse) -> Value {
    let status = response.status().as_u16();
    let headers: Map<String, Value> = response
        .headers()
        .iter()
        .filter(|(name, _)| !name.as_str().starts_with("access-control-"))
        .map(|(name, value)| (name.to_string(), json!(value.to_str().unwrap())))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_iter()
        .collect();
    let body = response.into_body().try_into_bytes().unwrap();
    // The label is the expression as `stringify!` wrote it, on one line.
    let label = label.split_whitespace().collect::<Vec<_>>().join(" ");
    json!({
        "refusal": label,
        "status": status,
        "headers": headers,
        "body": serde_json::from_slice::<Value>(&body).unwrap(),
    })
}

#[test]
fn every_refusal_answers_its_reviewed_body() {
    let mut answers: Vec<Value> = refusals()
        .into_iter()
        .map(|(label, e)| answered(label, super::refused(&e)))
        .collect();
    answers.push(answered("no such route", super::not_found()));
    insta::assert_json_snapshot!(answers);
}

/// A variant added to [`AuthError`] needs a refusal pinned above.
#[test]
fn every_variant_has_a_pinned_body() {
    let pinned: BTreeSet<&str> = refusals().iter().map(|(_, e)| variant(e)).collect();
    let missing: Vec<&str> = VARIANTS
        .iter()
        .copied()
        .filter(|name| !pinned.contains(name))
        .collect();
    assert!(missing.is_empty(), "no pinned body for {missing:?}");
}
