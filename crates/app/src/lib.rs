//! `quire-app`: the composition root. [`build`] makes every use-case service of Quire from
//! the ports it is handed (the database, bundle storage and the runtime's clock, timer and
//! blocking pool in `quire-server`; the in-memory fakes, a fixed clock, a hand-fired timer and
//! a thread per offloaded job in tests) and their settings, so production and every test
//! world wire the application one way: a service gains a port in one place.
//!
//! It depends on the domain crates, the kernel and the application crates that hold caches
//! (`quire-serving`, `quire-bearer`, `quire-read-cache`), and holds no logic of its own.

use std::sync::Arc;

use quire_accounts::{
    AccountService, AccountStore, ActivationPorts, ActivationService, CaptchaCost, CaptchaKeys,
    CaptchaLedger, InvitationList, InvitationStore, SealingKey, SessionService, SessionStore,
};
use quire_bearer::{BearerPorts, BearerVerifier};
use quire_device_auth::{DeviceAuthService, DeviceGrantStore};
use quire_kernel::{Clock, Listeners, Offload, PageChanges, RateLimiter, Timer};
use quire_keys::{KeyService, KeyStore};
use quire_links::LinkStore;
use quire_mail::{MailDispatch, MailQuota, MailService, Mailer};
use quire_oauth::{
    ClientService, ClientStore, ConsentService, GrantStore, SigningKeyStore, TokenAudience,
    TokenPorts, TokenService,
};
use quire_pages::{
    AccountDirectory, BundleStore, PageConfig, PagePorts, PageService, PageStore, PublicIds,
};
use quire_projects::{ProjectService, ProjectStore};
use quire_read_cache::{CachedKeyStore, CachedPageStore};
use quire_serving::{ServingConfig, ServingPorts, ServingService};
use quire_signup::{
    ActivationMode, FirstRun, Letterhead, PasswordChange, PasswordReset, SignUp, SignUpMode,
    SignupPorts, SignupStore,
};

/// A store that implements every store port, as `quire-store`'s database and the testkit's
/// fake both do.
pub trait Stores:
    ProjectStore
    + KeyStore
    + AccountStore
    + SessionStore
    + PageStore
    + AccountDirectory
    + LinkStore
    + DeviceGrantStore
    + RateLimiter
    + ClientStore
    + GrantStore
    + SigningKeyStore
    + MailQuota
    + InvitationStore
    + CaptchaLedger
    + SignupStore
    + 'static
{
}

impl<T> Stores for T where
    T: ProjectStore
        + KeyStore
        + AccountStore
        + SessionStore
        + PageStore
        + AccountDirectory
        + LinkStore
        + DeviceGrantStore
        + RateLimiter
        + ClientStore
        + GrantStore
        + SigningKeyStore
        + MailQuota
        + InvitationStore
        + CaptchaLedger
        + SignupStore
        + 'static
{
}

/// What the services run on.
#[derive(Debug)]
pub struct Ports<S> {
    pub store: Arc<S>,
    pub bundles: Arc<dyn BundleStore>,
    pub clock: Arc<dyn Clock>,
    pub timer: Arc<dyn Timer>,
    /// Runs CPU work that would hold an async worker (hashing a large publish).
    pub offload: Arc<dyn Offload>,
    pub ids: Arc<dyn PublicIds>,
    /// The relay (or the outbox) of the email route.
    pub mailer: Arc<dyn Mailer>,
    /// The same, off the request path: the account flows' messages.
    pub dispatch: Arc<dyn MailDispatch>,
    /// Another account directory for the page service than the store (a test's stand-in).
    pub directory: Option<Arc<dyn AccountDirectory>>,
}

/// The services' settings; the default is each service's own.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub pages: PageConfig,
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
}

/// Every use-case service, built once.
#[derive(Debug, Clone)]
pub struct Services {
    pub accounts: AccountService,
    pub projects: ProjectService,
    pub keys: KeyService,
    pub pages: PageService,
    pub serving: ServingService,
    pub sessions: SessionService,
    pub activation: ActivationService,
    pub invitations: InvitationList,
    pub device_auth: DeviceAuthService,
    pub oauth_clients: ClientService,
    pub oauth_consent: ConsentService,
    pub oauth_tokens: TokenService,
    pub mail: MailService,
    pub first_run: FirstRun,
    pub sign_up: SignUp,
    pub password_reset: PasswordReset,
    pub password_change: PasswordChange,
}

