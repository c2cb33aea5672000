//! `/api/agent-login/…`: the RFC 8628 device login endpoints an agent calls. Bodies may be
//! form-encoded or JSON; answers carry `Cache-Control: no-store`.

use actix_web::http::header;
use actix_web::post;
use actix_web::{HttpRequest, web};
use quire_kernel::ErrorCode;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use quire_edge::ApiError;
use quire_edge::AppState;
use quire_edge::answer::{Answer, NoStore};
use quire_edge::body::Body;

/// The constant `token_type` of the key scheme.
pub const TOKEN_TYPE: &str = "quire_key";

fn invalid_request(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidRequest, message)
}

/// The device login's first call (RFC 8628 §3.1).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[schema(example = crate::examples::device_authorization_request)]
pub struct DeviceAuthorizationRequest {
    /// Shown on the consent screen; default `agent`.
    #[serde(default)]
    #[schema(schema_with = crate::schema::client_name)]
    pub client_name: Option<String>,
}

/// The device login's poll (RFC 8628 §3.4). Both fields are required; the service says
/// which is missing, in the order RFC 8628 checks them.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[schema(example = crate::examples::token_request)]
pub struct TokenRequest {
    #[serde(default)]
    #[schema(schema_with = crate::schema::device_code_grant, required = true)]
    pub grant_type: Option<String>,
    /// From the device authorization answer.
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, required = true)]
    pub device_code: Option<String>,
}

/// Reads a body, form-encoded or JSON (by content type; without one, JSON is tried first),
/// into `T`. An empty body has no fields; a JSON `null` is an absent field; unknown fields
/// are ignored (RFC 6749 §3.2).
fn fields<T: DeserializeOwned + Default>(req: &HttpRequest, body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let as_form = || {
        serde_urlencoded::from_bytes::<T>(body)
            .map_err(|_| invalid_request("the body is not valid form data"))
    };
    if content_type.starts_with("application/x-www-form-urlencoded") {
        return as_form();
    }
    // serde fills a struct from a JSON array too (by position), so `[]` would pass as "no
    // fields": the route's body is an object, and anything else is refused.
    let not_an_object = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    match serde_json::from_slice::<T>(body) {
        Ok(_) if not_an_object => Err(invalid_request(
            "the body must be a JSON object of strings, not an array",
        )),
        Ok(fields) => Ok(fields),
        Err(e) if e.is_data() => Err(invalid_request(format!(
            "the body must be a JSON object of strings: {e}"
        ))),
        Err(_) if content_type.starts_with("application/json") => {
            Err(invalid_request("the body is not valid JSON"))
        }
        Err(_) => as_form(),
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::device_authorization)]
pub struct DeviceAuthorization {
    /// The code the agent polls the token endpoint with; secret.
    pub device_code: String,
    /// Shown as `XXXX-XXXX`.
    pub user_code: String,
    /// Where the person approves the login.
    pub verification_uri: String,
    /// The same, with the user code filled in.
    pub verification_uri_complete: String,
    /// 600.
    pub expires_in: u32,
    /// Seconds between polls (3).
    pub interval: u32,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::device_token)]
pub struct DeviceToken {
    /// A master key (`qk_…`), returned exactly once.
    pub access_token: String,
    /// `Bearer`.
    pub token_type: String,
    /// `master`.
    pub scope: String,
    /// Always `null`: the key does not expire.
    pub expires_in: Option<u64>,
}

/// Start a device login (RFC 8628 §3.1).
#[utoipa::path(tag = "agent-login",
    request_body(content(
        (DeviceAuthorizationRequest = "application/x-www-form-urlencoded"),
        (DeviceAuthorizationRequest = "application/json"))),
    responses(
        (status = 200, body = DeviceAuthorization),
        (status = 400, description = "invalid_request"),
        (status = 429, description = "rate_limited: more than 10 per 15 minutes from this address")))]
#[post("/device_authorization")]
pub async fn device_authorization(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Body,
) -> Result<NoStore<Answer<DeviceAuthorization>>, ApiError> {
    let f: DeviceAuthorizationRequest = fields(&req, &body.0)?;
    let started = state
        .device_auth
        .start(
            f.client_name.as_deref(),
            &quire_edge::client_ip::of(&req, &state.trusted_proxies),
        )
        .await?;
    Ok(NoStore(Answer::ok(DeviceAuthorization {
        device_code: started.device_code.expose().to_owned(),
        user_code: started.user_code.display(),
        verification_uri: started.verification_uri,
        verification_uri_complete: started.verification_uri_complete,
        expires_in: started.expires_in,
        interval: started.interval,
    })))
}

/// Poll for the key (RFC 8628 §3.4). Only the device code can claim it.
#[utoipa::path(tag = "agent-login",
    request_body(content(
        (TokenRequest = "application/x-www-form-urlencoded"),
        (TokenRequest = "application/json"))),
    responses(
        (status = 200, body = DeviceToken),
        (status = 400, description = "unsupported_grant_type, invalid_request, invalid_grant, access_denied, expired_token, authorization_pending, slow_down (with `interval`)"),
        (status = 429, description = "rate_limited: more than 600 per 15 minutes from this address")))]
#[post("/token")]
pub async fn token(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Body,
) -> Result<NoStore<Answer<DeviceToken>>, ApiError> {
    let f: TokenRequest = fields(&req, &body.0)?;
    let claimed = state
        .device_auth
        .poll(
            f.grant_type.as_deref(),
            f.device_code.as_deref(),
            &quire_edge::client_ip::of(&req, &state.trusted_proxies),
        )
        .await?;
    Ok(NoStore(Answer::ok(DeviceToken {
        access_token: claimed.access_token.expose().to_owned(),
        token_type: TOKEN_TYPE.to_owned(),
        scope: "master".to_owned(),
        expires_in: None,
    })))
}
