//! Who a request acts as. As behind Supabase's Kong: the `apikey` (header, or query
//! parameter) must be one of this database's two keys, else 401; the bearer token (the
//! `apikey` again when there is none) names the role and claims the request runs with. A
//! Quire key with `base` that can write to the database's project is accepted in either
//! place and acts as `service_role`, so an agent never handles a JWT secret.

use std::borrow::Cow;

use actix_web::HttpRequest;
use actix_web::http::header;
use quire_dataapi::RestError;
use quire_databases::{GatewayTarget, KeyRole, TokenError, verify_token};
use quire_edge::AppState;
use quire_kernel::App;
use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use crate::errors::GatewayRefusal;

/// The role and claims a request runs with.
#[derive(Debug, Clone)]
pub struct Acting {
    pub role: KeyRole,
    /// `request.jwt.claims`, as JSON text.
    pub claims: String,
}

/// Why a request acts as nobody.
#[derive(Debug)]
pub enum Refused {
    Gateway(GatewayRefusal),
    /// A bearer token that is not this database's, in PostgREST's words.
    Token(RestError),
}

fn apikey(req: &HttpRequest) -> Option<String> {
    if let Some(value) = req.headers().get("apikey") {
        return value.to_str().ok().map(str::to_owned);
    }
    // Kong's key-auth also reads the key from the query string.
    query_params(req.query_string())
        .find_map(|(name, value)| (name == "apikey").then(|| value.into_owned()))
}

/// The query string's parameters split where the REST grammar splits them (`&` and `;`),
/// each decoded: what the grammar would read as `apikey` is what authenticates, and what
/// [`without_apikey`] takes out.
fn query_params(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    query
        .split(['&', ';'])
        .filter_map(|part| url::form_urlencoded::parse(part.as_bytes()).next())
}

fn names_apikey(part: &str) -> bool {
    url::form_urlencoded::parse(part.as_bytes())
        .next()
        .is_some_and(|(name, _)| name == "apikey")
}

/// `query` without its `apikey` parameters, as Kong's key-auth hands a request on
/// (`hide_credentials`): the REST grammar never reads the key as a filter or a function's
/// argument, so no answer can quote it.
pub fn without_apikey(query: &str) -> Cow<'_, str> {
    if !query.split(['&', ';']).any(names_apikey) {
        return Cow::Borrowed(query);
    }
    let kept: Vec<&str> = query
        .split(['&', ';'])
        .filter(|part| !names_apikey(part))
        .collect();
    Cow::Owned(kept.join("&"))
}

/// The bearer token of `req`, if any.
pub fn bearer(req: &HttpRequest) -> Option<String> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_owned())
}

fn is_quire_key(credential: &str) -> bool {
    credential.starts_with("qk_")
}

async fn quire_key_serves(state: &AppState, target: &GatewayTarget, key: &str) -> bool {
    let Ok(principal) = state
        .keys
        .authenticate(Some(&format!("Bearer {key}")))
        .await
    else {
        return false;
    };
    principal.has_app(App::Base)
        && state
            .databases
            .key_may_serve(&principal, target)
            .await
            .unwrap_or(false)
}

fn service_role() -> Acting {
    Acting {
        role: KeyRole::ServiceRole,
        claims: json!({ "role": "service_role" }).to_string(),
    }
}

fn acting(role: KeyRole, claims: Map<String, Value>) -> Acting {
    Acting {
        role,
        claims: Value::Object(claims).to_string(),
    }
}

/// The request's `apikey`, checked: one of `target`'s two keys, or a Quire key that may
/// act for it; and who it acts as.
///
/// # Errors
/// The spec's 401s.
pub async fn checked_key(
    state: &AppState,
    req: &HttpRequest,
    target: &GatewayTarget,
) -> Result<(String, Acting), GatewayRefusal> {
    let key = apikey(req).ok_or(GatewayRefusal::NoApiKey)?;
    let acts = if is_quire_key(&key) {
        quire_key_serves(state, target, &key)
            .await
            .then(service_role)
    } else {
        verify_token(&target.jwt_secret, &key, OffsetDateTime::now_utc())
            .ok()
            .filter(|t| t.role != KeyRole::Authenticated)
            .map(|t| acting(t.role, t.claims))
    };
    let acts = acts.ok_or(GatewayRefusal::InvalidApiKey)?;
    Ok((key, acts))
}

/// Settles who `req` acts as for `target`.
///
/// # Errors
/// [`Refused`]: the spec's 401s for the `apikey`, PostgREST's for the bearer token.
pub async fn settle(
    state: &AppState,
    req: &HttpRequest,
    target: &GatewayTarget,
) -> Result<Acting, Refused> {
    let now = OffsetDateTime::now_utc();
    let (key, key_acts) = checked_key(state, req, target)
        .await
        .map_err(Refused::Gateway)?;
    let Some(token) = bearer(req) else {
        return Ok(key_acts);
    };
    if token == key {
        return Ok(key_acts);
    }
    if is_quire_key(&token) {
        return if quire_key_serves(state, target, &token).await {
            Ok(service_role())
        } else {
            Err(Refused::Gateway(GatewayRefusal::InvalidApiKey))
        };
    }
    verify_token(&target.jwt_secret, &token, now)
        .map(|t| acting(t.role, t.claims))
        .map_err(|e| Refused::Token(token_refusal(e)))
}

/// PostgREST's answers to a bearer token it cannot use.
fn token_refusal(e: TokenError) -> RestError {
    let (code, message) = match e {
        TokenError::Invalid => ("PGRST301", "No suitable key or wrong key type"),
        TokenError::Expired => ("PGRST303", "JWT expired"),
        TokenError::Role => (
            "PGRST301",
            "the token's role is not one this database serves",
        ),
    };
    RestError {
        status: 401,
        code: code.to_owned(),
        message: message.to_owned(),
        details: None,
        hint: None,
    }
}

#[cfg(test)]
mod tests {
    use super::without_apikey;

    #[test]
    fn the_key_is_taken_out_of_the_query_wherever_it_stands() {
        for (query, kept) in [
            ("id=eq.3", "id=eq.3"),
            ("id=eq.3&apikey=k", "id=eq.3"),
            ("apikey=k&id=eq.3&select=id", "id=eq.3&select=id"),
            ("id=eq.3;apikey=k", "id=eq.3"),
            ("api%6Bey=k&id=eq.3", "id=eq.3"),
            ("apikey=k&apikey=l", ""),
            ("apikey", ""),
            ("apikeys=eq.1", "apikeys=eq.1"),
            ("", ""),
        ] {
            assert_eq!(without_apikey(query), kept, "{query}");
        }
    }
}
