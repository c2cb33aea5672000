//! Access tokens (RFC 9068): JWTs signed with the current [`SigningKey`], and the first five
//! of the seven verification steps (the last two ask the client registry, which the caller
//! holds).
//!
//! The order is the spec's: the cheap checks of shape come first, claims are trusted only
//! after the signature, and nothing here does I/O.

use std::collections::HashSet;

use base64::Engine;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use quire_kernel::{AccountId, InfraError, ProjectId, Resource};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::grant::{ACCESS_TOKEN_LIFETIME, Scopes, scope_string};
use crate::model::ClientId;
use crate::signing::{LEEWAY, SigningKey};

/// The header `typ` of an access token (RFC 9068 §2.1).
pub const ACCESS_TOKEN_TYPE: &str = "at+jwt";
/// Longest credential read as a JWT; ours are about 500 bytes.
const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// Why a JWT-shaped credential was refused, in the order the checks run. Each text is the
/// spec's `error_description`, exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenRefusal {
    /// Not three base64url parts, a part that is not JSON, a wrong `alg`, no `kid`.
    #[error("malformed bearer token")]
    Malformed,
    /// No key has the `kid`, or the signature does not verify with it.
    #[error("unknown signing key")]
    UnknownSigningKey,
    /// Signed by us, but not an access token (wrong `typ`, no `client_id`).
    #[error("not an OAuth-obtained token")]
    NotAccessToken,
    #[error("token issuer or audience mismatch")]
    IssuerOrAudience,
    #[error("token expired")]
    Expired,
    /// The client is unknown to the registry or deleted.
    #[error("unknown or deleted client")]
    UnknownClient,
    /// The registry could not be read: fail closed.
    #[error("client registry unavailable")]
    RegistryUnavailable,
}

impl TokenRefusal {
    /// The spec's `error_description`.
    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Self::Malformed => "malformed bearer token",
            Self::UnknownSigningKey => "unknown signing key",
            Self::NotAccessToken => "not an OAuth-obtained token",
            Self::IssuerOrAudience => "token issuer or audience mismatch",
            Self::Expired => "token expired",
            Self::UnknownClient => "unknown or deleted client",
            Self::RegistryUnavailable => "client registry unavailable",
        }
    }
}

/// Who tokens are issued by and for: `iss` is the public base URL, `aud` the resource the
/// token is for (`{base}/api` or `{base}/mcp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenAudience {
    pub issuer: String,
    pub audience: String,
}

impl TokenAudience {
    /// The REST API of a service at `base_url`.
    #[must_use]
    pub fn for_base_url(base_url: &str) -> Self {
        Self::for_resource(base_url, Resource::Api)
    }

    /// `resource` of a service at `base_url`.
    #[must_use]
    pub fn for_resource(base_url: &str, resource: Resource) -> Self {
        let issuer = base_url.trim_end_matches('/').to_owned();
        let path = match resource {
            Resource::Api => "api",
            Resource::Mcp => "mcp",
        };
        Self {
            audience: format!("{issuer}/{path}"),
            issuer,
        }
    }

    /// The same issuer's audience for `resource`.
    #[must_use]
    pub fn at(&self, resource: Resource) -> Self {
        Self::for_resource(&self.issuer, resource)
    }
}

/// The claims of an access token (RFC 9068 §2.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessClaims {
    pub iss: String,
    pub aud: String,
    /// The account that consented.
    pub sub: String,
    pub client_id: String,
    pub iat: i64,
    pub exp: i64,
    pub jti: String,
    pub scope: String,
    /// The project the token acts in (its grant's, picked at consent); absent for a grant
    /// made before the picker, whose tokens act in the client's home project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// What a verified token says, for the steps the registry answers and for the principal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    pub account_id: AccountId,
    pub client_id: ClientId,
    pub scopes: Scopes,
    /// The `project` claim: where the token acts; `None` means the client's home project.
    pub project: Option<ProjectId>,
    pub issued_at: OffsetDateTime,
    /// `exp`, in seconds since the epoch.
    pub expires: i64,
}

impl VerifiedToken {
    /// Step 5 on its own, for a token whose signature and claims were checked before.
    #[must_use]
    pub fn is_expired(&self, now: OffsetDateTime) -> bool {
        expired(self.expires, now)
    }
}

fn expired(exp: i64, now: OffsetDateTime) -> bool {
    now.unix_timestamp() >= exp.saturating_add(LEEWAY.whole_seconds())
}

/// Who a token is for and what it may do: the grant's account, client, scopes and project.
#[derive(Debug, Clone, Copy)]
pub struct TokenSubject<'a> {
    pub account: AccountId,
    pub client: &'a ClientId,
    pub scopes: &'a Scopes,
    /// The grant's project; `None` for a grant made before the consent page's picker.
    pub project: Option<ProjectId>,
}

