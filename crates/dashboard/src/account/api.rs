//! `/api/account…`: the routes an account uses on itself, activated or not. Each takes the
//! account's master key (JSON, for the CLI) or the dashboard session cookie (the activation
//! page: its post must come from the dashboard's own origin, with the second factor given).

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use quire_accounts::{ActivationRequest, ActivationState, RequestProblem};
use quire_kernel::{AccountId, ErrorCode};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{activation_answer, session_account};
use quire_edge::ApiError;
use quire_edge::AppState;
use quire_edge::body::Body;
use quire_edge::json::{RequestBody, parse};

/// Who calls an account route.
pub(crate) enum Caller {
    /// The account's master key, in `Authorization`.
    Key(AccountId),
    /// A dashboard session with the second factor given.
    Session(AccountId),
}

impl Caller {
    fn account(&self) -> AccountId {
        match self {
            Self::Key(id) | Self::Session(id) => *id,
        }
    }
}

/// The caller: a master key when `Authorization` is sent, else the session cookie.
async fn caller(state: &AppState, req: &HttpRequest) -> Result<Caller, ApiError> {
    if let Some(value) = req.headers().get(header::AUTHORIZATION) {
        let value = value.to_str().unwrap_or_default();
        return Ok(Caller::Key(
            state.keys.account_of_master_key(Some(value)).await?,
        ));
    }
    match session_account(state, req).await? {
        Some(account) => Ok(Caller::Session(account)),
        None => Err(ApiError::new(
            ErrorCode::InvalidApiKey,
            "send the account's master key, or sign in to the dashboard",
        )),
    }
}

/// Where an account stands.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({
    "accountId": "0b6c7a8e-3f2d-4c1a-9e57-5d2f8a41c3b9",
    "handle": "ann",
    "email": "ann@example.com",
    "activated": true,
    "activatedAt": "2026-11-25T09:30:00Z",
    "platformAdmin": false
}))]
pub struct AccountStatus {
    /// The account's id.
    #[schema(format = Uuid)]
    pub account_id: String,
    /// The account's handle (its pages are under `{handle}.` on the pages host).
    pub handle: String,
    /// The account's email address.
    pub email: String,
    /// Whether the account is activated.
    pub activated: bool,
    /// When it was activated (RFC 3339); `null` until then.
    #[schema(format = DateTime)]
    pub activated_at: Option<String>,
    /// Whether the account administers the platform.
    pub platform_admin: bool,
}

impl From<ActivationState> for AccountStatus {
    fn from(s: ActivationState) -> Self {
        let a = s.account;
        Self {
            account_id: a.id.0.to_string(),
            handle: a.handle.as_str().to_owned(),
            email: a.email.as_str().to_owned(),
            activated: a.activated_at.is_some(),
            activated_at: a.activated_at.and_then(|t| {
                t.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            }),
            platform_admin: a.is_platform_admin,
        }
    }
}

/// The calling account and whether it is activated (master key or dashboard session; an
/// account not yet activated may call it).
#[utoipa::path(tag = "account",
    security(("bearer" = [])),
    responses(
        (status = 200, body = AccountStatus),
        (status = 401, description = "invalid_api_key: no master key and no signed-in session"),
        (status = 403, description = "insufficient_scope: an app key or a bearer token")))]
#[get("")]
pub async fn status(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let caller = caller(&state, &req).await?;
    let now = state.activation.state(caller.account()).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(AccountStatus::from(now)))
}

/// A signed ALTCHA challenge (PoW v2, PBKDF2/SHA-256) for this account's activation, to be
/// answered within 10 minutes; the ALTCHA widget and `altcha::solve_challenge` read it as
/// is.
#[utoipa::path(tag = "account",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the challenge: `parameters` (algorithm, cost, nonce, salt, keyPrefix, keyLength, data) and `signature`", body = Object,
            example = json!({"parameters": {"algorithm": "SHA-256", "cost": 50000, "nonce": "3f9a1c7e2b8d4f60", "salt": "a81c5e2f9b7d3046", "keyPrefix": "00", "keyLength": 32, "data": "ann"}, "signature": "6b2f0e9c4a71d3885e1f7a2c9b04d6e3"})),
        (status = 401, description = "invalid_api_key: no master key and no signed-in session"),
        (status = 403, description = "insufficient_scope: an app key or a bearer token")))]
#[get("/captcha")]
pub async fn captcha(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let caller = caller(&state, &req).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(state.activation.challenge(caller.account())))
}

/// Activation with a solved captcha and an invited number.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({
    "captcha": "eyJhbGdvcml0aG0iOiJTSEEtMjU2IiwiY2hhbGxlbmdlIjoiNGYyYSJ9",
    "phone": "+447400123456"
}))]
pub struct ActivateRequest {
    /// The ALTCHA payload as the widget submits it: base64 of the JSON
    /// `{challenge, solution}`.
    #[schema(max_length = 4096)]
    pub captcha: String,
    /// An international number (`+` and the country code), such as `+447400123456`.
    #[schema(max_length = 32)]
    pub phone: String,
}

impl std::fmt::Debug for ActivateRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActivateRequest").finish_non_exhaustive()
    }
}

impl RequestBody for ActivateRequest {}

/// The activation form (the dashboard page): the widget's hidden field is `altcha`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ActivateForm {
    altcha: String,
    phone: String,
}

/// Activate the account: at most 5 attempts in a rolling 15 minutes, each counted before
/// anything else is checked. With a master key the body is JSON and so is the answer; from
/// the dashboard it is the activation page's form, answered with that page.
#[utoipa::path(tag = "account",
    security(("bearer" = [])),
    request_body = ActivateRequest,
    responses(
        (status = 200, body = AccountStatus),
        (status = 400, description = "invalid_json, invalid_body, captcha_failed (missing, expired, not this account's, wrong, or already used), invalid_phone, not_eligible (not on the invitation list, or bound to another account)"),
        (status = 401, description = "invalid_api_key: no master key and no signed-in session"),
        (status = 403, description = "insufficient_scope (an app key or a bearer token); `invalid origin` (a cross-site form post)"),
        (status = 409, description = "already_activated"),
        (status = 429, description = "rate_limited, with Retry-After")))]
#[post("/activate")]
pub async fn activate(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    match caller(&state, &req).await? {
        Caller::Key(account) => {
            let request = parse::<ActivateRequest>(&body.0)
                .map(|b| ActivationRequest {
                    captcha: b.captcha,
                    phone: b.phone,
                })
                .map_err(|e| {
                    if e.code() == ErrorCode::InvalidJson.as_str() {
                        RequestProblem::NotJson(e.message().to_owned())
                    } else {
                        RequestProblem::Fields(e.message().to_owned())
                    }
                });
            let activated = state.activation.activate(account, request).await?;
            Ok(HttpResponse::Ok()
                .insert_header((header::CACHE_CONTROL, "no-store"))
                .json(AccountStatus::from(activated)))
        }
        Caller::Session(account) => {
            crate::shared::session::check_origin(&req, &state)?;
            let request = serde_urlencoded::from_bytes::<ActivateForm>(&body.0)
                .map(|f| ActivationRequest {
                    captcha: f.altcha,
                    phone: f.phone,
                })
                .map_err(|_| RequestProblem::Fields("the body is not form data".into()));
            let outcome = state.activation.activate(account, request).await;
            activation_answer(&state, account, outcome).await
        }
    }
}
