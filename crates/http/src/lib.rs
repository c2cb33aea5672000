//! `quire-http`: the HTTP edge of Quire, one folder per inbound surface:
//!
//! - `api/`: the JSON API by resource, each route written once on its handler and documented
//!   as it is registered (utoipa-actix-web);
//! - `dashboard/`: the server-rendered dashboard (askama): sign-in, the second factor, the
//!   device login's consent screen, the pass to private pages;
//! - [`pages_origin`]: the second listener, serving published pages and short links, on an
//!   HTTP/1.1 server of its own (`pages_origin::wire`, on tokio and httparse);
//! - `common/`: what they share (the size-limited body and the mappings long ones are read
//!   into, same-origin checks, the client's address, connection limits, routes with their
//!   405s and `HEAD`, the headers every API answer carries, the request log); `error.rs` is the one mapping from domain errors to
//!   `(status, code)`.
//!
//! One thin function per endpoint: parse the request, call a use case, map the result. It
//! depends on the application and domain crates, actix-web, tokio, httparse and utoipa; it
//! never touches a database or a file directly (readiness is asked through the
//! [`Readiness`] port, implemented by the server).

mod api;
mod common;
mod dashboard;
mod error;
pub mod pages_origin;

use std::sync::Arc;

use actix_web::web;
use async_trait::async_trait;
use quire_accounts::{AccountService, ActivationService, InvitationList, SessionService};
use quire_device_auth::DeviceAuthService;
use quire_keys::KeyService;
use quire_mail::MailService;
use quire_oauth::{ClientService, ConsentService, TokenService};
use quire_pages::PageService;
use quire_projects::ProjectService;
use quire_serving::ServingService;
use quire_signup::{FirstRun, PasswordChange, PasswordReset, SignUp};

pub use api::openapi::ApiDoc;
pub use common::{answer_headers, client_ip, in_flight, limits, mapping, request_log, routing};
pub use error::ApiError;

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

/// What every handler can reach.
#[derive(Debug, Clone)]
pub struct AppState {
    pub projects: ProjectService,
    pub keys: KeyService,
    pub pages: PageService,
    pub device_auth: DeviceAuthService,
    /// The OAuth client registry.
    pub oauth_clients: ClientService,
    /// The authorization endpoint: consent requests and decisions.
    pub oauth_consent: ConsentService,
    /// The token and revocation endpoints, and the published signing keys.
    pub oauth_tokens: TokenService,
    /// The email route.
    pub mail: MailService,
    /// Dashboard sign-in and sessions.
    pub sessions: SessionService,
    /// Activation by captcha and invited number.
    pub activation: ActivationService,
    /// The platform admin's account management, and the invitation list.
    pub accounts: AccountService,
    pub invitations: InvitationList,
    /// The first-run setup, sign-up with email verification, and password reset.
    pub first_run: FirstRun,
    pub sign_up: SignUp,
    pub password_reset: PasswordReset,
    pub password_change: PasswordChange,
    /// The visitor side of pages: the dashboard issues sign-in passes through it, and page
    /// changes made through the API drop what it caches.
    pub serving: ServingService,
    /// The public origin of the API and dashboard (`QUIRE_BASE_URL`): form posts must come
    /// from it, and cookies are `Secure` when it is https.
    pub base_url: String,
    /// Proxies whose `X-Forwarded-For` names the client (for rate limits).
    pub trusted_proxies: client_ip::TrustedProxies,
    pub readiness: Arc<dyn Readiness>,
}

impl AppState {
    /// The state of the API origin over the services the composition root built.
    #[must_use]
    pub fn new(
        services: quire_app::Services,
        base_url: String,
        trusted_proxies: client_ip::TrustedProxies,
        readiness: Arc<dyn Readiness>,
    ) -> Self {
        Self {
            projects: services.projects,
            keys: services.keys,
            pages: services.pages,
            device_auth: services.device_auth,
            oauth_clients: services.oauth_clients,
            oauth_consent: services.oauth_consent,
            oauth_tokens: services.oauth_tokens,
            mail: services.mail,
            sessions: services.sessions,
            activation: services.activation,
            accounts: services.accounts,
            invitations: services.invitations,
            first_run: services.first_run,
            sign_up: services.sign_up,
            password_reset: services.password_reset,
            password_change: services.password_change,
            serving: services.serving,
            base_url,
            trusted_proxies,
            readiness,
        }
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

/// Registers every route of the API origin on an actix `App`: the JSON API, the dashboard,
/// and for anything else a JSON 405 (a documented path) or 404.
pub fn configure(state: AppState) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        let page_limit = page_body_limit(&state.pages.limits());
        cfg.app_data(web::Data::new(state));
        let documented = api::configure(cfg, page_limit);
        dashboard::configure(cfg);
        cfg.default_service(web::to(move |req: actix_web::HttpRequest| {
            let documented = documented.clone();
            async move { documented.refuse(&req) }
        }));
    }
}
