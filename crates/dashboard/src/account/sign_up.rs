//! Sign-up (`QUIRE_SIGNUP=open`) and the email-verification link. The sign-up answer is the
//! same whether or not the address has an account; following the link shows a confirm
//! page, and only its post spends the link (mail scanners fetch links).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_signup::{SignUpError, VerifyError};

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::account::first_run::{AccountFields, AccountForm};
use crate::shared::guards::Posted;
use crate::shared::render::{Message, message, page, retry_after};
use crate::shared::session::query;

#[derive(Template)]
#[template(path = "verify_email.html")]
struct VerifyPage<'a> {
    signed_in_as: Option<String>,
    token: &'a str,
}

const TITLE: &str = "Create a Quire account";
const INTRO: &str =
    "We send a link to your address to confirm it; you sign in once it is confirmed.";

fn sign_up_page(
    state: &AppState,
    status: StatusCode,
    fields: &AccountFields,
    error: Option<String>,
) -> Result<HttpResponse, ApiError> {
    page(
        state,
        status,
        &AccountForm {
            signed_in_as: None,
            title: TITLE,
            intro: INTRO,
            action: "/signup",
            button: "Create the account",
            token: "",
            email: &fields.email,
            handle: &fields.handle,
            error,
        },
    )
}

fn closed(state: &AppState) -> Result<HttpResponse, ApiError> {
    message(
        state,
        StatusCode::NOT_FOUND,
        &Message {
            title: TITLE,
            text: &SignUpError::Closed.to_string(),
            tone: "error",
            link: Some(("/login", "Sign in")),
        },
    )
}

/// `GET /signup`.
pub async fn sign_up_form(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    if !state.sign_up.is_open() {
        return closed(&state);
    }
    sign_up_page(&state, StatusCode::OK, &AccountFields::default(), None)
}

/// `POST /signup`: the same page whether or not the address has an account.
pub async fn sign_up(
    state: web::Data<AppState>,
    req: HttpRequest,
    Posted(fields, _): Posted<AccountFields>,
) -> Result<HttpResponse, ApiError> {
    let client = quire_edge::client_ip::of(&req, &state.trusted_proxies);
    match state.sign_up.sign_up(&fields.new_account(), &client).await {
        Ok(()) => message(
            &state,
            StatusCode::OK,
            &Message {
                title: "Check your inbox",
                text: "We sent a message to the address you gave. Follow its link within 24 \
                       hours to confirm the address, then sign in.",
                tone: "notice",
                link: Some(("/login", "Sign in")),
            },
        ),
        Err(SignUpError::Closed) => closed(&state),
        Err(SignUpError::Infra(e)) => Err(e.into()),
        Err(e) => {
            let (status, wait) = match e {
                SignUpError::RateLimited { retry_after_secs } => {
                    (StatusCode::TOO_MANY_REQUESTS, Some(retry_after_secs))
                }
                SignUpError::HandleTaken => (StatusCode::CONFLICT, None),
                _ => (StatusCode::BAD_REQUEST, None),
            };
            let page = sign_up_page(&state, status, &fields, Some(e.to_string()))?;
            Ok(retry_after(page, wait))
        }
    }
}

fn link_refused(state: &AppState) -> Result<HttpResponse, ApiError> {
    message(
        state,
        StatusCode::BAD_REQUEST,
        &Message {
            title: "Confirm your email address",
            text: &VerifyError::LinkRefused.to_string(),
            tone: "error",
            link: Some(("/login", "Sign in")),
        },
    )
}

/// `GET /account/verify?token=…`: the confirm page (spends nothing).
pub async fn verify_form(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let token = query(&req).remove("token").unwrap_or_default();
    if !state.sign_up.verification_is_live(&token).await? {
        return link_refused(&state);
    }
    page(
        &state,
        StatusCode::OK,
        &VerifyPage {
            signed_in_as: None,
            token: &token,
        },
    )
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct TokenField {
    token: String,
}

/// `POST /account/verify`: spends the link and verifies the address; signs nobody in.
pub async fn verify(
    state: web::Data<AppState>,
    Posted(f, _): Posted<TokenField>,
) -> Result<HttpResponse, ApiError> {
    match state.sign_up.verify_email(&f.token).await {
        Ok(()) => message(
            &state,
            StatusCode::OK,
            &Message {
                title: "Email address confirmed",
                text: "Your address is confirmed. Sign in with your handle or address and \
                       your password.",
                tone: "notice",
                link: Some(("/login", "Sign in")),
            },
        ),
        Err(VerifyError::LinkRefused) => link_refused(&state),
        Err(VerifyError::Infra(e)) => Err(e.into()),
    }
}
