//! `quire-app`: the composition root. [`build`] makes every use-case service of Quire from
//! the [`Ports`] it is handed, grouped by bounded context (in `quire-server` the database,
//! bundle storage, the mail relay and the runtime's clock, timer and blocking pool; in tests
//! the in-memory fakes, a fixed clock, a hand-fired timer and a thread per offloaded job), and from their [`Settings`], so production
//! and every test world wire the application one way: a service gains a port in one place,
//! and a new service is a field of [`Services`] and its construction in [`build`].
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

mod end_user_mail;
mod page_databases;
mod ports;

use std::sync::Arc;

pub use ports::{
    AccountPorts, AuthPorts, DatabasePorts, MailPorts, OtherAdapters, PageStores, Ports,
    RuntimePorts,
};
use quire_accounts::{
    AccountService, ActivationPorts, ActivationService, CaptchaCost, CaptchaKeys, InvitationList,
    SealingKey, SessionService,
};
use quire_bearer::{BearerPorts, BearerVerifier};
use quire_databases::{DatabaseConfig, DatabaseService};
use quire_device_auth::DeviceAuthService;
use quire_kernel::{Listeners, PageChanges};
use quire_keys::KeyService;
use quire_links::{LinkConfig, LinkPorts, LinkService};
use quire_mail::MailService;
use quire_oauth::{
    ClientService, ConnectedAgents, ConsentService, DynamicRegistration, MetadataDocuments,
    TokenAudience, TokenPorts, TokenService,
};
use quire_objects::{ObjectConfig, ObjectPorts, ObjectService};
use quire_pages::{PageConfig, PagePorts, PageService};
use quire_projects::ProjectService;
use quire_read_cache::{CachedKeyStore, CachedPageStore};
use quire_serving::{ServingConfig, ServingPorts, ServingService};
use quire_signup::{
    ActivationMode, FirstRun, Letterhead, PasswordChange, PasswordReset, SignUp, SignUpMode,
    SignupPorts,
};

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

