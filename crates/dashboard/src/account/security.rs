//! The security page: the second factor (enrollment with the secret kept on the server,
//! recovery codes shown once, new codes, turning it off with a code), the password, and
//! signing out other sessions. Every action is a same-origin form post that answers with
//! the page itself, saying what happened.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_accounts::{Account, RecoveryCodes, SecondFactorError, Session, TotpSecret};
use quire_signup::PasswordChangeError;

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::shared::guards::{SameOrigin, SignedIn, SignedInPost};
use crate::shared::nav::{Who, section};
use crate::shared::render::{page, retry_after};

struct Enrollment {
    secret: String,
    otpauth_uri: String,
    qr_svg: String,
}

#[derive(Template)]
#[template(path = "security.html")]
struct SecurityPage {
    signed_in_as: Option<Who>,
    notice: Option<String>,
    error: Option<String>,
    enrolled: bool,
    codes_left: u64,
    enrollment: Option<Enrollment>,
    /// A new set of recovery codes, shown on this answer only.
    recovery_codes: Option<Vec<String>>,
    /// The platform admin's page leads to the admin pages.
    admin: bool,
}

/// A form that carries a code from the authenticator app (or a recovery code).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct CodeForm {
    code: String,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct PasswordForm {
    current_password: String,
    new_password: String,
}

/// What an action came to, for the page that answers it.
#[derive(Default)]
struct Outcome {
    status: Option<StatusCode>,
    notice: Option<String>,
    error: Option<String>,
    recovery_codes: Option<RecoveryCodes>,
    retry_after: Option<u64>,
}

impl Outcome {
    fn notice(text: &str) -> Self {
        Self {
            notice: Some(text.to_owned()),
            ..Self::default()
        }
    }

    fn refused(status: StatusCode, error: &impl ToString) -> Self {
        Self {
            status: Some(status),
            error: Some(error.to_string()),
            ..Self::default()
        }
    }

    fn from_factor(
        result: Result<Option<RecoveryCodes>, SecondFactorError>,
        done: &str,
    ) -> Result<Self, ApiError> {
        Ok(match result {
            Ok(codes) => Self {
                recovery_codes: codes,
                ..Self::notice(done)
            },
            Err(SecondFactorError::Infra(cause)) => return Err(cause.into()),
            Err(e @ SecondFactorError::Throttled) => Self {
                retry_after: Some(quire_accounts::session::ATTEMPT_WINDOW.as_secs()),
                ..Self::refused(StatusCode::TOO_MANY_REQUESTS, &e)
            },
            Err(e @ (SecondFactorError::AlreadyEnrolled | SecondFactorError::NotEnrolled)) => {
                Self::refused(StatusCode::CONFLICT, &e)
            }
            Err(e) => Self::refused(StatusCode::BAD_REQUEST, &e),
        })
    }
}

fn enrollment(secret: &TotpSecret, account: &Account) -> Enrollment {
    let otpauth_uri = secret.otpauth_uri(account.email.as_str());
    let qr_svg = qrcode::QrCode::new(otpauth_uri.as_bytes())
        .map(|qr| {
            qr.render::<qrcode::render::svg::Color<'_>>()
                .min_dimensions(200, 200)
                .build()
        })
        .map(|svg| match svg.find("<svg") {
            // The renderer opens with an XML declaration, which is not valid inside HTML.
            Some(i) => svg[i..].to_owned(),
            None => svg,
        })
        .unwrap_or_default();
    Enrollment {
        secret: secret.expose().to_owned(),
        otpauth_uri,
        qr_svg,
    }
}

/// The page as the account now stands (read again: the action may have changed it), with
/// the outcome on top.
async fn answer(
    state: &AppState,
    session: &Session,
    outcome: Outcome,
) -> Result<HttpResponse, ApiError> {
    let Some((session, account)) = state.sessions.reload(session).await? else {
        return Err(ApiError::internal(&"the session ended during the request"));
    };
    let enrolled = account.totp_secret.is_some();
    let enrollment = if enrolled {
        None
    } else {
        match state.sessions.pending_enrollment(&session, &account).await {
            Ok(secret) => Some(enrollment(&secret, &account)),
            Err(SecondFactorError::Infra(cause)) => return Err(cause.into()),
            Err(_) => None,
        }
    };
    let codes_left = if enrolled {
        state.sessions.recovery_codes_left(&account).await?
    } else {
        0
    };
    let response = page(
        state,
        outcome.status.unwrap_or(StatusCode::OK),
        &SecurityPage {
            signed_in_as: Who::of(&account, section::SECURITY),
            notice: outcome.notice,
            error: outcome.error,
            enrolled,
            codes_left,
            enrollment,
            recovery_codes: outcome.recovery_codes.map(|c| c.expose().to_vec()),
            admin: account.is_platform_admin,
        },
    )?;
    Ok(retry_after(response, outcome.retry_after))
}

