//! The OAuth authorization server's machine endpoints: the token endpoint (RFC 6749 §3.2,
//! with PKCE), revocation (RFC 7009), the signing keys (JWKS) and the server's metadata
//! (RFC 8414), and the agent endpoint's protected resource metadata (RFC 9728). Bodies are
//! form-encoded; answers carry `Cache-Control: no-store`.

use actix_web::http::header;
use actix_web::{HttpRequest, get, post, web};
use base64::Engine;
use quire_oauth::{ClientCredentials, TokenRequest};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use quire_edge::ApiError;
use quire_edge::AppState;
use quire_edge::answer::{Answer, AnyOrigin, Cached, Done, NoStore};
use quire_edge::body::Body;

/// The token endpoint's form (RFC 6749 §4.1.3 and §6); client credentials may come here
/// (`client_secret_post`) or in a Basic header.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[schema(example = crate::examples::token_form)]
pub struct TokenForm {
    /// `authorization_code` or `refresh_token`.
    #[serde(default)]
    pub grant_type: Option<String>,
    /// The authorization code (`authorization_code` grant).
    #[serde(default)]
    pub code: Option<String>,
    /// The redirect URI the code was issued for (`authorization_code` grant).
    #[serde(default)]
    pub redirect_uri: Option<String>,
    /// The PKCE verifier (RFC 7636 §4.5).
    #[serde(default)]
    pub code_verifier: Option<String>,
    /// The refresh token to exchange (`refresh_token` grant).
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// A refresh may narrow the approved scopes, never widen them.
    #[serde(default)]
    pub scope: Option<String>,
    /// RFC 8707: the resource the tokens are for (`{base}/mcp` or `{base}/api`); when
    /// given, it must be the one the authorization request named.
    #[serde(default)]
    pub resource: Option<String>,
    /// The client's id (or send it by HTTP Basic).
    #[serde(default)]
    pub client_id: Option<String>,
    /// A confidential client's secret (or send it by HTTP Basic); none for public clients.
    #[serde(default)]
    pub client_secret: Option<String>,
}

/// The revocation endpoint's form (RFC 7009 §2.1). A `token_type_hint` is accepted and
/// ignored, like any unknown field: refresh tokens are the only revocable kind.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[schema(example = crate::examples::revoke_form)]
pub struct RevokeForm {
    /// The refresh token to revoke.
    #[serde(default)]
    pub token: Option<String>,
    /// The client's id (or send it by HTTP Basic).
    #[serde(default)]
    pub client_id: Option<String>,
    /// A confidential client's secret (or send it by HTTP Basic); none for public clients.
    #[serde(default)]
    pub client_secret: Option<String>,
}

/// A successful token answer (RFC 6749 §5.1).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::token_answer)]
pub struct TokenAnswer {
    /// A JWT (RFC 9068), valid 900 s.
    pub access_token: String,
    /// `Bearer`.
    pub token_type: String,
    /// Seconds until the access token expires (900).
    pub expires_in: i64,
    /// Opaque; single use: each refresh returns the next one.
    pub refresh_token: String,
    /// The scopes granted, space-separated.
    pub scope: String,
}

/// The signing keys (RFC 7517 §5).
#[derive(Debug, Serialize)]
pub struct Jwks {
    pub keys: Vec<serde_json::Value>,
}

/// The authorization server's metadata (RFC 8414 §2). Its fields are in alphabetical order,
/// as the server writes its other JSON maps.
#[derive(Debug, Serialize)]
pub struct ServerMetadata {
    pub authorization_endpoint: String,
    /// RFC 9207: every authorization response carries `iss`.
    pub authorization_response_iss_parameter_supported: bool,
    /// A `client_id` may be the `https` URL of a client metadata document; false when the
    /// operator turned them off.
    pub client_id_metadata_document_supported: bool,
    pub code_challenge_methods_supported: &'static [&'static str],
    pub grant_types_supported: &'static [&'static str],
    pub issuer: String,
    pub jwks_uri: String,
    /// RFC 7591; absent when the operator turned dynamic registration off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    pub response_modes_supported: &'static [&'static str],
    pub response_types_supported: &'static [&'static str],
    pub revocation_endpoint: String,
    pub revocation_endpoint_auth_methods_supported: &'static [&'static str],
    pub scopes_supported: Vec<&'static str>,
    pub token_endpoint: String,
    pub token_endpoint_auth_methods_supported: &'static [&'static str],
}

