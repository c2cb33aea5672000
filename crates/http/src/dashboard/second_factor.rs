//! Second-factor enrollment on the security page.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_accounts::{Account, SecondFactorError};

use crate::AppState;
use crate::common::body::Body;
use crate::error::ApiError;

use super::render::page;
use super::session::{SignedIn, check_origin, form, require_full_session, who};

struct Enrollment {
    secret: String,
    otpauth_uri: String,
    qr_svg: String,
}

#[derive(Template)]
#[template(path = "security.html")]
struct SecurityPage {
    signed_in_as: Option<String>,
    notice: Option<String>,
    error: Option<String>,
    enrolled: bool,
    enrollment: Option<Enrollment>,
}

/// The authenticator enrollment form.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct EnrollForm {
    secret: String,
    code: String,
}

fn enrollment(secret: &quire_accounts::TotpSecret, account: &Account) -> Enrollment {
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

pub async fn security(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let (_, account) = match require_full_session(&state, &req).await? {
        SignedIn::Fully(s, a) => (s, a),
        SignedIn::NotYet(r) => return Ok(r),
    };
    let enrolled = account.totp_secret.is_some();
    page(
        &state,
        StatusCode::OK,
        &SecurityPage {
            signed_in_as: who(&account),
            notice: None,
            error: None,
            enrolled,
            enrollment: (!enrolled)
                .then(|| enrollment(&state.sessions.begin_enrollment(), &account)),
        },
    )
}

pub async fn enroll(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    check_origin(&req, &state)?;
    let f: EnrollForm = form(&body.0)?;
    let (session, account) = match require_full_session(&state, &req).await? {
        SignedIn::Fully(s, a) => (s, a),
        SignedIn::NotYet(r) => return Ok(r),
    };
    let (secret, code) = (f.secret.as_str(), f.code.as_str());
    let result = state
        .sessions
        .confirm_enrollment(&session, &account, secret, code)
        .await;
    let enrolled = result.is_ok() || account.totp_secret.is_some();
    let (status, notice, error, retry) = match result {
        Ok(()) => (
            StatusCode::OK,
            Some("Two-step sign-in is now on.".to_owned()),
            None,
            None,
        ),
        Err(SecondFactorError::Infra(cause)) => return Err(cause.into()),
        Err(e @ SecondFactorError::AlreadyEnrolled) => {
            (StatusCode::CONFLICT, None, Some(e.to_string()), None)
        }
        Err(e) => {
            let status = if e == SecondFactorError::Throttled {
                StatusCode::TOO_MANY_REQUESTS
            } else {
                StatusCode::BAD_REQUEST
            };
            // Keep the secret the person has already scanned, unless it is the problem.
            let again = quire_accounts::TotpSecret::parse(secret)
                .unwrap_or_else(|| state.sessions.begin_enrollment());
            (status, None, Some(e.to_string()), Some(again))
        }
    };
    page(
        &state,
        status,
        &SecurityPage {
            signed_in_as: who(&account),
            notice,
            error,
            enrolled,
            enrollment: retry.map(|s| enrollment(&s, &account)),
        },
    )
}
