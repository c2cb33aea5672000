//! The token endpoint's use cases (RFC 6749 §4.1.3 and §6, with PKCE) and revocation
//! (RFC 7009): codes become tokens once, refresh tokens rotate on every use, and a reused
//! code or refresh token revokes its whole grant.

use std::sync::Arc;
use std::time::Duration as StdDuration;

use quire_kernel::{Clock, InfraError, RateLimiter};
use time::OffsetDateTime;

use crate::access_token::{TokenAudience, TokenSubject, issue};
use crate::grant::{
    ACCESS_TOKEN_LIFETIME, AuthorizationCode, Grant, GrantStage, REFRESH_REUSE_GRACE,
    RefreshRecord, RefreshToken, requested_scopes, scope_string,
};
use crate::model::{ClientId, ClientType, OAuthClient};
use crate::ports::{ClientStore, GrantStore, SigningKeyStore};
use crate::resource::{INVALID_TARGET, resource_indicator, resource_name};
use crate::signing::{KeySchedule, SigningKey};

/// Token requests one address may make per window (the device token route's figure).
pub const TOKEN_RATE_LIMIT: u32 = 600;
pub const TOKEN_RATE_WINDOW: StdDuration = StdDuration::from_secs(15 * 60);

/// How the client authenticated (RFC 6749 §2.3.1): Basic, form fields, or only its id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientCredentials {
    pub client_id: Option<String>,
    pub secret: Option<String>,
    /// The credentials came in an `Authorization: Basic` header.
    pub basic: bool,
}

/// A token request's fields, as received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenRequest {
    pub grant_type: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub scope: Option<String>,
    /// RFC 8707: must name the grant's resource when present.
    pub resource: Option<String>,
}

/// What the token endpoint answers.
#[derive(Debug, Clone)]
pub struct IssuedTokens {
    pub access_token: String,
    /// Seconds: 900.
    pub expires_in: i64,
    pub refresh_token: RefreshToken,
    pub scope: String,
}

/// RFC 6749 §5.2 errors; the text is the `error_description`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("{0}")]
    InvalidRequest(String),
    /// Unknown or deleted client, or wrong or missing secret.
    #[error("client authentication failed")]
    InvalidClient { basic: bool },
    #[error("{0}")]
    InvalidGrant(&'static str),
    #[error("only the authorization_code and refresh_token grants are supported")]
    UnsupportedGrantType,
    #[error("{0}")]
    InvalidScope(String),
    /// RFC 8707 §2: `resource` names no resource of this server, or not the grant's.
    #[error("{0}")]
    InvalidTarget(&'static str),
    /// RFC 7009 §2.2.1: access tokens are not revoked one by one.
    #[error(
        "access tokens expire within 15 minutes and are not revoked one by one; revoke the refresh token"
    )]
    UnsupportedTokenType,
    #[error("too many token requests from this address; wait a few minutes")]
    RateLimited,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

impl TokenError {
    /// The RFC 6749 `error` code.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_) => "invalid_request",
            Self::InvalidClient { .. } => "invalid_client",
            Self::InvalidGrant(_) => "invalid_grant",
            Self::UnsupportedGrantType => "unsupported_grant_type",
            Self::InvalidScope(_) => "invalid_scope",
            Self::InvalidTarget(_) => "invalid_target",
            Self::UnsupportedTokenType => "unsupported_token_type",
            Self::RateLimited => "rate_limited",
            Self::Infra(_) => "server_error",
        }
    }
}

/// A single-use secret presented a second time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spent {
    Code,
    RefreshToken,
}

/// RFC 8707 §2.2: a token request naming a resource asks for the grant's; `resource` is
/// already the stored name of a valid one.
fn same_resource(request: &TokenRequest, grant: &Grant) -> Result<(), TokenError> {
    match request.resource.as_deref() {
        Some(name) if name != resource_name(grant.resource) => Err(TokenError::InvalidTarget(
            "resource differs from the one the account holder authorized",
        )),
        _ => Ok(()),
    }
}

fn required<'a>(value: Option<&'a str>, field: &str) -> Result<&'a str, TokenError> {
    value
        .filter(|v| !v.is_empty())
        .ok_or_else(|| TokenError::InvalidRequest(format!("{field} is required")))
}

/// Ports of the token service.
#[derive(Debug, Clone)]
pub struct TokenPorts {
    pub clients: Arc<dyn ClientStore>,
    pub grants: Arc<dyn GrantStore>,
    pub keys: Arc<dyn SigningKeyStore>,
    pub limiter: Arc<dyn RateLimiter>,
    pub clock: Arc<dyn Clock>,
}

/// The token and revocation endpoints' use cases.
#[derive(Debug, Clone)]
pub struct TokenService {
    ports: TokenPorts,
    audience: TokenAudience,
}

impl TokenService {
    #[must_use]
    pub fn new(ports: TokenPorts, audience: TokenAudience) -> Self {
        Self { ports, audience }
    }

    /// `iss` and `aud` of the tokens this service signs.
    #[must_use]
    pub fn audience(&self) -> &TokenAudience {
        &self.audience
    }

