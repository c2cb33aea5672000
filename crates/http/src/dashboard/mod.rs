//! The dashboard: server-rendered sign-in (password, then the second factor), TOTP
//! enrollment, and the consent screen of the device login with its decision endpoint.
//!
//! No JavaScript. Every form post must come from the dashboard's own origin (`Origin`, or
//! `Referer` when a browser sends no `Origin`), checked against `QUIRE_BASE_URL`; the session
//! cookie is `HttpOnly; SameSite=Lax` (and `Secure` on https); pages forbid framing.

use actix_web::post;
use std::collections::HashMap;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_accounts::{Account, SecondFactorError, Session, SessionToken, SignInError};
use quire_device_auth::{DecideError, DeviceGrant, UserCode};
use quire_kernel::ErrorCode;
use quire_serving::PassError;

use crate::AppState;
use crate::common::body::Body;
use crate::common::origin::same_origin;
use crate::common::routing::{resource, to};
use crate::error::{ApiError, SessionRefusal};

pub const SESSION_COOKIE: &str = "quire_session";
/// One-shot outcome of a decision, read (and cleared) by the consent screen.
const OUTCOME_COOKIE: &str = "quire_consent";
const HOME: &str = "/account/security";
const CONSENT: &str = "/authorize-agent";

// ---------------------------------------------------------------------------------------
// Templates

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage<'a> {
    signed_in_as: Option<String>,
    error: Option<String>,
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

struct ConsentRequest {
    client_name: String,
    user_code: String,
    requested_at: String,
}

#[derive(Template)]
#[template(path = "authorize.html")]
struct ConsentPage {
    signed_in_as: Option<String>,
    outcome: Option<&'static str>,
    error: Option<String>,
    request: Option<ConsentRequest>,
    typed: String,
}

#[derive(Template)]
#[template(path = "visit_confirm.html")]
struct VisitConfirmPage {
    signed_in_as: Option<String>,
    email: String,
    page: String,
    next: String,
}

#[derive(Template)]
#[template(path = "visit_denied.html")]
struct VisitDeniedPage {
    signed_in_as: Option<String>,
    found: bool,
    email: String,
}

/// An HTML response with the headers every dashboard page carries.
fn page(
    state: &AppState,
    status: StatusCode,
    template: &impl Template,
) -> Result<HttpResponse, ApiError> {
    let body = template.render().map_err(|e| ApiError::internal(&e))?;
    // Browsers apply form-action to the redirects that follow a post too: signing in for a
    // private page ends on the pages origin.
    let pages_origin = state.serving.config().origins.csp_source();
    Ok(HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header(("X-Frame-Options", "DENY"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("Referrer-Policy", "same-origin"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            format!(
                "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; \
                 form-action 'self' {pages_origin}; frame-ancestors 'none'; base-uri 'none'"
            ),
        ))
        .body(body))
}

fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

// ---------------------------------------------------------------------------------------
// Request helpers

/// A post-sign-in destination: only a path on this origin (no `//host`, no scheme), so the
/// `next` parameter cannot be used to redirect elsewhere.
fn local_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.contains('\\') => n.into(),
        _ => HOME.into(),
    }
}

fn encode(s: &str) -> String {
    serde_urlencoded::to_string([("", s)])
        .map(|q| q.trim_start_matches('=').to_owned())
        .unwrap_or_default()
}

fn query(req: &HttpRequest) -> HashMap<String, String> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(req.query_string())
        .map(|pairs| pairs.into_iter().collect())
        .unwrap_or_default()
}

/// A form-encoded body read into its type; a field the form lacks is empty.
fn form<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_urlencoded::from_bytes::<T>(body)
        .map_err(|_| ApiError::session(SessionRefusal::InvalidRequest, "the body is not form data"))
}

/// The sign-in form.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct LoginForm {
    login: String,
    password: String,
    next: Option<String>,
}

/// The second-step form.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct TotpForm {
    code: String,
    next: Option<String>,
}

/// The authenticator enrollment form.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct EnrollForm {
    secret: String,
    code: String,
}

