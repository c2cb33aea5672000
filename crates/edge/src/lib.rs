//! `quire-edge`: what every actix surface of Quire shares, so that each surface (the JSON API,
//! the dashboard, and the services to come) is a crate of its own that never depends on
//! another: the application state ([`AppState`], the services and the readiness port); the
//! error every handler answers with and the one mapping from domain errors to `(status, code)`
//! ([`ApiError`]); the typed success answers handlers return ([`answer`]); the key and bearer
//! extractors ([`auth::Authenticated`], and [`auth::Scoped`], which also checks the
//! credential's app scope) and the dashboard session ([`session`]); the size-limited request
//! body and the mappings long ones are read into ([`body`], [`mapping`], [`in_flight`]), and
//! the place a streamed one (an object upload) takes among them ([`streamed`]); typed JSON
//! bodies ([`json`]), and the policy fields the link and object patch bodies take alike
//! ([`policy_body`]); routes with their 405s and `HEAD` ([`routing`], [`documented`]); what
//! the documents of every surface share: the refusals many routes answer alike
//! ([`refusals`]), the building blocks of a field's JSON Schema and the rules of the fields
//! several surfaces take ([`schema`]), and the paging of lists ([`paging`]);
//! same-origin checks ([`origin`]); an account's use of a quota as lists show it
//! ([`quota`]); the client's address ([`client_ip`]); connection limits and body deadlines
//! ([`limits`]); the headers every answer carries ([`answer_headers`]); and the
//! request log and the count of requests by route in the metrics ([`request_log`]).
//!
//! It depends on the application (`quire-app`'s services) and domain crates, actix-web,
//! utoipa, `metrics` and `quire-wire` (for what both listeners count the same way); it never touches a
//! database or a file directly (readiness is asked through the [`Readiness`] port,
//! implemented by the server).

pub mod answer;
pub mod answer_headers;
pub mod auth;
pub mod body;
pub mod client_ip;
pub mod documented;
mod error;
pub mod in_flight;
pub mod json;
pub mod limits;
pub mod mapping;
pub mod origin;
pub mod paging;
pub mod policy_body;
pub mod quota;
pub mod refusals;
pub mod request_log;
pub mod routing;
pub mod schema;
pub mod session;
mod skeleton;
pub mod streamed;

use std::sync::Arc;

use async_trait::async_trait;
use quire_app::Services;

pub use error::{ApiError, SessionRefusal};

/// Can the service take requests? Implemented by the server over the database and the
/// bundle store.
#[async_trait]
pub trait Readiness: Send + Sync + std::fmt::Debug {
    /// # Errors
    /// Which dependency is not ready, and how; its text is the `reason` readiness probes see,
    /// so it holds no address or secret.
    async fn check(&self) -> Result<(), NotReady>;
}

/// A dependency the service needs to answer requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dependency {
    Database,
    BundleStorage,
}

impl std::fmt::Display for Dependency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Database => "database",
            Self::BundleStorage => "bundle storage",
        })
    }
}

/// Why the service is not ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotReady {
    #[error("{0} unreachable")]
    Unreachable(Dependency),
    #[error("{0} did not answer within {1} s")]
    Slow(Dependency, u64),
}

/// What every handler can reach: the use-case services (through `Deref`, so a handler
/// writes `state.pages`), and what only the edge knows.
#[derive(Debug, Clone)]
pub struct AppState {
    pub services: Services,
    /// The public origin of the API and dashboard (`QUIRE_BASE_URL`): form posts must come
    /// from it, and cookies are `Secure` when it is https.
    pub base_url: String,
    /// Proxies whose `X-Forwarded-For` names the client (for rate limits).
    pub trusted_proxies: client_ip::TrustedProxies,
    pub readiness: Arc<dyn Readiness>,
    /// Browser origins allowed to call the MCP endpoint besides `base_url`'s
    /// (`QUIRE_MCP_ALLOWED_ORIGINS`).
    pub mcp_origins: Vec<String>,
}

impl AppState {
    /// The state of the API origin over the services the composition root built.
    #[must_use]
    pub fn new(
        services: Services,
        base_url: String,
        trusted_proxies: client_ip::TrustedProxies,
        readiness: Arc<dyn Readiness>,
    ) -> Self {
        Self {
            services,
            base_url,
            trusted_proxies,
            readiness,
            mcp_origins: Vec::new(),
        }
    }

    /// The same state, with `origins` allowed to call the MCP endpoint.
    #[must_use]
    pub fn with_mcp_origins(mut self, origins: Vec<String>) -> Self {
        self.mcp_origins = origins;
        self
    }
}

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.services
    }
}

/// Largest JSON body the platform API accepts.
pub const MAX_PLATFORM_BODY: usize = 64 * 1024;

/// The largest page-API body: the page size limit in base64 (4/3) plus room for the JSON
/// around each file entry (1 KiB per file) and 1 MiB for the rest.
#[must_use]
pub fn page_body_limit(limits: &quire_pages::Limits) -> usize {
    let bundle = usize::try_from(limits.max_page_bytes).unwrap_or(usize::MAX);
    bundle
        .saturating_mul(4)
        .div_ceil(3)
        .saturating_add(limits.max_files.saturating_mul(1024))
        .saturating_add(1024 * 1024)
}
