//! What `/mcp` checks before the protocol runs, and how it refuses: a browser `Origin` that
//! is not allowed and a `Host` that is not Quire's are 403; the credential is the one
//! presented to the MCP resource (`Resource::Mcp`: API keys, and bearer tokens whose audience
//! is `{base}/mcp`); a refusal carries the RFC 6750 / RFC 9728 challenge with Quire's body
//! (`{"error", "error_description"}`), except `not_activated`, which no re-authorization
//! can fix and so carries no challenge but the activation page. Every answer is `no-store`
//! and varies by `Authorization` and `Origin`; CORS headers go to allowed origins only.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use quire_kernel::{App, Principal};
use quire_keys::AuthError;
use serde_json::{Value, json};

/// The origins and hosts `/mcp` answers: Quire's own (from `QUIRE_BASE_URL`) and the
/// configured extra origins.
#[derive(Debug, Clone)]
pub struct Allowed {
    base: String,
    origins: Vec<String>,
    hosts: Vec<String>,
}

/// `scheme://host[:port]` lowercased, with the scheme's default port dropped; `None` for
/// what is not an http(s) origin.
fn normalized_origin(raw: &str) -> Option<String> {
    let raw = raw.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, rest) = raw.split_once("://")?;
    if !matches!(scheme, "http" | "https") || rest.is_empty() || rest.contains('/') {
        return None;
    }
    let default = if scheme == "https" { ":443" } else { ":80" };
    let authority = rest.strip_suffix(default).unwrap_or(rest);
    Some(format!("{scheme}://{authority}"))
}

/// The authority (`host[:port]`) of a URL.
fn authority_of(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    rest.split(['/', '?', '#']).next().filter(|a| !a.is_empty())
}

impl Allowed {
    /// Quire's own origin (`base_url`) and `extra` origins (unparseable entries are
    /// ignored; the server's configuration refuses them before this).
    #[must_use]
    pub fn new(base_url: &str, extra: &[String]) -> Self {
        let base = base_url.trim_end_matches('/').to_owned();
        let origins: Vec<String> = std::iter::once(base.as_str())
            .chain(extra.iter().map(String::as_str))
            .filter_map(normalized_origin)
            .collect();
        let mut hosts = Vec::new();
        if let Some(authority) = authority_of(&base) {
            hosts.push(authority.to_ascii_lowercase());
            // `Host` may omit the scheme's default port.
            if let Some(own) = normalized_origin(&base).as_deref().and_then(authority_of) {
                hosts.push(own.to_owned());
            }
        }
        hosts.dedup();
        Self {
            base,
            origins,
            hosts,
        }
    }

    /// `QUIRE_BASE_URL` without its trailing slash.
    #[must_use]
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The allowed origins, each with an explicit port (the form rmcp matches exactly).
    #[must_use]
    pub fn origins_with_ports(&self) -> Vec<String> {
        self.origins
            .iter()
            .map(|o| {
                let authority = authority_of(o).unwrap_or_default();
                if authority
                    .rsplit_once(':')
                    .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
                {
                    o.clone()
                } else if o.starts_with("https://") {
                    format!("{o}:443")
                } else {
                    format!("{o}:80")
                }
            })
            .collect()
    }

    /// The allowed `Host` values.
    #[must_use]
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Whether a present `Origin` is allowed.
    #[must_use]
    pub fn origin_allowed(&self, origin: &str) -> bool {
        normalized_origin(origin).is_some_and(|o| self.origins.contains(&o))
    }

    /// Whether a `Host` is Quire's.
    #[must_use]
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        self.hosts.contains(&host)
    }

    /// The protected resource metadata document of `/mcp` (served by the authorization
    /// side; named here in every challenge).
    #[must_use]
    pub fn resource_metadata(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.base)
    }
}

/// The `Origin` of a request, when it sent one it can read.
fn origin(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(header::ORIGIN)
        .map(|v| v.to_str().unwrap_or("\u{0}"))
}

/// The authority the request names: its `Host`, else its URI's.
#[must_use]
pub fn host(req: &HttpRequest) -> Option<String> {
    req.headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.as_str().to_owned()))
}

/// Starts an answer with the headers every `/mcp` answer carries: `no-store`, `Vary`, and
/// CORS for an allowed `Origin`.
#[must_use]
pub fn answer(status: StatusCode, req: &HttpRequest, allowed: &Allowed) -> HttpResponseBuilder {
    let mut out = HttpResponse::build(status);
    out.insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((
            header::VARY,
            HeaderValue::from_static("Authorization, Origin"),
        ));
    if let Some(o) = origin(req).filter(|o| allowed.origin_allowed(o))
        && let Ok(value) = HeaderValue::from_str(o)
    {
        out.insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, value))
            .insert_header((
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                HeaderValue::from_static("WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version"),
            ));
    }
    out
}

fn refusal(
    status: StatusCode,
    req: &HttpRequest,
    allowed: &Allowed,
    body: Value,
    challenge: Option<String>,
) -> HttpResponse {
    let mut out = answer(status, req, allowed);
    if let Some(challenge) = challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
        out.insert_header((header::WWW_AUTHENTICATE, challenge));
    }
    out.json(body)
}