/// The consent screen's buttons.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct DecisionForm {
    code: String,
    decision: Option<String>,
}

/// The confirmation button of a hand-off to a page.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct VisitForm {
    page: String,
    next: String,
}

/// `scheme://host[:port]` of a URL.
fn check_origin(req: &HttpRequest, state: &AppState) -> Result<(), ApiError> {
    if same_origin(req, &state.base_url) {
        Ok(())
    } else {
        Err(ApiError::session(
            SessionRefusal::InvalidOrigin,
            "this form must be submitted from the Quire dashboard",
        ))
    }
}

fn session_token(req: &HttpRequest) -> Option<SessionToken> {
    req.cookie(SESSION_COOKIE)
        .map(|c| SessionToken::received(c.value()))
        .filter(|t| !t.expose().is_empty())
}

async fn current(
    state: &AppState,
    req: &HttpRequest,
) -> Result<Option<(Session, Account)>, ApiError> {
    match session_token(req) {
        Some(token) => Ok(state.sessions.current(&token).await?),
        None => Ok(None),
    }
}

fn cookie_secure(state: &AppState) -> bool {
    state.base_url.starts_with("https://")
}

/// Every dashboard cookie: `HttpOnly; SameSite=Lax`, `Secure` on https; `max_age` `None`
/// removes it.
fn dashboard_cookie(
    state: &AppState,
    name: &'static str,
    value: String,
    path: &'static str,
    max_age_secs: Option<i64>,
) -> Cookie<'static> {
    let mut c = Cookie::new(name, value);
    c.set_path(path);
    c.set_http_only(true);
    c.set_same_site(SameSite::Lax);
    c.set_secure(cookie_secure(state));
    match max_age_secs {
        Some(secs) => c.set_max_age(actix_web::cookie::time::Duration::seconds(secs)),
        None => c.make_removal(),
    }
    c
}

fn session_cookie(state: &AppState, token: &SessionToken) -> Cookie<'static> {
    let lifetime = quire_accounts::session::SESSION_LIFETIME.whole_seconds();
    dashboard_cookie(
        state,
        SESSION_COOKIE,
        token.expose().to_owned(),
        "/",
        Some(lifetime),
    )
}

fn expired_cookie(state: &AppState, name: &'static str, path: &'static str) -> Cookie<'static> {
    dashboard_cookie(state, name, String::new(), path, None)
}

/// Where a signed-in person stands: a full session, or one that still owes the second
/// factor, or none (each of the last two is a redirect to the right step).
enum SignedIn {
    Fully(Session, Account),
    /// Not signed in, or the second factor is owed: the redirect to the right step.
    NotYet(HttpResponse),
}

async fn require_full_session(state: &AppState, req: &HttpRequest) -> Result<SignedIn, ApiError> {
    let here = match req.query_string() {
        "" => req.path().to_owned(),
        q => format!("{}?{q}", req.path()),
    };
    Ok(match current(state, req).await? {
        None => SignedIn::NotYet(see_other(&format!("/login?next={}", encode(&here)))),
        Some((session, _)) if !session.mfa_satisfied => {
            SignedIn::NotYet(see_other(&format!("/login/totp?next={}", encode(&here))))
        }
        Some((session, account)) => SignedIn::Fully(session, account),
    })
}

fn who(account: &Account) -> Option<String> {
    Some(account.handle.as_str().to_owned())
}

// ---------------------------------------------------------------------------------------
// Sign-in