/// Builds every service from `ports` and `settings`.
#[must_use]
pub fn build<S: Stores>(ports: Ports<S>, settings: Settings) -> Services {
    let Ports {
        store,
        bundles,
        clock,
        timer,
        offload,
        ids,
        mailer,
        dispatch,
        directory,
    } = ports;
    // The API's page fetch is held in front of the page and link stores; the views the
    // pages origin settles go through it, so this replica's own counts show at once.
    let page_cache = Arc::new(CachedPageStore::new(
        store.clone(),
        store.clone(),
        clock.clone(),
    ));
    let serving = ServingService::new(
        ServingPorts {
            pages: store.clone(),
            links: page_cache.clone(),
            bundles: bundles.clone(),
            accounts: store.clone(),
            projects: store.clone(),
            limiter: store.clone(),
            sessions: store.clone(),
            clock: clock.clone(),
        },
        settings.serving,
        &settings.signing_key,
    );
    let audience = TokenAudience::for_base_url(&settings.base_url);
    let bearers = BearerVerifier::new(
        BearerPorts {
            keys: store.clone(),
            clients: store.clone(),
            accounts: store.clone(),
            projects: store.clone(),
            clock: clock.clone(),
        },
        audience.clone(),
    );
    // The pages origin's caches and the API's read caches hear of every committed page and
    // project change.
    let key_cache = Arc::new(CachedKeyStore::new(store.clone(), clock.clone()));
    let changes: Arc<dyn PageChanges> = Arc::new(Listeners(vec![
        Arc::new(serving.clone()),
        key_cache.clone(),
        page_cache.clone(),
        Arc::new(bearers.clone()),
    ]));
    let pages = PageService::new(
        PagePorts {
            pages: page_cache.clone(),
            bundles,
            links: page_cache,
            accounts: directory.unwrap_or_else(|| store.clone()),
            projects: store.clone(),
            clock: clock.clone(),
            timer,
            offload,
            ids,
            changes: changes.clone(),
        },
        settings.pages,
    );
    let oauth_tokens = TokenService::new(
        TokenPorts {
            clients: store.clone(),
            grants: store.clone(),
            keys: store.clone(),
            limiter: store.clone(),
            clock: clock.clone(),
        },
        audience,
    );
    let signup_ports = SignupPorts {
        store: store.clone(),
        accounts: store.clone(),
        limiter: store.clone(),
        mail: dispatch,
        clock: clock.clone(),
    };
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
        accounts: AccountService::new(store.clone(), clock.clone()),
        projects: ProjectService::new(store.clone(), clock.clone(), changes),
        keys: KeyService::new(key_cache, store.clone(), Arc::new(bearers), clock.clone()),
        pages,
        serving,
        sessions: SessionService::new(
            store.clone(),
            store.clone(),
            store.clone(),
            clock.clone(),
            settings
                .sealing_key
                .clone()
                .unwrap_or_else(SealingKey::ephemeral),
        ),
        activation: ActivationService::new(
            ActivationPorts {
                accounts: store.clone(),
                invitations: store.clone(),
                captchas: store.clone(),
                limiter: store.clone(),
                clock: clock.clone(),
            },
            CaptchaKeys::new(&settings.captcha_secret, settings.captcha_cost),
        ),
        invitations: InvitationList::new(store.clone(), clock.clone()),
        device_auth: DeviceAuthService::new(
            store.clone(),
            store.clone(),
            clock.clone(),
            settings.base_url,
        ),
        oauth_consent: ConsentService::new(
            store.clone(),
            store.clone(),
            store.clone(),
            clock.clone(),
        ),
        oauth_tokens,
        mail: MailService::new(mailer, store.clone(), store.clone(), clock.clone()),
        oauth_clients: ClientService::new(store, clock),
    }
}