    /// `POST /api/oauth/token`.
    ///
    /// # Errors
    /// See [`TokenError`]; a refused request changes nothing, except that a reused code or
    /// refresh token revokes its grant.
    pub async fn token(
        &self,
        credentials: &ClientCredentials,
        request: &TokenRequest,
        address: &str,
    ) -> Result<IssuedTokens, TokenError> {
        self.count(address).await?;
        let grant_type = required(request.grant_type.as_deref(), "grant_type")?;
        if !matches!(grant_type, "authorization_code" | "refresh_token") {
            return Err(TokenError::UnsupportedGrantType);
        }
        let client = self.authenticate(credentials).await?;
        let now = self.ports.clock.now();
        if crate::dynamic::due_for_touch(&client, now) {
            self.ports.clients.touch_client(&client.id, now).await?;
        }
        let resource = match request.resource.as_deref() {
            None => None,
            Some(raw) => Some(
                resource_indicator(raw, &self.audience.issuer)
                    .ok_or(TokenError::InvalidTarget(INVALID_TARGET))?,
            ),
        };
        let request = &TokenRequest {
            resource: resource.map(|r| resource_name(r).to_owned()),
            ..request.clone()
        };
        if grant_type == "authorization_code" {
            self.redeem(&client, request).await
        } else {
            self.refresh(&client, request).await
        }
    }

    /// `POST /api/oauth/revoke` (RFC 7009): revokes the grant of a refresh token the
    /// client holds; an unknown token, or another client's, changes nothing and succeeds.
    ///
    /// # Errors
    /// `InvalidClient`, `InvalidRequest` (no token), `UnsupportedTokenType` (an access
    /// token), `RateLimited`, `Infra`.
    pub async fn revoke(
        &self,
        credentials: &ClientCredentials,
        token: Option<&str>,
        address: &str,
    ) -> Result<(), TokenError> {
        self.count(address).await?;
        let client = self.authenticate(credentials).await?;
        let token = required(token, "token")?;
        if token.split('.').count() == 3 {
            return Err(TokenError::UnsupportedTokenType);
        }
        let hash = RefreshToken::received(token).hash();
        if let Some((_, grant)) = self.ports.grants.refresh_token(&hash).await?
            && grant.client_id == client.id
        {
            self.ports
                .grants
                .revoke_grant(&grant.id, self.ports.clock.now())
                .await?;
        }
        Ok(())
    }

    async fn count(&self, address: &str) -> Result<(), TokenError> {
        let allowed = self
            .ports
            .limiter
            .hit(
                "oauth-token",
                address,
                TOKEN_RATE_WINDOW,
                TOKEN_RATE_LIMIT,
                self.ports.clock.now(),
            )
            .await?;
        if allowed {
            Ok(())
        } else {
            Err(TokenError::RateLimited)
        }
    }

    /// RFC 6749 §2.3: a confidential client proves its secret; a public one sends none.
    async fn authenticate(
        &self,
        credentials: &ClientCredentials,
    ) -> Result<OAuthClient, TokenError> {
        let refused = TokenError::InvalidClient {
            basic: credentials.basic,
        };
        let Some(id) = credentials.client_id.as_deref() else {
            return Err(TokenError::InvalidRequest("client_id is required".into()));
        };
        let Some(id) = ClientId::parse(id) else {
            return Err(refused);
        };
        let client = self
            .ports
            .clients
            .client(&id)
            .await?
            .filter(OAuthClient::is_live)
            .ok_or_else(|| refused.clone())?;
        let authenticated = match (client.client_type, credentials.secret.as_deref()) {
            (ClientType::Confidential, Some(secret)) => client.secret_matches(secret),
            (ClientType::Public, None) => true,
            _ => false,
        };
        if authenticated {
            Ok(client)
        } else {
            Err(refused)
        }
    }

    async fn redeem(
        &self,
        client: &OAuthClient,
        request: &TokenRequest,
    ) -> Result<IssuedTokens, TokenError> {
        let code = required(request.code.as_deref(), "code")?;
        let redirect_uri = required(request.redirect_uri.as_deref(), "redirect_uri")?;
        let verifier = required(request.code_verifier.as_deref(), "code_verifier")?;
        let now = self.ports.clock.now();
        let grant = self
            .ports
            .grants
            .grant_by_code(&AuthorizationCode::received(code).hash())
            .await?
            .filter(|g| g.client_id == client.id)
            .ok_or(TokenError::InvalidGrant("unknown authorization code"))?;
        match grant.stage {
            GrantStage::Redeemed { .. } => return Err(self.reused(&grant, now, Spent::Code).await),
            GrantStage::Approved {
                code_expires_at, ..
            } if code_expires_at <= now => {
                return Err(TokenError::InvalidGrant(
                    "the authorization code has expired",
                ));
            }
            GrantStage::Approved { .. } => {}
            GrantStage::Pending { .. } => {
                return Err(TokenError::InvalidGrant("unknown authorization code"));
            }
        }
        if grant.revoked_at.is_some() {
            return Err(TokenError::InvalidGrant("this authorization was revoked"));
        }
        same_resource(request, &grant)?;
        if grant.redirect_uri != redirect_uri {
            return Err(TokenError::InvalidGrant(
                "redirect_uri differs from the authorization request's",
            ));
        }
        if !grant.code_challenge.verifies(verifier) {
            return Err(TokenError::InvalidGrant(
                "code_verifier does not match the code_challenge",
            ));
        }
        let key = self.signing_key(now).await?;
        let (refresh, record) = RefreshRecord::issue(&grant, now);
        if !self
            .ports
            .grants
            .redeem_code(&grant.id, now, &record)
            .await?
        {
            // Another request redeemed it first: this is the second use.
            return Err(self.reused(&grant, now, Spent::Code).await);
        }
        self.tokens(&key, &grant, &grant.scopes, refresh, now)
    }

