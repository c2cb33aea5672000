//! The device login's consent screen and its decision endpoint.

use actix_web::post;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_device_auth::{DecideError, DeviceGrant, UserCode};

use quire_edge::AppState;
use quire_edge::{ApiError, SessionRefusal};

use crate::shared::guards::{Decider, Posted, SignedIn};
use crate::shared::nav::{Who, section};
use crate::shared::render::{page, see_other};
use crate::shared::session::{approves, dashboard_cookie, expired_cookie, query};
use crate::{CONSENT, OUTCOME_COOKIE};

struct ConsentRequest {
    client_name: String,
    user_code: String,
    requested_at: String,
}

#[derive(Template)]
#[template(path = "authorize.html")]
struct ConsentPage {
    signed_in_as: Option<Who>,
    outcome: Option<&'static str>,
    error: Option<String>,
    request: Option<ConsentRequest>,
    typed: String,
}

/// The consent screen's buttons.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct DecisionForm {
    code: String,
    decision: Option<String>,
}

fn outcome_text(outcome: &str) -> Option<&'static str> {
    Some(match outcome {
        "approved" => {
            "Approved. The agent receives its key at its next poll; you can close this page."
        }
        "denied" => "Denied. The agent was told no and holds no key.",
        "unknown" => {
            "No sign-in request has that code. Check the code the agent shows, or start the sign-in again."
        }
        "expired" => {
            "That sign-in request has expired (requests last 10 minutes). Start the sign-in again from the agent."
        }
        "decided" => "That sign-in request was already approved or denied.",
        "throttled" => "Too many codes entered; wait a few minutes and try again.",
        _ => return None,
    })
}

fn decide_outcome(e: &DecideError) -> &'static str {
    match e {
        DecideError::Unknown | DecideError::Malformed => "unknown",
        DecideError::Expired => "expired",
        DecideError::AlreadyDecided => "decided",
        DecideError::Throttled | DecideError::Infra(_) => "throttled",
    }
}

fn format_time(t: time::OffsetDateTime) -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second] UTC");
    t.to_offset(time::UtcOffset::UTC)
        .format(&format)
        .unwrap_or_default()
}

fn consent_request(grant: &DeviceGrant) -> ConsentRequest {
    ConsentRequest {
        client_name: grant.client_name.clone(),
        user_code: UserCode::parse(&grant.user_code)
            .map_or_else(|| grant.user_code.clone(), |c| c.display()),
        requested_at: format_time(grant.created_at),
    }
}

pub async fn consent(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn { session, account }: SignedIn,
) -> Result<HttpResponse, ApiError> {
    let outcome = req
        .cookie(OUTCOME_COOKIE)
        .and_then(|c| outcome_text(c.value()));
    let typed = query(&req)
        .get("code")
        .map(|c| c.trim().to_owned())
        .unwrap_or_default();
    let (status, request, error) = if typed.is_empty() {
        (StatusCode::OK, None, None)
    } else {
        let looked_up = match state
            .device_auth
            .count_code_lookup(&session.id_hash, account.id)
            .await
        {
            Ok(()) => state.device_auth.pending(&typed).await,
            Err(e) => Err(e),
        };
        match looked_up {
            Ok(grant) => (StatusCode::OK, Some(consent_request(&grant)), None),
            Err(DecideError::Infra(cause)) => return Err(cause.into()),
            Err(e) => {
                let status = match e {
                    DecideError::Malformed => StatusCode::BAD_REQUEST,
                    DecideError::Unknown => StatusCode::NOT_FOUND,
                    DecideError::Expired => StatusCode::GONE,
                    DecideError::AlreadyDecided => StatusCode::CONFLICT,
                    _ => StatusCode::TOO_MANY_REQUESTS,
                };
                let message = match e {
                    DecideError::Malformed => e.to_string(),
                    ref other => outcome_text(decide_outcome(other))
                        .unwrap_or_default()
                        .to_owned(),
                };
                (status, None, Some(message))
            }
        }
    };
    let mut response = page(
        &state,
        status,
        &ConsentPage {
            signed_in_as: Who::of(&account, section::AGENT),
            outcome,
            error,
            request,
            typed,
        },
    )?;
    if outcome.is_some() {
        response
            .add_cookie(&expired_cookie(&state, OUTCOME_COOKIE, CONSENT))
            .map_err(|e| ApiError::internal(&e))?;
    }
    Ok(response)
}

/// `POST /api/agent-login/decision`: Approve or Deny from the consent screen.
#[utoipa::path(tag = "agent-login",
    request_body(content_type = "application/x-www-form-urlencoded", description = "`code` (the user code) and `decision` (`approve` or `deny`); sent by the consent screen's buttons with the dashboard session cookie", example = json!({"code": "WDJB-MJHT", "decision": "approve"})),
    responses(
        (status = 303, description = "back to /authorize-agent, which shows the outcome"),
        (status = 400, description = "`invalid request`: malformed code or decision"),
        (status = 401, description = "`not signed in`"),
        (status = 403, description = "`invalid origin` (cross-site post), or mfa_required")))]
#[post("/api/agent-login/decision")]
pub async fn decision(
    state: web::Data<AppState>,
    Posted(f, Decider { session, account }): Posted<DecisionForm, Decider>,
) -> Result<HttpResponse, ApiError> {
    let approve = approves(f.decision.as_deref())?;
    let code = f.code.as_str();
    if UserCode::parse(code).is_none() {
        return Err(ApiError::session(
            SessionRefusal::InvalidRequest,
            "code must be a code of the form XXXX-XXXX",
        ));
    }
    let decided = match state
        .device_auth
        .count_code_lookup(&session.id_hash, account.id)
        .await
    {
        Ok(()) => state.device_auth.decide(code, account.id, approve).await,
        Err(e) => Err(e),
    };
    let outcome = match decided {
        Ok(_) if approve => "approved",
        Ok(_) => "denied",
        Err(DecideError::Infra(cause)) => return Err(cause.into()),
        Err(e) => decide_outcome(&e),
    };
    if approve && outcome == "approved" {
        tracing::info!(account = %account.id.0, "device login approved");
    }
    let flash = dashboard_cookie(
        &state,
        OUTCOME_COOKIE,
        outcome.to_owned(),
        CONSENT,
        Some(60),
    );
    let mut response = see_other(CONSENT);
    response
        .add_cookie(&flash)
        .map_err(|e| ApiError::internal(&e))?;
    Ok(response)
}
