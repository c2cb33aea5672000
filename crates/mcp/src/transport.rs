//! The actix adapter around rmcp's Streamable HTTP service: actix speaks `http` 0.2, rmcp
//! `http` 1.x, so the request is rebuilt (method, path, headers, the body already read under
//! the page-size cap) with the caller in its extensions, handed to
//! `StreamableHttpService::handle`, and the answer copied back. The service is stateless
//! (`legacy_session_mode(false)`) and answers plain JSON, so its body ends with the answer
//! and is read whole. A JSON body is first read for its JSON-RPC envelope ([`envelope`]),
//! and what rmcp refuses in plain text is answered as a JSON-RPC error.

use std::sync::Arc;

use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};
use http_body_util::{BodyExt, Full};
use quire_edge::AppState;
use quire_kernel::{Principal, PrincipalKind, Resource};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};

use crate::envelope::{self, Refusal};
use crate::gate::{self, Allowed};
use crate::limiter::Limiter;
use crate::server::QuireMcp;

/// Who called, as the tools see it (put in the rebuilt request's extensions).
#[derive(Debug, Clone)]
pub struct Caller {
    pub principal: Principal,
    /// For the audit log: the OAuth client, or the key's id.
    pub client: String,
}

impl Caller {
    fn new(principal: Principal) -> Self {
        let client = match &principal.kind {
            PrincipalKind::OAuthClient { client_id, .. } => format!("oauth:{client_id}"),
            PrincipalKind::Key { key_id, .. } => format!("key:{}", key_id.0),
            PrincipalKind::Dashboard => "dashboard".to_owned(),
        };
        Self { principal, client }
    }
}

/// The endpoint: the state the gate authenticates with and the rmcp service.
pub struct Endpoint {
    state: AppState,
    service: StreamableHttpService<QuireMcp, NeverSessionManager>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Endpoint")
    }
}

impl Endpoint {
    pub fn new(state: AppState, allowed: &Allowed, body_limit: usize) -> Self {
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_allowed_hosts(allowed.hosts().to_vec())
            .with_allowed_origins(allowed.origins_with_ports())
            .enforce_origin_validation()
            .with_max_request_body_bytes(body_limit);
        let limiter = Arc::new(Limiter::default());
        let tool_state = state.clone();
        let service = StreamableHttpService::new(
            move || Ok(QuireMcp::new(tool_state.clone(), limiter.clone())),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        Self { state, service }
    }
}

/// Every method of `/mcp`: preflight, the gate, then rmcp for POST.
pub async fn serve(
    req: HttpRequest,
    body: web::Bytes,
    endpoint: web::Data<Endpoint>,
    allowed: web::Data<Allowed>,
) -> HttpResponse {
    if req.method() == Method::OPTIONS {
        return gate::preflight(&req, &allowed);
    }
    if let Err(refused) = gate::check_origin_and_host(&req, &allowed) {
        return *refused;
    }
    let header = req
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    let principal = match endpoint
        .state
        .keys
        .authenticate_at(header.as_deref(), Resource::Mcp)
        .await
    {
        Ok(p) => p,
        Err(e) => return gate::refuse_credential(&e, header.is_some(), &req, &allowed),
    };
    if !gate::may_enter(&principal) {
        return gate::insufficient_scope(&req, &allowed, "the MCP endpoint needs the page scope");
    }
    if req.method() != Method::POST {
        return gate::method_not_allowed(&req, &allowed);
    }
    forward(&endpoint, &req, body, Caller::new(principal), &allowed).await
}

async fn forward(
    endpoint: &Endpoint,
    req: &HttpRequest,
    body: web::Bytes,
    caller: Caller,
    allowed: &Allowed,
) -> HttpResponse {
    let path = req
        .uri()
        .path_and_query()
        .map_or("/mcp", actix_web::http::uri::PathAndQuery::as_str);
    let mut builder = http::Request::builder()
        .method(http::Method::POST)
        .uri(path);
    for (name, value) in req.headers() {
        builder = builder.header(name.as_str(), value.as_bytes());
    }
    if !req.headers().contains_key(actix_web::http::header::HOST)
        && let Some(host) = gate::host(req)
    {
        builder = builder.header(http::header::HOST, host);
    }
    let id = if declares_json(req) {
        match envelope::check(&body) {
            Ok(id) => id,
            Err(refusal) => return refused(&refusal, req, allowed),
        }
    } else {
        None
    };
    let Ok(mut request) = builder.body(Full::new(body)) else {
        return gate::answer(StatusCode::BAD_REQUEST, req, allowed)
            .json(serde_json::json!({"error": "invalid_request", "error_description": "unreadable request head"}));
    };
    request.extensions_mut().insert(caller);
    let response = endpoint.service.handle(request).await;
    let (parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    let status =
        StatusCode::from_u16(parts.status.as_u16()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if !status.is_success() && !is_json(parts.headers.get(http::header::CONTENT_TYPE)) {
        return refused(&in_json_rpc(status, &bytes, req, id.as_ref()), req, allowed);
    }
    let mut out = gate::answer(status, req, allowed);
    for (name, value) in &parts.headers {
        if name == http::header::CACHE_CONTROL || name == http::header::VARY {
            continue;
        }
        out.append_header((name.as_str(), value.as_bytes()));
    }
    out.body(bytes)
}

fn refused(refusal: &Refusal, req: &HttpRequest, allowed: &Allowed) -> HttpResponse {
    gate::answer(refusal.status, req, allowed).json(&refusal.body)
}

/// `application/json`, parameters aside, as rmcp reads `Content-Type`.
fn is_json(value: Option<&http::HeaderValue>) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

fn declares_json(req: &HttpRequest) -> bool {
    let value = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| http::HeaderValue::from_bytes(v.as_bytes()).ok());
    is_json(value.as_ref())
}

/// rmcp's plain-text refusals (a head it does not take: `Accept`, `Content-Type`, the
/// `MCP-Protocol-Version` header) as JSON-RPC errors, with rmcp's status and words. An
/// unsupported protocol version is MCP's `-32022`, with the versions served, so a client
/// can retry with one of them.
fn in_json_rpc(status: StatusCode, text: &[u8], req: &HttpRequest, id: Option<&Value>) -> Refusal {
    let words = String::from_utf8_lossy(text);
    let words: String = words.chars().take(300).collect();
    let requested = req
        .headers()
        .get("mcp-protocol-version")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    if status == StatusCode::BAD_REQUEST
        && let Some(requested) = requested.filter(|v| !crate::server::serves(v))
    {
        return Refusal::new(
            status,
            id,
            envelope::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(json!({"requested": requested, "supported": crate::server::versions()}));
    }
    let code = if status.is_server_error() {
        envelope::INTERNAL_ERROR
    } else {
        envelope::INVALID_REQUEST
    };
    Refusal::new(status, id, code, &words)
}