    async fn refresh(
        &self,
        client: &OAuthClient,
        request: &TokenRequest,
    ) -> Result<IssuedTokens, TokenError> {
        let presented = required(request.refresh_token.as_deref(), "refresh_token")?;
        let now = self.ports.clock.now();
        let hash = RefreshToken::received(presented).hash();
        let (record, grant) = self
            .ports
            .grants
            .refresh_token(&hash)
            .await?
            .filter(|(_, g)| g.client_id == client.id)
            .ok_or(TokenError::InvalidGrant("unknown refresh token"))?;
        if grant.revoked_at.is_some() {
            return Err(TokenError::InvalidGrant("this authorization was revoked"));
        }
        if record.expires_at <= now {
            return Err(TokenError::InvalidGrant("the refresh token has expired"));
        }
        same_resource(request, &grant)?;
        let reusable_after = now - REFRESH_REUSE_GRACE;
        if record.rotated_at.is_some_and(|t| t <= reusable_after) {
            return Err(self.reused(&grant, now, Spent::RefreshToken).await);
        }
        let scopes = match requested_scopes(request.scope.as_deref()) {
            None => grant.scopes.clone(),
            Some(asked) if grant.scopes.covers(&asked) => asked,
            Some(_) => {
                return Err(TokenError::InvalidScope(
                    "a refresh cannot widen the scopes the account holder approved".into(),
                ));
            }
        };
        let key = self.signing_key(now).await?;
        let (next, next_record) = RefreshRecord::issue(&grant, now);
        if !self
            .ports
            .grants
            .rotate_refresh(&hash, now, reusable_after, &next_record)
            .await?
        {
            return Err(self.reused(&grant, now, Spent::RefreshToken).await);
        }
        self.tokens(&key, &grant, &scopes, next, now)
    }

    /// A second use of a single-use secret: revoke what it issued (RFC 6749 §4.1.2, RFC 9700
    /// §4.14.2).
    async fn reused(&self, grant: &Grant, now: OffsetDateTime, spent: Spent) -> TokenError {
        if let Err(e) = self.ports.grants.revoke_grant(&grant.id, now).await {
            return e.into();
        }
        TokenError::InvalidGrant(match spent {
            Spent::Code => {
                "the authorization code was already used; every token it issued is revoked"
            }
            Spent::RefreshToken => {
                "the refresh token was already used; every token of this authorization is revoked"
            }
        })
    }

    fn tokens(
        &self,
        key: &SigningKey,
        grant: &Grant,
        scopes: &crate::grant::Scopes,
        refresh: RefreshToken,
        now: OffsetDateTime,
    ) -> Result<IssuedTokens, TokenError> {
        let access_token = issue(
            key,
            &self.audience.at(grant.resource),
            TokenSubject {
                account: grant.account_id,
                client: &grant.client_id,
                scopes,
                project: grant.project_id,
            },
            now,
        )?;
        Ok(IssuedTokens {
            access_token,
            expires_in: ACCESS_TOKEN_LIFETIME.whole_seconds(),
            refresh_token: refresh,
            scope: scope_string(scopes),
        })
    }

    /// The key that signs now, storing a new one when the schedule says so and deleting
    /// keys past their retirement.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn signing_key(&self, now: OffsetDateTime) -> Result<SigningKey, InfraError> {
        let mut keys = self.ports.keys.signing_keys().await?;
        if let Some(activates_at) = KeySchedule::due(&keys, now) {
            let fresh = SigningKey::generate(now, activates_at)?;
            self.ports.keys.insert_signing_key(&fresh).await?;
            keys = self.ports.keys.signing_keys().await?;
        }
        let expired = KeySchedule::expired(&keys, now);
        if !expired.is_empty() {
            self.ports.keys.delete_signing_keys(&expired).await?;
        }
        KeySchedule::signer(&keys, now)
            .cloned()
            .ok_or_else(|| InfraError::new("no signing key"))
    }

    /// The keys that verify now, for the JWKS document.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn published_keys(&self) -> Result<Vec<SigningKey>, InfraError> {
        let now = self.ports.clock.now();
        // Makes the first key on a fresh service, so the document is never empty.
        self.signing_key(now).await?;
        let keys = self.ports.keys.signing_keys().await?;
        Ok(keys
            .iter()
            .filter(|k| KeySchedule::verifies(&keys, k, now))
            .cloned()
            .collect())
    }
}