/// Builds every service from `ports` and `settings`.
#[must_use]
pub fn build(ports: Ports, settings: Settings) -> Services {
    let Ports {
        accounts:
            AccountPorts {
                accounts,
                sessions,
                invitations,
                captchas,
                signup,
            },
        projects,
        auth:
            AuthPorts {
                keys,
                device_grants,
                oauth_clients,
                oauth_grants,
                signing_keys,
                client_documents,
            },
        pages:
            PageStores {
                pages,
                links,
                bundles,
                directory,
                ids,
                requests,
                objects,
                object_bytes,
            },
        mail: MailPorts {
            mailer,
            dispatch,
            quota,
        },
        databases: database_ports,
        runtime:
            RuntimePorts {
                clock,
                timer,
                offload,
                limiter,
            },
    } = ports;
    // The API's page fetch is held in front of the page and link stores; the views the
    // pages origin settles go through it, so this replica's own counts show at once.
    let page_cache = Arc::new(CachedPageStore::new(pages.clone(), links, clock.clone()));
    let serving = ServingService::new(
        ServingPorts {
            pages,
            links: page_cache.clone(),
            bundles: bundles.clone(),
            accounts: directory.clone(),
            projects: projects.clone(),
            limiter: limiter.clone(),
            sessions: sessions.clone(),
            clock: clock.clone(),
            offload: offload.clone(),
            objects: objects.clone(),
            object_bytes: object_bytes.clone(),
        },
        settings.serving,
        &settings.signing_key,
    );
    let audience = TokenAudience::for_base_url(&settings.base_url);
    let bearers = BearerVerifier::new(
        BearerPorts {
            keys: signing_keys.clone(),
            clients: oauth_clients.clone(),
            accounts: accounts.clone(),
            projects: projects.clone(),
            clock: clock.clone(),
        },
        audience.clone(),
    );
    // The pages origin's caches and the API's read caches hear of every committed page and
    // project change.
    let key_cache = Arc::new(CachedKeyStore::new(keys, clock.clone()));
    let changes: Arc<dyn PageChanges> = Arc::new(Listeners(vec![
        Arc::new(serving.clone()),
        key_cache.clone(),
        page_cache.clone(),
        Arc::new(bearers.clone()),
    ]));
    let mut link_config = settings.links;
    link_config.urls.links_origin = settings.pages.origins.links_origin();
    let links = LinkService::new(
        LinkPorts {
            links: page_cache.clone(),
            accounts: directory.clone(),
            projects: projects.clone(),
            clock: clock.clone(),
            offload: offload.clone(),
            ids: ids.clone(),
            changes: changes.clone(),
        },
        link_config,
    );
    let mut object_config = settings.objects;
    object_config.origins = settings.pages.origins.clone();
    let objects = ObjectService::new(
        ObjectPorts {
            records: objects,
            bytes: object_bytes,
            links: page_cache.clone(),
            accounts: directory.clone(),
            projects: projects.clone(),
            clock: clock.clone(),
            offload: offload.clone(),
            ids: ids.clone(),
            changes: changes.clone(),
            limiter: limiter.clone(),
        },
        object_config,
    );
    let oauth_tokens = TokenService::new(
        TokenPorts {
            clients: oauth_clients.clone(),
            grants: oauth_grants.clone(),
            keys: signing_keys,
            limiter: limiter.clone(),
            clock: clock.clone(),
        },
        audience.clone(),
    );
    let signup_ports = SignupPorts {
        store: signup,
        accounts: accounts.clone(),
        limiter: limiter.clone(),
        mail: dispatch.clone(),
        clock: clock.clone(),
        offload: offload.clone(),
    };
    let sealing = settings
        .sealing_key
        .clone()
        .unwrap_or_else(SealingKey::ephemeral);
    let mail = MailService::new(mailer, quota, accounts.clone(), clock.clone());
    let mut database_config = settings.databases;
    database_config.base_url.clone_from(&settings.base_url);
    let databases = DatabaseService::new(
        quire_databases::DatabasePorts {
            records: database_ports.records,
            cluster: database_ports.cluster,
            projects: projects.clone(),
            clock: clock.clone(),
            runtime: database_ports.runtime,
            sealing: sealing.clone(),
            offload: offload.clone(),
            limiter: limiter.clone(),
            mail: Arc::new(end_user_mail::AccountMail {
                mail: mail.clone(),
                dispatch,
            }),
        },
        database_config,
    );
    // A page may name a database of its owner in its project.
    let pages = PageService::new(
        PagePorts {
            pages: page_cache.clone(),
            bundles,
            links: page_cache,
            accounts: directory,
            projects: projects.clone(),
            clock: clock.clone(),
            timer,
            offload: offload.clone(),
            ids,
            changes: changes.clone(),
            requests,
            databases: Arc::new(page_databases::ServiceDatabases(databases.clone())),
        },
        settings.pages,
    );
    let letterhead = Letterhead {
        base_url: settings.base_url.clone(),
        mail_from: settings.mail_from.clone(),
    };
    Services {
        first_run: FirstRun::new(signup_ports.clone(), letterhead.clone()),
        sign_up: SignUp::new(
            signup_ports.clone(),
            letterhead.clone(),
            settings.sign_up,
            settings.activation,
        ),
        password_reset: PasswordReset::new(signup_ports.clone(), letterhead.clone()),
        password_change: PasswordChange::new(signup_ports, letterhead),
        accounts: AccountService::new(accounts.clone(), clock.clone(), offload.clone()),
        projects: ProjectService::new(projects.clone(), clock.clone(), changes),
        keys: KeyService::new(
            key_cache,
            projects.clone(),
            Arc::new(bearers),
            clock.clone(),
        ),
        pages,
        links,
        objects,
        databases,
        serving,
        sessions: SessionService::new(
            accounts.clone(),
            sessions,
            limiter.clone(),
            clock.clone(),
            offload,
            sealing,
        ),
        activation: ActivationService::new(
            ActivationPorts {
                accounts: accounts.clone(),
                invitations: invitations.clone(),
                captchas,
                limiter: limiter.clone(),
                clock: clock.clone(),
            },
            CaptchaKeys::new(&settings.captcha_secret, settings.captcha_cost),
        ),
        invitations: InvitationList::new(invitations, clock.clone()),
        device_auth: DeviceAuthService::new(
            device_grants,
            limiter.clone(),
            clock.clone(),
            settings.base_url,
        ),
        oauth_consent: ConsentService::new(
            oauth_clients.clone(),
            oauth_grants.clone(),
            projects.clone(),
            clock.clone(),
            &audience.issuer,
            MetadataDocuments::new(
                client_documents,
                settings.oauth_client_metadata_documents,
                settings.oauth_documents_on_loopback_http,
            ),
        ),
        oauth_agents: ConnectedAgents::new(
            oauth_clients.clone(),
            oauth_grants,
            projects,
            clock.clone(),
        ),
        oauth_tokens,
        mail,
        oauth_registration: DynamicRegistration::new(
            oauth_clients.clone(),
            limiter.clone(),
            clock.clone(),
            settings.oauth_dynamic_registration,
        ),
        oauth_clients: ClientService::new(oauth_clients, clock),
    }
}
