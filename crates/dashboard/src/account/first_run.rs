//! The first-run setup: `/setup?token=…`, the link the server logs at start-up while it has
//! no account, creates the first account (a platform admin).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_accounts::SignInError;
use quire_signup::{NewAccount, SetupError};

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::HOME;
use crate::shared::guards::Posted;
use crate::shared::render::{Message, message, page, see_other};
use crate::shared::session::{query, session_cookie};

/// The form of both the setup and the sign-up pages.
#[derive(Template)]
#[template(path = "account_form.html")]
pub(crate) struct AccountForm<'a> {
    pub signed_in_as: Option<String>,
    pub title: &'a str,
    pub intro: &'a str,
    pub action: &'a str,
    pub button: &'a str,
    pub token: &'a str,
    pub email: &'a str,
    pub handle: &'a str,
    pub error: Option<String>,
}

/// What the setup and sign-up forms post.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct AccountFields {
    pub token: String,
    pub email: String,
    pub handle: String,
    pub password: String,
}

impl AccountFields {
    pub(crate) fn new_account(&self) -> NewAccount {
        NewAccount {
            email: self.email.clone(),
            handle: self.handle.clone(),
            password: self.password.clone(),
        }
    }
}

const TITLE: &str = "Set up Quire";
const INTRO: &str = "This server has no account yet. Create the first one: it administers the \
                     server (invitations, accounts, OAuth clients) and publishes pages.";

fn setup_page(
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
            action: "/setup",
            button: "Create the account",
            token: &fields.token,
            email: &fields.email,
            handle: &fields.handle,
            error,
        },
    )
}

fn already_set_up(state: &AppState) -> Result<HttpResponse, ApiError> {
    message(
        state,
        StatusCode::GONE,
        &Message {
            title: TITLE,
            text: &SetupError::AlreadySetUp.to_string(),
            tone: "error",
            link: Some(("/login", "Sign in")),
        },
    )
}

/// `GET /setup`: the form, when the link is live.
pub async fn setup_form(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    if !state.first_run.needed().await? {
        return already_set_up(&state);
    }
    let token = query(&req).remove("token").unwrap_or_default();
    if !state.first_run.link_is_live(&token).await? {
        return message(
            &state,
            StatusCode::FORBIDDEN,
            &Message {
                title: TITLE,
                text: "Open the setup link the server printed in its log when it started (it \
                       works once, for 24 hours; restarting the server prints a new one).",
                tone: "error",
                link: None,
            },
        );
    }
    let fields = AccountFields {
        token,
        ..AccountFields::default()
    };
    setup_page(&state, StatusCode::OK, &fields, None)
}

/// `POST /setup`: creates the first account and signs its holder in (they just proved the
/// setup link and chose the password), landing on the Pages overview.
pub async fn setup(
    state: web::Data<AppState>,
    req: HttpRequest,
    Posted(fields, _): Posted<AccountFields>,
) -> Result<HttpResponse, ApiError> {
    match state
        .first_run
        .create_first_account(&fields.token, &fields.new_account())
        .await
    {
        Ok(account) => {
            tracing::info!(account_id = %account.id.0, "first account created by the setup link");
            let ip = quire_edge::client_ip::of(&req, &state.trusted_proxies);
            match state
                .sessions
                .sign_in_holding(account.handle.as_str(), &fields.password, &ip, None)
                .await
            {
                Ok(signed) => {
                    let mut response = see_other(HOME);
                    response
                        .add_cookie(&session_cookie(&state, &signed.token))
                        .map_err(|e| ApiError::internal(&e))?;
                    Ok(response)
                }
                Err(SignInError::Infra(e)) => Err(e.into()),
                // The account stands; should signing in fail anyway, the form is a click away.
                Err(_) => message(
                    &state,
                    StatusCode::CREATED,
                    &Message {
                        title: "Quire is set up",
                        text: &format!(
                            "The account {} is created and administers this server. Sign in \
                             to publish pages and invite people.",
                            account.handle
                        ),
                        tone: "notice",
                        link: Some(("/login", "Sign in")),
                    },
                ),
            }
        }
        Err(SetupError::AlreadySetUp) => already_set_up(&state),
        Err(SetupError::Infra(e)) => Err(e.into()),
        Err(e) => {
            let status = match e {
                SetupError::LinkRefused => StatusCode::FORBIDDEN,
                SetupError::HandleTaken => StatusCode::CONFLICT,
                _ => StatusCode::BAD_REQUEST,
            };
            setup_page(&state, status, &fields, Some(e.to_string()))
        }
    }
}

/// `/` on a server with no account: the setup, whose link is in the log.
pub(crate) async fn pending(state: &AppState) -> Result<Option<HttpResponse>, ApiError> {
    Ok(if state.first_run.needed().await? {
        Some(see_other("/setup"))
    } else {
        None
    })
}
