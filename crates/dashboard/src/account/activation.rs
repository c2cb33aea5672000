//! The activation page: the invited phone number and the ALTCHA widget (the dashboard's only
//! script, served from this origin), posting to `POST /api/account/activate`; and the
//! vendored widget files themselves.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_accounts::{ActivationError, ActivationState};
use quire_kernel::AccountId;

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::ACTIVATE;
use crate::shared::guards::SignedIn;
use crate::shared::render::{page_with_scripts, see_other};
use crate::shared::session::{current, who};

#[derive(Template)]
#[template(path = "activate.html")]
struct ActivatePage {
    signed_in_as: Option<String>,
    error: Option<String>,
    activated_at: Option<String>,
}

/// The account of a live session that has given its second factor, activated or not.
pub(crate) async fn session_account(
    state: &AppState,
    req: &HttpRequest,
) -> Result<Option<AccountId>, ApiError> {
    Ok(current(state, req)
        .await?
        .filter(|(session, _)| session.mfa_satisfied)
        .map(|(_, account)| account.id))
}

/// `GET /account/activate`.
pub async fn activate_page(
    state: web::Data<AppState>,
    SignedIn { account, .. }: SignedIn,
) -> Result<HttpResponse, ApiError> {
    render(&state, StatusCode::OK, &ActivationState { account }, None)
}

/// The answer to the activation form: back to the page, activated, or the page again with
/// the refusal (and its status).
pub(crate) async fn activation_answer(
    state: &AppState,
    account: AccountId,
    outcome: Result<ActivationState, ActivationError>,
) -> Result<HttpResponse, ApiError> {
    let refusal = match outcome {
        Ok(_) => return Ok(see_other(ACTIVATE)),
        Err(ActivationError::Infra(e)) => return Err(e.into()),
        Err(e) => e,
    };
    let message = refusal.to_string();
    let status = actix_web::ResponseError::status_code(&ApiError::from(refusal));
    let now = state.activation.state(account).await?;
    render(state, status, &now, Some(message))
}

fn render(
    state: &AppState,
    status: StatusCode,
    now: &ActivationState,
    error: Option<String>,
) -> Result<HttpResponse, ApiError> {
    let activated_at = now.activated_at().map(|t| {
        t.format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default()
    });
    page_with_scripts(
        state,
        status,
        &ActivatePage {
            signed_in_as: who(&now.account),
            error,
            activated_at,
        },
    )
}

/// The stylesheet and the copy buttons' script (under their hashed names), the vendored
/// widget, the activation page's own script and the Files page's upload script.
pub async fn asset(req: HttpRequest) -> HttpResponse {
    let name = req.path().strip_prefix("/assets/");
    let hashed = if name == Some(quire_style::file_name()) {
        Some((quire_style::CSS, "text/css; charset=utf-8"))
    } else if name == Some(quire_style::script_name()) {
        Some((quire_style::SCRIPT, "text/javascript; charset=utf-8"))
    } else {
        None
    };
    if let Some((body, content_type)) = hashed {
        return HttpResponse::Ok()
            .content_type(content_type)
            .insert_header((header::CACHE_CONTROL, quire_style::IMMUTABLE))
            .insert_header(("X-Content-Type-Options", "nosniff"))
            .body(body);
    }
    let (body, content_type): (&'static [u8], &str) = match req.path() {
        "/assets/altcha/altcha.min.js" => (
            include_bytes!("../../assets/altcha/altcha.min.js"),
            "text/javascript; charset=utf-8",
        ),
        "/assets/altcha/pbkdf2.js" => (
            include_bytes!("../../assets/altcha/pbkdf2.js"),
            "text/javascript; charset=utf-8",
        ),
        "/assets/altcha/altcha.css" => (
            include_bytes!("../../assets/altcha/altcha.css"),
            "text/css; charset=utf-8",
        ),
        "/assets/activate.js" => (
            include_bytes!("../../assets/activate.js"),
            "text/javascript; charset=utf-8",
        ),
        "/assets/files.js" => (
            include_bytes!("../../assets/files.js"),
            "text/javascript; charset=utf-8",
        ),
        _ => return HttpResponse::NotFound().finish(),
    };
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .body(body)
}
