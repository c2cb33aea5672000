//! The data API's keys and tokens: HS256 JWTs under the database's own secret, as Supabase
//! makes them, so its clients take them unchanged. The `anon` and `service_role` keys are
//! long-lived tokens of those roles; end users' access tokens (`authenticated`) are signed
//! with the same secret.

use std::collections::HashSet;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;

/// How long the `anon` and `service_role` keys live: ten years, as Supabase's.
const KEY_LIFETIME_SECS: i64 = 10 * 365 * 24 * 60 * 60;

/// The roles a token may name, and so the roles a data API request may run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyRole {
    Anon,
    Authenticated,
    ServiceRole,
}

impl KeyRole {
    /// The PostgreSQL role of that name (one of the cluster's shared roles).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anon => "anon",
            Self::Authenticated => "authenticated",
            Self::ServiceRole => "service_role",
        }
    }

    #[must_use]
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "anon" => Some(Self::Anon),
            "authenticated" => Some(Self::Authenticated),
            "service_role" => Some(Self::ServiceRole),
            _ => None,
        }
    }
}

/// A database's two keys. `Debug` shows nothing of them.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKeys {
    pub anon: String,
    pub service_role: String,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKeys(…)")
    }
}

#[derive(Debug, Serialize)]
struct KeyClaims<'a> {
    iss: &'static str,
    #[serde(rename = "ref")]
    reference: &'a str,
    role: &'static str,
    iat: i64,
    exp: i64,
}

impl ApiKeys {
    /// The keys of database `slug` under `secret`, issued at `now`. The same inputs make
    /// the same keys, so they are derived when asked for and never stored.
    #[must_use]
    pub fn derive(secret: &str, slug: &str, issued_at: OffsetDateTime) -> Self {
        let sign = |role: KeyRole| {
            let iat = issued_at.unix_timestamp();
            let claims = KeyClaims {
                iss: "quire",
                reference: slug,
                role: role.as_str(),
                iat,
                exp: iat + KEY_LIFETIME_SECS,
            };
            jsonwebtoken::encode(
                &Header::new(Algorithm::HS256),
                &claims,
                &EncodingKey::from_secret(secret.as_bytes()),
            )
            .unwrap_or_else(|_| unreachable!("HS256 signs any claims that serialize"))
        };
        Self {
            anon: sign(KeyRole::Anon),
            service_role: sign(KeyRole::ServiceRole),
        }
    }
}

/// `claims` signed with HS256 under `secret` (end users' access tokens).
#[must_use]
pub fn sign_token(secret: &str, claims: &Map<String, Value>) -> String {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap_or_else(|_| unreachable!("HS256 signs any claims that serialize"))
}

/// What a verified token says.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenClaims {
    pub role: KeyRole,
    /// Every claim, as `request.jwt.claims` hands them to SQL (`auth.uid()` reads `sub`).
    pub claims: Map<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not a JWT, another algorithm (`none` included), a signature of another secret.
    #[error("the token is not valid for this database")]
    Invalid,
    #[error("the token has expired")]
    Expired,
    /// No `role`, or one the data API does not run as.
    #[error("the token's role is not anon, authenticated or service_role")]
    Role,
}

#[derive(Deserialize)]
struct RoleOnly {
    role: Option<String>,
}

/// Verifies `token` under `secret` at `now`: HS256 only, `exp` required and in the future,
/// a role the data API runs as.
///
/// # Errors
/// [`TokenError`] saying which check failed.
pub fn verify_token(
    secret: &str,
    token: &str,
    now: OffsetDateTime,
) -> Result<TokenClaims, TokenError> {
    let mut validation = Validation::new(Algorithm::HS256);
    validation.validate_aud = false;
    validation.validate_exp = false;
    validation.required_spec_claims = HashSet::new();
    let data = jsonwebtoken::decode::<Map<String, Value>>(
        token,
        &DecodingKey::from_secret(secret.as_bytes()),
        &validation,
    )
    .map_err(|_| TokenError::Invalid)?;
    let claims = data.claims;
    let exp = claims
        .get("exp")
        .and_then(Value::as_i64)
        .ok_or(TokenError::Invalid)?;
    if exp <= now.unix_timestamp() {
        return Err(TokenError::Expired);
    }
    let role: RoleOnly =
        serde_json::from_value(Value::Object(claims.clone())).map_err(|_| TokenError::Role)?;
    let role = role
        .role
        .as_deref()
        .and_then(KeyRole::parse)
        .ok_or(TokenError::Role)?;
    Ok(TokenClaims { role, claims })
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    use super::*;

    const SECRET: &str = "a-secret-of-the-database-under-test-0123456789";

    fn now() -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()
    }

    #[test]
    fn derived_keys_verify_with_their_roles_and_reference() {
        let keys = ApiKeys::derive(SECRET, "shop", now());
        let anon = verify_token(SECRET, &keys.anon, now()).unwrap();
        assert_eq!(anon.role, KeyRole::Anon);
        assert_eq!(anon.claims["ref"], "shop");
        let service = verify_token(SECRET, &keys.service_role, now()).unwrap();
        assert_eq!(service.role, KeyRole::ServiceRole);
        assert_eq!(ApiKeys::derive(SECRET, "shop", now()), keys);
    }

    #[test]
    fn another_secret_an_expired_token_and_alg_none_are_refused() {
        let keys = ApiKeys::derive(SECRET, "shop", now());
        assert_eq!(
            verify_token("another-secret", &keys.service_role, now()),
            Err(TokenError::Invalid)
        );
        let later = now() + time::Duration::seconds(KEY_LIFETIME_SECS + 1);
        assert_eq!(
            verify_token(SECRET, &keys.anon, later),
            Err(TokenError::Expired)
        );
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        let body = URL_SAFE_NO_PAD.encode(br#"{"role":"service_role","exp":9999999999}"#);
        assert_eq!(
            verify_token(SECRET, &format!("{header}.{body}."), now()),
            Err(TokenError::Invalid)
        );
    }

    #[test]
    fn a_role_the_data_api_does_not_run_as_is_refused() {
        let claims = serde_json::json!({"role": "postgres", "exp": 9_999_999_999_i64});
        let token = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(SECRET.as_bytes()),
        )
        .unwrap();
        assert_eq!(verify_token(SECRET, &token, now()), Err(TokenError::Role));
    }
}