/// The checks before authentication: a present `Origin` must be allowed and the `Host`
/// must be Quire's, else 403 (the MCP transport's DNS-rebinding rules).
///
/// # Errors
/// The 403 answer.
pub fn check_origin_and_host(
    req: &HttpRequest,
    allowed: &Allowed,
) -> Result<(), Box<HttpResponse>> {
    if let Some(o) = origin(req)
        && !allowed.origin_allowed(o)
    {
        return Err(Box::new(refusal(
            StatusCode::FORBIDDEN,
            req,
            allowed,
            json!({"error": "invalid_origin",
                   "error_description": "this Origin may not call the MCP endpoint"}),
            None,
        )));
    }
    if !host(req).is_some_and(|h| allowed.host_allowed(&h)) {
        return Err(Box::new(refusal(
            StatusCode::FORBIDDEN,
            req,
            allowed,
            json!({"error": "invalid_host",
                   "error_description": "the Host header does not name this server"}),
            None,
        )));
    }
    Ok(())
}

/// The 401 for a refused or missing credential, 403 `not_activated`, or a 500.
#[must_use]
pub fn refuse_credential(
    error: &AuthError,
    sent: bool,
    req: &HttpRequest,
    allowed: &Allowed,
) -> HttpResponse {
    let metadata = allowed.resource_metadata();
    match error {
        AuthError::InvalidApiKey | AuthError::NotMaster => {
            let (description, challenge) = if sent {
                (
                    "unknown or revoked API key",
                    format!(
                        r#"Bearer error="invalid_token", error_description="unknown or revoked API key", resource_metadata="{metadata}", scope="page""#
                    ),
                )
            } else {
                (
                    "missing credential",
                    format!(r#"Bearer resource_metadata="{metadata}", scope="page""#),
                )
            };
            refusal(
                StatusCode::UNAUTHORIZED,
                req,
                allowed,
                json!({"error": "invalid_api_key", "error_description": description}),
                Some(challenge),
            )
        }
        AuthError::InvalidToken(description) => refusal(
            StatusCode::UNAUTHORIZED,
            req,
            allowed,
            json!({"error": "invalid_token", "error_description": description}),
            Some(format!(
                r#"Bearer error="invalid_token", error_description="{description}", resource_metadata="{metadata}", scope="page""#
            )),
        ),
        AuthError::NotActivated => {
            let activation = format!("{}/account/activate", allowed.base());
            refusal(
                StatusCode::FORBIDDEN,
                req,
                allowed,
                json!({"error": "not_activated",
                       "error_description": format!("This account is not activated yet. Activate it at {activation}, then reconnect."),
                       "activation_url": activation}),
                None,
            )
        }
        AuthError::Infra(e) => {
            tracing::error!(error = %e, "mcp: authentication failed on infrastructure");
            refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                req,
                allowed,
                json!({"error": "internal_error", "error_description": "internal error"}),
                None,
            )
        }
    }
}

/// The step-up refusal: the credential is good but lacks the `page` scope.
#[must_use]
pub fn insufficient_scope(req: &HttpRequest, allowed: &Allowed, description: &str) -> HttpResponse {
    let metadata = allowed.resource_metadata();
    refusal(
        StatusCode::FORBIDDEN,
        req,
        allowed,
        json!({"error": "insufficient_scope", "error_description": description}),
        Some(format!(
            r#"Bearer error="insufficient_scope", scope="page", resource_metadata="{metadata}", error_description="{description}""#
        )),
    )
}

/// Whether a principal may use `/mcp` at all: it needs the `page` app (or `page:read`).
#[must_use]
pub fn may_enter(principal: &Principal) -> bool {
    principal.has_app(App::Page)
}

/// The answer to a CORS preflight: allowed origins get the methods and headers MCP clients
/// send; any other origin is 403.
#[must_use]
pub fn preflight(req: &HttpRequest, allowed: &Allowed) -> HttpResponse {
    match origin(req) {
        Some(o) if !allowed.origin_allowed(o) => refusal(
            StatusCode::FORBIDDEN,
            req,
            allowed,
            json!({"error": "invalid_origin",
                   "error_description": "this Origin may not call the MCP endpoint"}),
            None,
        ),
        _ => answer(StatusCode::NO_CONTENT, req, allowed)
            .insert_header((header::ALLOW, "POST, GET, DELETE, OPTIONS"))
            .insert_header((
                header::ACCESS_CONTROL_ALLOW_METHODS,
                "POST, GET, DELETE, OPTIONS",
            ))
            .insert_header((
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID",
            ))
            .insert_header((header::ACCESS_CONTROL_MAX_AGE, "600"))
            .finish(),
    }
}

/// 405 for GET and DELETE of an authenticated caller: this server keeps no stream and no
/// session.
#[must_use]
pub fn method_not_allowed(req: &HttpRequest, allowed: &Allowed) -> HttpResponse {
    answer(StatusCode::METHOD_NOT_ALLOWED, req, allowed)
        .insert_header((header::ALLOW, "POST"))
        .json(json!({"error": "method_not_allowed",
                     "error_description": "the MCP endpoint takes POST only"}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_normalized_and_hosts_come_from_the_base() {
        let a = Allowed::new("https://Quire.test/", &["http://localhost:6274".into()]);
        assert!(a.origin_allowed("https://quire.test"));
        assert!(a.origin_allowed("https://quire.test:443"));
        assert!(a.origin_allowed("http://localhost:6274"));
        assert!(!a.origin_allowed("https://evil.test"));
        assert!(!a.origin_allowed("null"));
        assert!(a.host_allowed("quire.test"));
        assert!(!a.host_allowed("evil.test"));
        assert_eq!(
            a.origins_with_ports(),
            vec!["https://quire.test:443", "http://localhost:6274"]
        );
        let local = Allowed::new("http://127.0.0.1:8080", &[]);
        assert!(local.host_allowed("127.0.0.1:8080"));
        assert!(!local.host_allowed("127.0.0.1:9090"));
    }
}
