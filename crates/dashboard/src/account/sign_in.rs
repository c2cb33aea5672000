//! Sign-in: the password step, the second-factor step and sign-out.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_accounts::{SecondFactorError, SignInError};

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::shared::guards::{Posted, SameOrigin};
use crate::shared::render::{page, see_other};
use crate::shared::session::{
    current, encode, expired_cookie, local_next, query, session_cookie, session_cookie_name,
    session_token, who,
};
use crate::{ACTIVATE, HOME};

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage<'a> {
    signed_in_as: Option<String>,
    error: Option<String>,
    /// Whether to offer the sign-up page.
    sign_up_open: bool,
    login: &'a str,
    next: &'a str,
}

#[derive(Template)]
#[template(path = "totp.html")]
struct TotpPage<'a> {
    signed_in_as: Option<String>,
    error: Option<String>,
    next: &'a str,
}

/// The sign-in form.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct LoginForm {
    login: String,
    password: String,
    next: Option<String>,
}

/// The second-step form.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct TotpForm {
    code: String,
    next: Option<String>,
}

/// `/`: the dashboard's front door; an account not yet activated starts at activation.
pub async fn home(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    if let Some(setup) = crate::account::first_run::pending(&state).await? {
        return Ok(setup);
    }
    Ok(match current(&state, &req).await? {
        Some((_, account)) if account.activated_at.is_none() => see_other(ACTIVATE),
        _ => see_other(HOME),
    })
}

pub async fn login_form(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q = query(&req);
    let next = local_next(q.get("next").map(String::as_str));
    if let Some((session, _)) = current(&state, &req).await? {
        return Ok(if session.mfa_satisfied {
            see_other(&next)
        } else {
            see_other(&format!("/login/totp?next={}", encode(&next)))
        });
    }
    page(
        &state,
        StatusCode::OK,
        &LoginPage {
            signed_in_as: None,
            error: None,
            sign_up_open: state.sign_up.is_open(),
            login: "",
            next: &next,
        },
    )
}

/// Longest login (an email may be 254 characters; a handle 30).
const MAX_LOGIN_BYTES: usize = 320;

pub async fn login(
    state: web::Data<AppState>,
    req: HttpRequest,
    Posted(f, _): Posted<LoginForm>,
) -> Result<HttpResponse, ApiError> {
    let (login, password) = (f.login.as_str(), f.password.as_str());
    let next = local_next(f.next.as_deref());
    if quire_kernel::text::has_control(login) || login.len() > MAX_LOGIN_BYTES {
        return page(
            &state,
            StatusCode::BAD_REQUEST,
            &LoginPage {
                signed_in_as: None,
                sign_up_open: state.sign_up.is_open(),
                error: Some(format!(
                    "The login must be an email or handle of at most {MAX_LOGIN_BYTES} bytes, \
                     without control characters."
                )),
                login: "",
                next: &next,
            },
        );
    }
    let ip = quire_edge::client_ip::of(&req, &state.trusted_proxies);
    // A browser that holds a session of the account gets past a budget others spent.
    let held = session_token(&state, &req);
    let signed = match state
        .sessions
        .sign_in_holding(login, password, &ip, held.as_ref())
        .await
    {
        Ok(s) => s,
        Err(e) => {
            let status = match &e {
                SignInError::WrongCredentials => StatusCode::UNAUTHORIZED,
                SignInError::Throttled { .. } => StatusCode::TOO_MANY_REQUESTS,
                SignInError::EmailNotVerified(account) => {
                    // The password was right: a fresh link (older ones stop working).
                    state.sign_up.resend_verification(account).await?;
                    StatusCode::FORBIDDEN
                }
                SignInError::Infra(cause) => return Err(cause.clone().into()),
            };
            let mut answer = page(
                &state,
                status,
                &LoginPage {
                    signed_in_as: None,
                    sign_up_open: state.sign_up.is_open(),
                    error: Some(e.to_string()),
                    login,
                    next: &next,
                },
            )?;
            if let SignInError::Throttled { retry_after_secs } = e {
                answer.headers_mut().insert(
                    actix_web::http::header::RETRY_AFTER,
                    actix_web::http::header::HeaderValue::from(retry_after_secs),
                );
            }
            return Ok(answer);
        }
    };
    // A fresh session id at every sign-in; the one the browser held (if any) ends.
    if let Some(old) = session_token(&state, &req) {
        state.sessions.sign_out(&old).await?;
    }
    let location = if signed.session.mfa_satisfied {
        next
    } else {
        format!("/login/totp?next={}", encode(&next))
    };
    let mut response = see_other(&location);
    response
        .add_cookie(&session_cookie(&state, &signed.token))
        .map_err(|e| ApiError::internal(&e))?;
    Ok(response)
}

pub async fn totp_form(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let next = local_next(query(&req).get("next").map(String::as_str));
    match current(&state, &req).await? {
        None => Ok(see_other(&format!("/login?next={}", encode(&next)))),
        Some((session, _)) if session.mfa_satisfied => Ok(see_other(&next)),
        Some((_, account)) => page(
            &state,
            StatusCode::OK,
            &TotpPage {
                signed_in_as: who(&account),
                error: None,
                next: &next,
            },
        ),
    }
}

pub async fn totp(
    state: web::Data<AppState>,
    req: HttpRequest,
    Posted(f, _): Posted<TotpForm>,
) -> Result<HttpResponse, ApiError> {
    let next = local_next(f.next.as_deref());
    let Some((session, account)) = current(&state, &req).await? else {
        return Ok(see_other(&format!("/login?next={}", encode(&next))));
    };
    let code = f.code.as_str();
    let ip = quire_edge::client_ip::of(&req, &state.trusted_proxies);
    match state
        .sessions
        .give_second_factor(&session, &account, code, &ip)
        .await
    {
        Ok(()) | Err(SecondFactorError::NotEnrolled) => Ok(see_other(&next)),
        Err(SecondFactorError::Infra(cause)) => Err(cause.into()),
        Err(e) => page(
            &state,
            if e == SecondFactorError::Throttled {
                StatusCode::TOO_MANY_REQUESTS
            } else {
                StatusCode::UNAUTHORIZED
            },
            &TotpPage {
                signed_in_as: who(&account),
                error: Some(e.to_string()),
                next: &next,
            },
        ),
    }
}

pub async fn logout(
    state: web::Data<AppState>,
    req: HttpRequest,
    _: SameOrigin,
) -> Result<HttpResponse, ApiError> {
    if let Some(token) = session_token(&state, &req) {
        state.sessions.sign_out(&token).await?;
        // Pages opened through this session close with it.
        state.serving.forget_session(&token.hash()).await;
    }
    let mut response = see_other("/login");
    response
        .add_cookie(&expired_cookie(&state, session_cookie_name(&state), "/"))
        .map_err(|e| ApiError::internal(&e))?;
    Ok(response)
}