/// The client address codes are budgeted under.
fn client_ip(state: &AppState, req: &HttpRequest) -> String {
    quire_edge::client_ip::of(req, &state.trusted_proxies)
}

/// "N other sessions were signed out."
fn others_signed_out(ended: u64) -> String {
    format!(
        "{ended} other session{} signed out.",
        if ended == 1 { " was" } else { "s were" }
    )
}

/// `GET /account/security`.
pub async fn security(
    state: web::Data<AppState>,
    SignedIn { session, .. }: SignedIn,
) -> Result<HttpResponse, ApiError> {
    answer(&state, &session, Outcome::default()).await
}

/// `POST /account/security`: turns the second factor on with the pending secret.
pub async fn enroll(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInPost(f, SignedIn { session, account }): SignedInPost<CodeForm>,
) -> Result<HttpResponse, ApiError> {
    let result = state
        .sessions
        .confirm_enrollment(&session, &account, &f.code, &client_ip(&state, &req))
        .await
        .map(Some);
    let outcome = Outcome::from_factor(
        result,
        "Two-step sign-in is now on. Keep the recovery codes below somewhere safe: each \
         signs you in once if you lose your authenticator app, and they are shown only now.",
    )?;
    answer(&state, &session, outcome).await
}

/// `POST /account/security/off`: turns the second factor off, given a code.
pub async fn turn_off(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInPost(f, SignedIn { session, account }): SignedInPost<CodeForm>,
) -> Result<HttpResponse, ApiError> {
    let result = state
        .sessions
        .turn_off_second_factor(&account, &f.code, &client_ip(&state, &req))
        .await
        .map(|()| None);
    let outcome = Outcome::from_factor(
        result,
        "Two-step sign-in is now off: signing in asks only for your password.",
    )?;
    answer(&state, &session, outcome).await
}

/// `POST /account/security/recovery-codes`: a new set of recovery codes, given a code.
pub async fn new_recovery_codes(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedInPost(f, SignedIn { session, account }): SignedInPost<CodeForm>,
) -> Result<HttpResponse, ApiError> {
    let result = state
        .sessions
        .new_recovery_codes(&account, &f.code, &client_ip(&state, &req))
        .await
        .map(Some);
    let outcome = Outcome::from_factor(
        result,
        "Here are your new recovery codes; the old ones no longer work. They are shown only now.",
    )?;
    answer(&state, &session, outcome).await
}

/// `POST /account/security/password`: a new password, given the current one; other
/// sessions end.
pub async fn change_password(
    state: web::Data<AppState>,
    SignedInPost(f, SignedIn { session, account }): SignedInPost<PasswordForm>,
) -> Result<HttpResponse, ApiError> {
    let outcome = match state
        .password_change
        .change(
            &account,
            &session.id_hash,
            &f.current_password,
            &f.new_password,
        )
        .await
    {
        Ok(ended) => Outcome::notice(&format!(
            "Your password is changed. {}",
            others_signed_out(ended)
        )),
        Err(PasswordChangeError::Infra(cause)) => return Err(cause.into()),
        Err(e @ PasswordChangeError::Throttled { retry_after_secs }) => Outcome {
            retry_after: Some(retry_after_secs),
            ..Outcome::refused(StatusCode::TOO_MANY_REQUESTS, &e)
        },
        Err(e) => Outcome::refused(StatusCode::BAD_REQUEST, &e),
    };
    answer(&state, &session, outcome).await
}

/// `POST /account/security/sessions`: signs out every other session of the account.
pub async fn sign_out_others(
    state: web::Data<AppState>,
    SameOrigin(SignedIn { session, .. }): SameOrigin<SignedIn>,
) -> Result<HttpResponse, ApiError> {
    let ended = state.sessions.sign_out_others(&session).await?;
    let outcome = Outcome::notice(&others_signed_out(ended));
    answer(&state, &session, outcome).await
}