/// `/`: the dashboard's front door.
pub async fn home() -> HttpResponse {
    see_other(HOME)
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
    body: Body,
) -> Result<HttpResponse, ApiError> {
    check_origin(&req, &state)?;
    let f: LoginForm = form(&body.0)?;
    let (login, password) = (f.login.as_str(), f.password.as_str());
    let next = local_next(f.next.as_deref());
    if quire_kernel::text::has_control(login) || login.len() > MAX_LOGIN_BYTES {
        return page(
            &state,
            StatusCode::BAD_REQUEST,
            &LoginPage {
                signed_in_as: None,
                error: Some(format!(
                    "The login must be an email or handle of at most {MAX_LOGIN_BYTES} bytes, \
                     without control characters."
                )),
                login: "",
                next: &next,
            },
        );
    }
    let ip = crate::common::client_ip::of(&req, &state.trusted_proxies);
    let signed = match state.sessions.sign_in(login, password, &ip).await {
        Ok(s) => s,
        Err(e) => {
            let status = match &e {
                SignInError::WrongCredentials => StatusCode::UNAUTHORIZED,
                SignInError::Throttled => StatusCode::TOO_MANY_REQUESTS,
                SignInError::NotActivated => StatusCode::FORBIDDEN,
                SignInError::Infra(cause) => return Err(cause.clone().into()),
            };
            return page(
                &state,
                status,
                &LoginPage {
                    signed_in_as: None,
                    error: Some(e.to_string()),
                    login,
                    next: &next,
                },
            );
        }
    };
    // A fresh session id at every sign-in; the one the browser held (if any) ends.
    if let Some(old) = session_token(&req) {
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
    body: Body,
) -> Result<HttpResponse, ApiError> {
    check_origin(&req, &state)?;
    let f: TotpForm = form(&body.0)?;
    let next = local_next(f.next.as_deref());
    let Some((session, account)) = current(&state, &req).await? else {
        return Ok(see_other(&format!("/login?next={}", encode(&next))));
    };
    let code = f.code.as_str();
    match state
        .sessions
        .give_second_factor(&session, &account, code)
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
) -> Result<HttpResponse, ApiError> {
    check_origin(&req, &state)?;
    if let Some(token) = session_token(&req) {
        state.sessions.sign_out(&token).await?;
        // Pages opened through this session close with it.
        state.serving.forget_session(&token.hash()).await;
    }
    let mut response = see_other("/login");
    response
        .add_cookie(&expired_cookie(&state, SESSION_COOKIE, "/"))
        .map_err(|e| ApiError::internal(&e))?;
    Ok(response)
}

// ---------------------------------------------------------------------------------------
// Sign-in for private and allow-list pages

/// `GET /visit?page={code}&next={path}`: the pages origin sends visitors of a private or
/// allow-list page here. Once signed in (second factor included), an account the page
/// admits goes back with a short-lived pass for that page; any other gets a 403 page.
/// Whether the browser says this request is a top-level navigation (Fetch Metadata). A frame,
/// a fetch or an image says otherwise, and a client that sends no metadata proves nothing.
fn top_level_navigation(req: &HttpRequest) -> bool {
    let is = |name: &str, value: &str| {
        req.headers()
            .get(name)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(value.as_bytes()))
    };
    is("sec-fetch-dest", "document") && is("sec-fetch-mode", "navigate")
}

/// `GET /visit?page=CODE&next=PATH`: a private or allow-list page sends its visitor here to
/// sign in; a pass for the page comes back in a redirect. Only to a top-level navigation:
/// a page of another owner could otherwise load this in a hidden frame and receive the pass.
/// Anything else gets a button that the person clicks.
pub async fn visit(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let q = query(&req);
    let code = q.get("page").map_or("", String::as_str);
    let next = q.get("next").map_or("", String::as_str);
    hand_over(&state, &req, code, next, top_level_navigation(&req)).await
}

/// `POST /visit`: the button of the confirmation page, from the dashboard's own origin.
pub async fn visit_confirmed(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    check_origin(&req, &state)?;
    let form: VisitForm = form(&body)?;
    let dest_ok = req
        .headers()
        .get("sec-fetch-dest")
        .is_none_or(|v| v.as_bytes().eq_ignore_ascii_case(b"document"));
    hand_over(&state, &req, &form.page, &form.next, dest_ok).await
}