/// Signs an access token for `subject` with `key`.
///
/// # Errors
/// [`InfraError`] if the key cannot sign (a corrupt stored key).
pub fn issue(
    key: &SigningKey,
    audience: &TokenAudience,
    subject: TokenSubject<'_>,
    now: OffsetDateTime,
) -> Result<String, InfraError> {
    let TokenSubject {
        account,
        client,
        scopes,
        project,
    } = subject;
    let mut header = Header::new(Algorithm::EdDSA);
    header.typ = Some(ACCESS_TOKEN_TYPE.to_owned());
    header.kid = Some(key.kid.clone());
    let iat = now.unix_timestamp();
    let claims = AccessClaims {
        iss: audience.issuer.clone(),
        aud: audience.audience.clone(),
        sub: account.0.to_string(),
        client_id: client.as_str().to_owned(),
        iat,
        exp: iat + ACCESS_TOKEN_LIFETIME.whole_seconds(),
        jti: quire_kernel::secret::random_url_token()[..22].to_owned(),
        scope: scope_string(scopes),
        project: project.map(|p| p.to_string()),
    };
    jsonwebtoken::encode(
        &header,
        &claims,
        &EncodingKey::from_ed_der(&key.private_pkcs8),
    )
    .map_err(|e| InfraError::new(format!("cannot sign an access token: {e}")))
}

/// A credential that passed step 1: three base64url parts, JSON header and payload, `alg`
/// `EdDSA`, a `kid`.
#[derive(Debug, Clone)]
pub struct ParsedToken {
    raw: String,
    pub kid: String,
    typ: Option<String>,
    payload: serde_json::Value,
}

fn json_part(part: &str) -> Option<serde_json::Value> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .ok()?;
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .filter(serde_json::Value::is_object)
}

/// Step 1.
///
/// # Errors
/// [`TokenRefusal::Malformed`].
pub fn parse(raw: &str) -> Result<ParsedToken, TokenRefusal> {
    if raw.len() > MAX_TOKEN_BYTES {
        return Err(TokenRefusal::Malformed);
    }
    let mut parts = raw.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenRefusal::Malformed);
    };
    let header = json_part(header).ok_or(TokenRefusal::Malformed)?;
    let payload = json_part(payload).ok_or(TokenRefusal::Malformed)?;
    if signature.is_empty()
        || base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(signature)
            .is_err()
    {
        return Err(TokenRefusal::Malformed);
    }
    if header["alg"] != crate::signing::ALGORITHM || header.get("crit").is_some() {
        return Err(TokenRefusal::Malformed);
    }
    let kid = header["kid"]
        .as_str()
        .filter(|k| !k.is_empty())
        .ok_or(TokenRefusal::Malformed)?
        .to_owned();
    Ok(ParsedToken {
        raw: raw.to_owned(),
        kid,
        typ: header["typ"].as_str().map(str::to_owned),
        payload,
    })
}

impl ParsedToken {
    /// Steps 2 to 5 with `key`, the stored key of this token's `kid` (if any).
    ///
    /// # Errors
    /// [`TokenRefusal::UnknownSigningKey`], [`TokenRefusal::NotAccessToken`],
    /// [`TokenRefusal::IssuerOrAudience`], [`TokenRefusal::Expired`].
    pub fn check(
        &self,
        key: Option<&SigningKey>,
        audience: &TokenAudience,
        now: OffsetDateTime,
    ) -> Result<VerifiedToken, TokenRefusal> {
        let key = key.ok_or(TokenRefusal::UnknownSigningKey)?;
        // Only the signature here: the claims are checked below, in the spec's order.
        let mut signature_only = Validation::new(Algorithm::EdDSA);
        signature_only.validate_exp = false;
        signature_only.validate_aud = false;
        signature_only.required_spec_claims = HashSet::new();
        let decoding = DecodingKey::from_ed_der(&key.public);
        jsonwebtoken::decode::<serde_json::Value>(&self.raw, &decoding, &signature_only)
            .map_err(|_| TokenRefusal::UnknownSigningKey)?;

        let is_access_type = self.typ.as_deref().is_some_and(|t| {
            t.eq_ignore_ascii_case(ACCESS_TOKEN_TYPE)
                || t.eq_ignore_ascii_case("application/at+jwt")
        });
        let claims: AccessClaims = serde_json::from_value(self.payload.clone())
            .ok()
            .filter(|_| is_access_type)
            .ok_or(TokenRefusal::NotAccessToken)?;
        let client_id = ClientId::parse(&claims.client_id).ok_or(TokenRefusal::NotAccessToken)?;

        if claims.iss != audience.issuer || claims.aud != audience.audience {
            return Err(TokenRefusal::IssuerOrAudience);
        }
        if expired(claims.exp, now) {
            return Err(TokenRefusal::Expired);
        }
        let account = uuid_of(&claims.sub).ok_or(TokenRefusal::NotAccessToken)?;
        let scopes = crate::grant::requested_scopes(Some(&claims.scope))
            .ok_or(TokenRefusal::NotAccessToken)?;
        let project = match claims.project.as_deref() {
            None => None,
            Some(raw) => Some(
                raw.parse::<ProjectId>()
                    .map_err(|_| TokenRefusal::NotAccessToken)?,
            ),
        };
        let issued_at = OffsetDateTime::from_unix_timestamp(claims.iat)
            .map_err(|_| TokenRefusal::NotAccessToken)?;
        Ok(VerifiedToken {
            account_id: AccountId(account),
            client_id,
            scopes,
            project,
            issued_at,
            expires: claims.exp,
        })
    }
}

fn uuid_of(raw: &str) -> Option<uuid::Uuid> {
    uuid::Uuid::parse_str(raw).ok()
}
