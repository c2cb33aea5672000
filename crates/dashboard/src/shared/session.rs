//! The dashboard session (read by `quire-edge`): its cookies, and the request helpers every
//! flow shares (the `next` parameter, forms, the same-origin check). Where a signed-in
//! person stands is a guard (`crate::shared::guards`).

use std::collections::HashMap;

use actix_web::HttpRequest;
use actix_web::cookie::{Cookie, SameSite};
use quire_accounts::{Account, SessionToken};
use quire_edge::{ApiError, AppState, SessionRefusal};

pub(crate) use quire_edge::session::{
    check_origin, cookie_secure, current, session_cookie_name, session_token,
};

use crate::HOME;

/// A post-sign-in destination: only a path on this origin (no `//host`, no scheme), so the
/// `next` parameter cannot be used to redirect elsewhere.
pub(crate) fn local_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.contains('\\') => n.into(),
        _ => HOME.into(),
    }
}

pub(crate) fn encode(s: &str) -> String {
    serde_urlencoded::to_string([("", s)])
        .map(|q| q.trim_start_matches('=').to_owned())
        .unwrap_or_default()
}

pub(crate) fn query(req: &HttpRequest) -> HashMap<String, String> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(req.query_string())
        .map(|pairs| pairs.into_iter().collect())
        .unwrap_or_default()
}

/// A form-encoded body read into its type; a field the form lacks is empty.
pub(crate) fn form<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_urlencoded::from_bytes::<T>(body)
        .map_err(|_| ApiError::session(SessionRefusal::InvalidRequest, "the body is not form data"))
}

/// Every dashboard cookie: `HttpOnly; SameSite=Lax`, `Secure` on https; `max_age` `None`
/// removes it.
pub(crate) fn dashboard_cookie(
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

pub(crate) fn session_cookie(state: &AppState, token: &SessionToken) -> Cookie<'static> {
    let lifetime = quire_accounts::session::SESSION_LIFETIME.whole_seconds();
    dashboard_cookie(
        state,
        session_cookie_name(state),
        token.expose().to_owned(),
        "/",
        Some(lifetime),
    )
}

pub(crate) fn expired_cookie(
    state: &AppState,
    name: &'static str,
    path: &'static str,
) -> Cookie<'static> {
    dashboard_cookie(state, name, String::new(), path, None)
}

/// A decision form's `decision` field: approve (`true`) or deny.
pub(crate) fn approves(decision: Option<&str>) -> Result<bool, ApiError> {
    match decision {
        Some("approve") => Ok(true),
        Some("deny") => Ok(false),
        _ => Err(ApiError::session(
            SessionRefusal::InvalidRequest,
            "decision must be approve or deny",
        )),
    }
}

pub(crate) fn who(account: &Account) -> Option<String> {
    Some(account.handle.as_str().to_owned())
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