fn form<T: serde::de::DeserializeOwned + Default>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_urlencoded::from_bytes(body).map_err(|_| {
        ApiError::from(quire_oauth::TokenError::InvalidRequest(
            "the body must be application/x-www-form-urlencoded".into(),
        ))
    })
}

fn form_decode(s: &str) -> Option<String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(&format!("v={s}")).ok()?;
    pairs.into_iter().next().map(|(_, v)| v)
}

/// Client credentials from `Authorization: Basic` (RFC 6749 §2.3.1: each part
/// form-urlencoded) or else from the form.
fn credentials(
    req: &HttpRequest,
    client_id: Option<String>,
    client_secret: Option<String>,
) -> Result<ClientCredentials, ApiError> {
    let basic = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Basic ")
                .or_else(|| v.strip_prefix("basic "))
        });
    let Some(encoded) = basic else {
        return Ok(ClientCredentials {
            client_id,
            secret: client_secret,
            basic: false,
        });
    };
    let refused = || ApiError::from(quire_oauth::TokenError::InvalidClient { basic: true });
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(refused)?;
    let (id, secret) = decoded.split_once(':').ok_or_else(refused)?;
    Ok(ClientCredentials {
        client_id: Some(form_decode(id).ok_or_else(refused)?),
        secret: Some(form_decode(secret).ok_or_else(refused)?).filter(|s| !s.is_empty()),
        basic: true,
    })
}

/// Exchange an authorization code (with its PKCE verifier) or a refresh token for tokens.
#[utoipa::path(tag = "oauth",
    request_body(content = TokenForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, body = TokenAnswer),
        (status = 400, description = "invalid_request, invalid_grant (unknown, expired or reused code or refresh token; a reuse revokes the whole authorization), unsupported_grant_type, invalid_scope, invalid_target (a `resource` that is not this server's MCP endpoint or API, or not the authorization's)"),
        (status = 401, description = "invalid_client: unknown or deleted client, wrong or missing secret"),
        (status = 429, description = "rate_limited: more than 600 per 15 minutes from this address")))]
#[post("/token")]
pub async fn token(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Body,
) -> Result<NoStore<Answer<TokenAnswer>>, ApiError> {
    let f: TokenForm = form(&body.0)?;
    let credentials = credentials(&req, f.client_id, f.client_secret)?;
    let request = TokenRequest {
        grant_type: f.grant_type,
        code: f.code,
        redirect_uri: f.redirect_uri,
        code_verifier: f.code_verifier,
        refresh_token: f.refresh_token,
        scope: f.scope,
        resource: f.resource,
    };
    let address = quire_edge::client_ip::of(&req, &state.trusted_proxies);
    let issued = state
        .oauth_tokens
        .token(&credentials, &request, &address)
        .await?;
    Ok(NoStore(Answer::ok(TokenAnswer {
        access_token: issued.access_token,
        token_type: "Bearer".into(),
        expires_in: issued.expires_in,
        refresh_token: issued.refresh_token.expose().to_owned(),
        scope: issued.scope,
    })))
}

/// Revoke a refresh token and every token of its authorization (RFC 7009). Unknown tokens
/// succeed too; access tokens are not revoked one by one (they live 900 s).
#[utoipa::path(tag = "oauth",
    request_body(content = RevokeForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "revoked, or nothing to revoke"),
        (status = 400, description = "invalid_request (no token), unsupported_token_type (an access token)"),
        (status = 401, description = "invalid_client"),
        (status = 429, description = "rate_limited")))]
#[post("/revoke")]
pub async fn revoke(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Body,
) -> Result<NoStore<Done>, ApiError> {
    let f: RevokeForm = form(&body.0)?;
    let credentials = credentials(&req, f.client_id, f.client_secret)?;
    let address = quire_edge::client_ip::of(&req, &state.trusted_proxies);
    state
        .oauth_tokens
        .revoke(&credentials, f.token.as_deref(), &address)
        .await?;
    Ok(NoStore(Done))
}

