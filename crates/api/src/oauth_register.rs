//! Dynamic client registration (RFC 7591) at `POST /api/oauth/register`, for agents: no
//! credential, JSON client metadata in, the client (and a confidential one's secret, this
//! once) out. `GET /api/oauth/register/{client_id}` is its `registration_client_uri`: the
//! client's public metadata, never a secret.

use actix_web::{HttpRequest, get, post, web};
use quire_oauth::{ClientMetadata, ClientType, OAuthClient, RedirectUri, Registration};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::OAUTH;
use quire_edge::ApiError;
use quire_edge::AppState;
use quire_edge::answer::{Answer, Created, NoStore};
use quire_edge::body::Body;

/// RFC 7591 §2 client metadata. Quire reads these fields and ignores any other.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[schema(example = crate::examples::dynamic_registration_request)]
pub struct DynamicRegistrationRequest {
    /// Where the authorization response may go: https on any host (exact match), http on
    /// `localhost`, `127.0.0.1` or `[::1]` (any port), or an app's private-use scheme
    /// (not javascript, data, file, vbscript, blob or about). At most 10.
    #[serde(default)]
    pub redirect_uris: Option<Vec<String>>,
    /// Shown at consent with an "unverified" badge; at most 60 characters are kept.
    #[serde(default)]
    pub client_name: Option<String>,
    /// `none` (a public client, PKCE only), `client_secret_basic` (the default) or
    /// `client_secret_post`.
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
    /// Only `authorization_code` and `refresh_token`.
    #[serde(default)]
    pub grant_types: Option<Vec<String>>,
    /// Only `code`.
    #[serde(default)]
    pub response_types: Option<Vec<String>>,
}

/// A registered client (RFC 7591 §3.2.1).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::dynamic_registration_answer)]
pub struct DynamicClientAnswer {
    /// The client's id at this server.
    pub client_id: String,
    /// A confidential client's secret: in the registration's answer only, never again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// When the client registered, in seconds since the epoch.
    pub client_id_issued_at: i64,
    /// `0` (the secret does not expire); present with a secret only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_expires_at: Option<i64>,
    /// The name shown at consent.
    pub client_name: String,
    /// The registered redirect URIs.
    pub redirect_uris: Vec<String>,
    /// `none`, `client_secret_basic` or `client_secret_post`.
    pub token_endpoint_auth_method: String,
    /// `authorization_code` and `refresh_token`.
    pub grant_types: Vec<String>,
    /// `code`.
    pub response_types: Vec<String>,
    /// Where this client's public metadata is read back.
    pub registration_client_uri: String,
}

impl DynamicClientAnswer {
    fn new(client: &OAuthClient, method: &str, secret: Option<String>, issuer: &str) -> Self {
        Self {
            registration_client_uri: format!("{issuer}{OAUTH}/register/{}", client.id),
            client_id: client.id.as_str().to_owned(),
            client_secret_expires_at: secret.as_ref().map(|_| 0),
            client_secret: secret,
            client_id_issued_at: client.created_at.unix_timestamp(),
            client_name: client.name.clone(),
            redirect_uris: client
                .redirect_uris
                .iter()
                .map(RedirectUri::as_str)
                .map(str::to_owned)
                .collect(),
            token_endpoint_auth_method: method.to_owned(),
            grant_types: vec!["authorization_code".into(), "refresh_token".into()],
            response_types: vec!["code".into()],
        }
    }
}

/// Register an agent as an OAuth client (RFC 7591); no credential needed. The client is
/// marked unverified at consent and deleted after 30 days unused.
#[utoipa::path(tag = "oauth",
    request_body = DynamicRegistrationRequest,
    responses(
        (status = 201, body = DynamicClientAnswer),
        (status = 400, description = "invalid_redirect_uri (none, more than 10, or one the agent rules refuse), invalid_client_metadata (an unsupported token_endpoint_auth_method, grant type or response type, or a body that is not JSON client metadata)"),
        (status = 403, description = "registration_disabled: the operator turned dynamic registration off"),
        (status = 429, description = "rate_limited: more than 20 registrations an hour from this address")))]
#[post("/register")]
pub async fn register(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Body,
) -> Result<NoStore<Created<DynamicClientAnswer>>, ApiError> {
    let f: DynamicRegistrationRequest = serde_json::from_slice(&body.0).map_err(|_| {
        ApiError::from(quire_oauth::RegistrationError::InvalidClientMetadata(
            "the body must be a JSON object of client metadata (RFC 7591)".into(),
        ))
    })?;
    let metadata = ClientMetadata {
        redirect_uris: f.redirect_uris,
        client_name: f.client_name,
        token_endpoint_auth_method: f.token_endpoint_auth_method,
        grant_types: f.grant_types,
        response_types: f.response_types,
    };
    let address = quire_edge::client_ip::of(&req, &state.trusted_proxies);
    let made = state
        .oauth_registration
        .register(&metadata, &address)
        .await?;
    let issuer = &state.oauth_tokens.audience().issuer;
    let client = &made.registered.client;
    let answer = DynamicClientAnswer::new(
        client,
        made.token_endpoint_auth_method,
        made.registered
            .secret
            .as_ref()
            .map(|s| s.expose().to_owned()),
        issuer,
    );
    Ok(NoStore(Created::at(
        answer.registration_client_uri.clone(),
        answer,
    )))
}

/// A dynamically registered client's public metadata (its `registration_client_uri`):
/// never its secret.
#[utoipa::path(tag = "oauth",
    params(("client_id" = String, Path, description = "The client's id")),
    responses(
        (status = 200, body = DynamicClientAnswer),
        (status = 404, description = "not_found: no live dynamically registered client has this id")))]
#[get("/register/{client_id}")]
pub async fn registered(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<NoStore<Answer<DynamicClientAnswer>>, ApiError> {
    let client = state
        .oauth_registration
        .client(&id)
        .await?
        .ok_or_else(|| ApiError::not_found("client"))?;
    let method = match client.client_type {
        ClientType::Public => "none",
        ClientType::Confidential => "client_secret_basic",
    };
    debug_assert_eq!(client.registration, Registration::Dynamic);
    let issuer = &state.oauth_tokens.audience().issuer;
    Ok(NoStore(Answer::ok(DynamicClientAnswer::new(
        &client, method, None, issuer,
    ))))
}