async fn hand_over(
    state: &AppState,
    req: &HttpRequest,
    code: &str,
    next: &str,
    navigation: bool,
) -> Result<HttpResponse, ApiError> {
    let (session, account) = match require_full_session(state, req).await? {
        SignedIn::Fully(session, account) => (session, account),
        SignedIn::NotYet(response) => return Ok(response),
    };
    if !navigation {
        return page(
            state,
            StatusCode::OK,
            &VisitConfirmPage {
                signed_in_as: who(&account),
                email: account.email.as_str().to_owned(),
                page: code.to_owned(),
                next: next.to_owned(),
            },
        );
    }
    let denied = |found: bool| VisitDeniedPage {
        signed_in_as: who(&account),
        found,
        email: account.email.as_str().to_owned(),
    };
    match state
        .serving
        .issue_pass(code, account.id, &account.email, &session.id_hash, next)
        .await
    {
        Ok(url) => Ok(see_other(&url)),
        Err(PassError::Forbidden) => page(state, StatusCode::FORBIDDEN, &denied(true)),
        Err(PassError::NotFound) => page(state, StatusCode::NOT_FOUND, &denied(false)),
        Err(PassError::Infra(e)) => Err(e.into()),
    }
}

// ---------------------------------------------------------------------------------------
// Second-factor enrollment

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

// ---------------------------------------------------------------------------------------
// Consent screen and decision

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
) -> Result<HttpResponse, ApiError> {
    let (session, account) = match require_full_session(&state, &req).await? {
        SignedIn::Fully(s, a) => (s, a),
        SignedIn::NotYet(r) => return Ok(r),
    };
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
        let looked_up = match state.device_auth.count_code_lookup(&session.id_hash).await {
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
            signed_in_as: who(&account),
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
    request_body(content_type = "application/x-www-form-urlencoded", description = "`code` (the user code) and `decision` (`approve` or `deny`); sent by the consent screen's buttons with the dashboard session cookie"),
    responses(
        (status = 303, description = "back to /authorize-agent, which shows the outcome"),
        (status = 400, description = "`invalid request`: malformed code or decision"),
        (status = 401, description = "`not signed in`"),
        (status = 403, description = "`invalid origin` (cross-site post), or mfa_required")))]
#[post("/decision")]
pub async fn decision(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    check_origin(&req, &state)?;
    let Some((session, account)) = current(&state, &req).await? else {
        return Err(ApiError::session(
            SessionRefusal::NotSignedIn,
            "sign in to the dashboard first",
        ));
    };
    if !session.mfa_satisfied {
        return Err(ApiError::new(
            ErrorCode::MfaRequired,
            "enter the code from your authenticator app first",
        ));
    }
    let f: DecisionForm = form(&body.0)?;
    let approve = match f.decision.as_deref() {
        Some("approve") => true,
        Some("deny") => false,
        _ => {
            return Err(ApiError::session(
                SessionRefusal::InvalidRequest,
                "decision must be approve or deny",
            ));
        }
    };
    let code = f.code.as_str();
    if UserCode::parse(code).is_none() {
        return Err(ApiError::session(
            SessionRefusal::InvalidRequest,
            "code must be a code of the form XXXX-XXXX",
        ));
    }
    let decided = match state.device_auth.count_code_lookup(&session.id_hash).await {
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

/// The dashboard's pages and form posts.
pub fn configure(cfg: &mut web::ServiceConfig) {
    use actix_web::http::Method as M;
    cfg.service(resource(
        "/login",
        [(M::GET, to(login_form)), (M::POST, to(login))],
    ))
    .service(resource(
        "/login/totp",
        [(M::GET, to(totp_form)), (M::POST, to(totp))],
    ))
    .service(resource("/logout", [(M::POST, to(logout))]))
    .service(resource(
        "/account/security",
        [(M::GET, to(security)), (M::POST, to(enroll))],
    ))
    .service(resource("/authorize-agent", [(M::GET, to(consent))]))
    .service(resource(
        "/visit",
        [(M::GET, to(visit)), (M::POST, to(visit_confirmed))],
    ))
    .service(resource("/", [(M::GET, to(home))]));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_origin() {
        assert_eq!(
            local_next(Some("/authorize-agent?code=AB")),
            "/authorize-agent?code=AB"
        );
        for hostile in [
            "//evil.example/x",
            "https://evil.example",
            "/\\evil",
            "evil",
        ] {
            assert_eq!(local_next(Some(hostile)), HOME, "{hostile}");
        }
        assert_eq!(local_next(None), HOME);
    }
}