/// The keys that verify access tokens (RFC 7517), the next one included once published.
#[utoipa::path(tag = "oauth", responses((status = 200, description = "`{keys: [JWK]}`: Ed25519 (`OKP`), `alg` EdDSA, `use` sig, with `kid`")))]
#[get("/.well-known/jwks.json")]
pub async fn jwks(state: web::Data<AppState>) -> Result<Cached<Answer<Jwks>>, ApiError> {
    let keys = state.oauth_tokens.published_keys().await?;
    let keys = keys.iter().map(quire_oauth::SigningKey::jwk).collect();
    Ok(Cached::for_seconds(60, Answer::ok(Jwks { keys })))
}

/// The protected resource metadata of the agent endpoint (RFC 9728 §2).
#[derive(Debug, Serialize)]
pub struct ResourceMetadata {
    pub resource: String,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: &'static [&'static str],
    pub bearer_methods_supported: &'static [&'static str],
    pub resource_name: &'static str,
    pub resource_documentation: String,
}

/// The authorization server's metadata (RFC 8414).
#[utoipa::path(tag = "oauth", responses((status = 200, description = "issuer, endpoints (registration when dynamic registration is on), S256 only, grant types, client authentication methods, scopes, `iss` on authorization responses (RFC 9207)")))]
#[get("/.well-known/oauth-authorization-server")]
pub async fn metadata(state: web::Data<AppState>) -> AnyOrigin<Cached<Answer<ServerMetadata>>> {
    let issuer = &state.oauth_tokens.audience().issuer;
    let client_authentication = &["client_secret_basic", "client_secret_post", "none"];
    let mut scopes = quire_kernel::Scopes::vocabulary();
    // Accepted and ignored: every grant has refresh tokens (clients that see it ask for it).
    scopes.push("offline_access");
    AnyOrigin(Cached::for_seconds(
        300,
        Answer::ok(ServerMetadata {
            authorization_endpoint: format!("{issuer}/oauth/authorize"),
            authorization_response_iss_parameter_supported: true,
            client_id_metadata_document_supported: state.oauth_consent.metadata_documents_enabled(),
            code_challenge_methods_supported: &["S256"],
            grant_types_supported: &["authorization_code", "refresh_token"],
            issuer: issuer.clone(),
            jwks_uri: format!("{issuer}/.well-known/jwks.json"),
            registration_endpoint: state
                .oauth_registration
                .enabled()
                .then(|| format!("{issuer}/api/oauth/register")),
            response_modes_supported: &["query"],
            response_types_supported: &["code"],
            revocation_endpoint: format!("{issuer}/api/oauth/revoke"),
            revocation_endpoint_auth_methods_supported: client_authentication,
            scopes_supported: scopes,
            token_endpoint: format!("{issuer}/api/oauth/token"),
            token_endpoint_auth_methods_supported: client_authentication,
        }),
    ))
}

/// The agent endpoint's protected resource metadata (RFC 9728): its resource identifier
/// (`{base}/mcp`, the `resource` to ask tokens for), this server as its authorization
/// server, and its scopes. There is no document at the root
/// `/.well-known/oauth-protected-resource`: one naming `{base}` would make clients ask for
/// tokens the agent endpoint refuses.
#[utoipa::path(tag = "oauth", responses((status = 200, description = "`resource` `{base}/mcp`, `authorization_servers` `[{base}]`, `scopes_supported` `page` and `page:read`, `bearer_methods_supported` `header`")))]
#[get("/.well-known/oauth-protected-resource/mcp")]
pub async fn protected_resource(
    state: web::Data<AppState>,
) -> AnyOrigin<Cached<Answer<ResourceMetadata>>> {
    let issuer = &state.oauth_tokens.audience().issuer;
    AnyOrigin(Cached::for_seconds(
        300,
        Answer::ok(ResourceMetadata {
            resource: state
                .oauth_tokens
                .audience()
                .at(quire_kernel::Resource::Mcp)
                .audience,
            authorization_servers: vec![issuer.clone()],
            scopes_supported: &["page", "page:read"],
            bearer_methods_supported: &["header"],
            resource_name: "Quire",
            resource_documentation: format!("{issuer}/docs/agents"),
        }),
    ))
}
