//! `quire-app`: the composition root. [`build`] makes every use-case service of Quire from
//! the [`Ports`] it is handed, grouped by bounded context (in `quire-server` the database,
//! bundle storage, the mail relay and the runtime's clock, timer and blocking pool; in tests
//! the in-memory fakes, a fixed clock, a hand-fired timer and a thread per offloaded job),
//! and from their [`Settings`], so production and every test world wire the application one
//! way: a service gains a port in one place, and a new service is a field of [`Services`]
//! and its construction in its context's step of [`build`] (one module each: `reads`, the
//! caches and who hears of changes; `accounts`; `oauth`, Quire's OAuth authorization server;
//! `behind_links`, pages, URL links and objects; `databases`).
//!
//! Each port is its own `Arc<dyn _>`, so a context may run on an adapter of its own;
//! [`Ports::from_store`] takes every store port from one store that implements them all.
//!
//! It holds no domain rule, but two decisions are its own: which ports are read through a
//! cache (API keys and the page fetch, `quire-read-cache`'s decorators), and who hears of
//! every committed page and project change through the kernel's `PageChanges` (the pages
//! origin, both read caches and the access-token verifier).
//!
//! It depends on the domain crates, the kernel and the application crates that hold caches
//! (`quire-serving`, `quire-bearer`, `quire-read-cache`).

mod accounts;
mod behind_links;
mod databases;
mod end_user_mail;
mod oauth;
mod page_databases;
mod ports;
mod reads;

use std::sync::Arc;

pub use ports::{
    AccountPorts, AuthPorts, DatabasePorts, MailPorts, OtherAdapters, PageStores, Ports,
    RuntimePorts,
};
use quire_accounts::{
    AccountService, ActivationService, CaptchaCost, InvitationList, SealingKey, SessionService,
};
use quire_databases::{DatabaseConfig, DatabaseService};
use quire_device_auth::DeviceAuthService;
use quire_keys::KeyService;
use quire_links::{LinkConfig, LinkService};
use quire_mail::MailService;
use quire_oauth::{
    ClientService, ConnectedAgents, ConsentService, DynamicRegistration, TokenService,
};
use quire_objects::{ObjectConfig, ObjectService};
use quire_pages::{PageConfig, PageService};
use quire_projects::ProjectService;
use quire_serving::{ServingConfig, ServingService};
use quire_signup::{ActivationMode, FirstRun, PasswordChange, PasswordReset, SignUp, SignUpMode};

/// The services' settings; the default is each service's own.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub pages: PageConfig,
    /// The URL links' rules; where short links live is the pages' (`links_origin`).
    pub links: LinkConfig,
    /// The objects' cap and lease; where they live is the pages' (`origins`).
    pub objects: ObjectConfig,
    /// The databases' creation lease; where the data API lives is `base_url`'s.
    pub databases: DatabaseConfig,
    pub serving: ServingConfig,
    /// The public origin of the API and dashboard; device-login links are built on it, and
    /// it is the issuer of OAuth access tokens.
    pub base_url: String,
    /// Signs the pages origin's cookies and sign-in passes.
    pub signing_key: Vec<u8>,
    /// Signs the activation captcha's challenges.
    pub captcha_secret: String,
    pub captcha_cost: CaptchaCost,
    /// The operator's address, From and Reply-To of the account flows' messages.
    pub mail_from: String,
    pub sign_up: SignUpMode,
    pub activation: ActivationMode,
    /// Seals the second factor's secrets at rest; `None` is a key of this process only,
    /// which suits tests (the server always passes its key file's).
    pub sealing_key: Option<SealingKey>,
    /// Whether agents may register themselves as OAuth clients (RFC 7591).
    pub oauth_dynamic_registration: bool,
    /// Whether a `client_id` may be the URL of a client metadata document.
    pub oauth_client_metadata_documents: bool,
    /// Whether such a document may be on a loopback `http` server (test servers only).
    pub oauth_documents_on_loopback_http: bool,
}

/// Every use-case service, built once.
#[derive(Debug, Clone)]
pub struct Services {
    pub accounts: AccountService,
    pub projects: ProjectService,
    pub keys: KeyService,
    pub pages: PageService,
    /// URL links (`/api/link/v1`).
    pub links: LinkService,
    /// Objects (`/api/object/v1`).
    pub objects: ObjectService,
    /// Databases (`/api/database/v1`).
    pub databases: DatabaseService,
    pub serving: ServingService,
    pub sessions: SessionService,
    pub activation: ActivationService,
    pub invitations: InvitationList,
    pub device_auth: DeviceAuthService,
    pub oauth_clients: ClientService,
    pub oauth_registration: DynamicRegistration,
    pub oauth_consent: ConsentService,
    pub oauth_tokens: TokenService,
    /// The agents each account connected through OAuth (the dashboard's Agents page).
    pub oauth_agents: ConnectedAgents,
    pub mail: MailService,
    pub first_run: FirstRun,
    pub sign_up: SignUp,
    pub password_reset: PasswordReset,
    pub password_change: PasswordChange,
}

/// Builds every service from `ports` and `settings`, a bounded context at a time: first
/// the read caches and those who hear of changes, which the others are built on.
#[must_use]
pub fn build(ports: Ports, settings: Settings) -> Services {
    let reads = reads::reads(&ports, &settings);
    let mail = MailService::new(
        ports.mail.mailer.clone(),
        ports.mail.quota.clone(),
        ports.accounts.accounts.clone(),
        ports.runtime.clock.clone(),
    );
    let sealing = settings
        .sealing_key
        .clone()
        .unwrap_or_else(SealingKey::ephemeral);
    let databases = databases::databases(&ports, &settings, &mail, &sealing);
    let behind = behind_links::behind_links(&ports, &settings, &reads, &databases);
    let accounts = accounts::accounts(&ports, &settings, sealing);
    let oauth = oauth::oauth(&ports, &settings, &reads.audience);
    // Keys, projects and the device login are a constructor each, on the ports left.
    let RuntimePorts { clock, limiter, .. } = ports.runtime;
    Services {
        keys: KeyService::new(
            reads.key_cache,
            ports.projects.clone(),
            Arc::new(reads.bearers),
            clock.clone(),
        ),
        projects: ProjectService::new(ports.projects, clock.clone(), reads.changes),
        device_auth: DeviceAuthService::new(
            ports.auth.device_grants,
            limiter,
            clock,
            settings.base_url,
        ),
        accounts: accounts.accounts,
        sessions: accounts.sessions,
        activation: accounts.activation,
        invitations: accounts.invitations,
        first_run: accounts.first_run,
        sign_up: accounts.sign_up,
        password_reset: accounts.password_reset,
        password_change: accounts.password_change,
        pages: behind.pages,
        links: behind.links,
        objects: behind.objects,
        databases,
        serving: reads.serving,
        oauth_clients: oauth.clients,
        oauth_registration: oauth.registration,
        oauth_consent: oauth.consent,
        oauth_tokens: oauth.tokens,
        oauth_agents: oauth.agents,
        mail,
    }
}
