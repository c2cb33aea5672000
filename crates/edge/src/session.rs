//! The dashboard session as every surface reads it: the cookie's name in this server's mode,
//! the live session a request carries, and the same-origin check of a form post made with it.
//! The pages that redirect to sign-in, and the cookies they set, are the dashboard's own.

use actix_web::HttpRequest;
use quire_accounts::{Account, Session, SessionToken};

use crate::AppState;
use crate::error::{ApiError, SessionRefusal};
use crate::origin::same_origin;

pub const SESSION_COOKIE: &str = "quire_session";

/// The session cookie's name on https: the `__Host-` prefix makes the browser refuse it
/// unless it is `Secure`, `Path=/` and set by this very host without `Domain`, so a sibling
/// subdomain cannot plant or overwrite it (session fixation, forced sign-out).
pub const HOST_SESSION_COOKIE: &str = "__Host-quire_session";

/// The session cookie's name in this server's mode.
#[must_use]
pub fn session_cookie_name(state: &AppState) -> &'static str {
    if cookie_secure(state) {
        HOST_SESSION_COOKIE
    } else {
        SESSION_COOKIE
    }
}

/// Whether cookies are `Secure`: the dashboard is served over https.
#[must_use]
pub fn cookie_secure(state: &AppState) -> bool {
    state.base_url.starts_with("https://")
}

/// Refuses a form post that does not come from the dashboard's own origin.
///
/// # Errors
/// 403 `invalid origin`.
pub fn check_origin(req: &HttpRequest, state: &AppState) -> Result<(), ApiError> {
    if same_origin(req, &state.base_url) {
        Ok(())
    } else {
        Err(ApiError::session(
            SessionRefusal::InvalidOrigin,
            "this form must be submitted from the Quire dashboard",
        ))
    }
}

/// The session token a request carries, if any.
#[must_use]
pub fn session_token(state: &AppState, req: &HttpRequest) -> Option<SessionToken> {
    req.cookie(session_cookie_name(state))
        .map(|c| SessionToken::received(c.value()))
        .filter(|t| !t.expose().is_empty())
}

/// The live session a request carries, with its account.
///
/// # Errors
/// The session store failed (500).
pub async fn current(
    state: &AppState,
    req: &HttpRequest,
) -> Result<Option<(Session, Account)>, ApiError> {
    match session_token(state, req) {
        Some(token) => Ok(state.sessions.current(&token).await?),
        None => Ok(None),
    }
}
