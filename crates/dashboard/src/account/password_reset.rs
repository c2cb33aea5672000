//! Password reset: a request that answers the same for any address, then the emailed link's
//! page, whose post sets the new password and signs every session of the account out.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_signup::ResetError;

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::shared::guards::Posted;
use crate::shared::render::{Message, message, page, retry_after};
use crate::shared::session::query;

#[derive(Template)]
#[template(path = "reset_request.html")]
struct RequestPage<'a> {
    signed_in_as: Option<String>,
    email: &'a str,
    error: Option<String>,
}

#[derive(Template)]
#[template(path = "reset_new.html")]
struct NewPasswordPage<'a> {
    signed_in_as: Option<String>,
    token: &'a str,
    error: Option<String>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct RequestFields {
    email: String,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct NewPasswordFields {
    token: String,
    password: String,
}

/// `GET /account/reset`.
pub async fn request_form(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    page(
        &state,
        StatusCode::OK,
        &RequestPage {
            signed_in_as: None,
            email: "",
            error: None,
        },
    )
}

/// `POST /account/reset`: the same page whether or not an account has the address.
pub async fn request(
    state: web::Data<AppState>,
    req: HttpRequest,
    Posted(f, _): Posted<RequestFields>,
) -> Result<HttpResponse, ApiError> {
    let client = quire_edge::client_ip::of(&req, &state.trusted_proxies);
    match state.password_reset.request(&f.email, &client).await {
        Ok(()) => message(
            &state,
            StatusCode::OK,
            &Message {
                title: "Check your inbox",
                text: "If an account has this address, we sent it a link to choose a new \
                       password. The link works once, for an hour.",
                tone: "notice",
                link: Some(("/login", "Sign in")),
            },
        ),
        Err(ResetError::Infra(e)) => Err(e.into()),
        Err(e) => {
            let wait = match e {
                ResetError::RateLimited { retry_after_secs } => Some(retry_after_secs),
                _ => None,
            };
            let page = page(
                &state,
                if wait.is_some() {
                    StatusCode::TOO_MANY_REQUESTS
                } else {
                    StatusCode::BAD_REQUEST
                },
                &RequestPage {
                    signed_in_as: None,
                    email: &f.email,
                    error: Some(e.to_string()),
                },
            )?;
            Ok(retry_after(page, wait))
        }
    }
}

fn link_refused(state: &AppState) -> Result<HttpResponse, ApiError> {
    message(
        state,
        StatusCode::BAD_REQUEST,
        &Message {
            title: "Choose a new password",
            text: &ResetError::LinkRefused.to_string(),
            tone: "error",
            link: Some(("/account/reset", "Ask for a new link")),
        },
    )
}

/// `GET /account/reset/new?token=…`: the new-password form (spends nothing).
pub async fn new_password_form(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let token = query(&req).remove("token").unwrap_or_default();
    if !state.password_reset.link_is_live(&token).await? {
        return link_refused(&state);
    }
    page(
        &state,
        StatusCode::OK,
        &NewPasswordPage {
            signed_in_as: None,
            token: &token,
            error: None,
        },
    )
}

/// `POST /account/reset/new`: sets the password; every session of the account ends, and
/// nobody is signed in.
pub async fn new_password(
    state: web::Data<AppState>,
    Posted(f, _): Posted<NewPasswordFields>,
) -> Result<HttpResponse, ApiError> {
    match state.password_reset.reset(&f.token, &f.password).await {
        Ok(()) => message(
            &state,
            StatusCode::OK,
            &Message {
                title: "Password changed",
                text: "Your password is changed and every session of your account is signed \
                       out. Sign in with the new password.",
                tone: "notice",
                link: Some(("/login", "Sign in")),
            },
        ),
        Err(ResetError::LinkRefused) => link_refused(&state),
        Err(ResetError::Infra(e)) => Err(e.into()),
        Err(e) => page(
            &state,
            StatusCode::BAD_REQUEST,
            &NewPasswordPage {
                signed_in_as: None,
                token: &f.token,
                error: Some(e.to_string()),
            },
        ),
    }
}
