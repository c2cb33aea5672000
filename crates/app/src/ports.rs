//! What the services run on, grouped by bounded context. Each port is its own `Arc<dyn _>`,
//! so each context's ports may come from a different adapter; [`Ports::from_store`] is the
//! shorthand for the callers that have one store for every store port.

use std::sync::Arc;

use quire_accounts::{AccountStore, CaptchaLedger, InvitationStore, SessionStore};
use quire_databases::{Cluster, DataApiRuntime, DatabaseRecords};
use quire_device_auth::DeviceGrantStore;
use quire_kernel::{Clock, Offload, RateLimiter, Timer};
use quire_keys::KeyStore;
use quire_links::LinkStore;
use quire_mail::{MailDispatch, MailQuota, Mailer};
use quire_oauth::{ClientMetadataDocuments, ClientStore, GrantStore, SigningKeyStore};
use quire_objects::{ObjectBytes, ObjectRecords};
use quire_pages::{AccountDirectory, BundleStore, PageStore, PublicIds, PublishRequests};
use quire_projects::ProjectStore;
use quire_signup::SignupStore;

/// Every port the services run on, one field per bounded context.
#[derive(Debug, Clone)]
pub struct Ports {
    pub accounts: AccountPorts,
    pub projects: Arc<dyn ProjectStore>,
    pub auth: AuthPorts,
    pub pages: PageStores,
    pub mail: MailPorts,
    pub databases: DatabasePorts,
    pub runtime: RuntimePorts,
}

/// The database service: its records, the cluster its databases live on (`None`: the
/// service is off), and this replica's running data API instances.
#[derive(Debug, Clone)]
pub struct DatabasePorts {
    pub records: Arc<dyn DatabaseRecords>,
    pub cluster: Option<Arc<dyn Cluster>>,
    pub runtime: Arc<dyn DataApiRuntime>,
}

/// Accounts, their dashboard sessions and the flows that make or recover them.
#[derive(Debug, Clone)]
pub struct AccountPorts {
    pub accounts: Arc<dyn AccountStore>,
    pub sessions: Arc<dyn SessionStore>,
    /// The operator's invitation list of phone numbers.
    pub invitations: Arc<dyn InvitationStore>,
    /// The activation captcha's spent solutions.
    pub captchas: Arc<dyn CaptchaLedger>,
    /// The one-time links of setup, sign-up and password reset.
    pub signup: Arc<dyn SignupStore>,
}

/// Credentials: API keys, device-login grants and Quire's OAuth authorization server.
#[derive(Debug, Clone)]
pub struct AuthPorts {
    pub keys: Arc<dyn KeyStore>,
    pub device_grants: Arc<dyn DeviceGrantStore>,
    pub oauth_clients: Arc<dyn ClientStore>,
    pub oauth_grants: Arc<dyn GrantStore>,
    /// The keys access tokens are signed with.
    pub signing_keys: Arc<dyn SigningKeyStore>,
    /// Fetches the client metadata documents a URL `client_id` names.
    pub client_documents: Arc<dyn ClientMetadataDocuments>,
}

/// Where pages, their links and their files live, and what names them.
#[derive(Debug, Clone)]
pub struct PageStores {
    pub pages: Arc<dyn PageStore>,
    pub links: Arc<dyn LinkStore>,
    pub bundles: Arc<dyn BundleStore>,
    /// Owners' handles, for the page service and the pages origin.
    pub directory: Arc<dyn AccountDirectory>,
    pub ids: Arc<dyn PublicIds>,
    /// Publishes by request id (a retried publish replays).
    pub requests: Arc<dyn PublishRequests>,
    /// Object records and their bytes.
    pub objects: Arc<dyn ObjectRecords>,
    pub object_bytes: Arc<dyn ObjectBytes>,
}

/// Outbound email.
#[derive(Debug, Clone)]
pub struct MailPorts {
    /// The relay (or the outbox) of the email route.
    pub mailer: Arc<dyn Mailer>,
    /// The same, off the request path: the account flows' messages.
    pub dispatch: Arc<dyn MailDispatch>,
    pub quota: Arc<dyn MailQuota>,
}

/// Time, and the rate limits every context counts against.
#[derive(Debug, Clone)]
pub struct RuntimePorts {
    pub clock: Arc<dyn Clock>,
    pub timer: Arc<dyn Timer>,
    /// Runs CPU work that would hold an async worker (hashing a large publish, argon2id).
    pub offload: Arc<dyn Offload>,
    pub limiter: Arc<dyn RateLimiter>,
}

/// The adapters [`Ports::from_store`] takes beside the store.
#[derive(Debug, Clone)]
pub struct OtherAdapters {
    pub bundles: Arc<dyn BundleStore>,
    pub object_bytes: Arc<dyn ObjectBytes>,
    pub ids: Arc<dyn PublicIds>,
    pub mailer: Arc<dyn Mailer>,
    pub dispatch: Arc<dyn MailDispatch>,
    pub clock: Arc<dyn Clock>,
    pub timer: Arc<dyn Timer>,
    pub offload: Arc<dyn Offload>,
    pub client_documents: Arc<dyn ClientMetadataDocuments>,
    /// The database service's cluster; `None` turns the service off.
    pub cluster: Option<Arc<dyn Cluster>>,
    pub data_api: Arc<dyn DataApiRuntime>,
}

impl Ports {
    /// Every store port from `store`, which implements them all (`quire-store`'s database,
    /// the testkit's fake), and the rest from `others`.
    #[must_use]
    pub fn from_store<T>(store: Arc<T>, others: OtherAdapters) -> Self
    where
        T: ProjectStore
            + KeyStore
            + AccountStore
            + SessionStore
            + PageStore
            + PublishRequests
            + AccountDirectory
            + LinkStore
            + ObjectRecords
            + DatabaseRecords
            + DeviceGrantStore
            + RateLimiter
            + ClientStore
            + GrantStore
            + SigningKeyStore
            + MailQuota
            + InvitationStore
            + CaptchaLedger
            + SignupStore
            + 'static,
    {
        let OtherAdapters {
            bundles,
            object_bytes,
            ids,
            mailer,
            dispatch,
            clock,
            timer,
            offload,
            client_documents,
            cluster,
            data_api,
        } = others;
        Self {
            accounts: AccountPorts {
                accounts: store.clone(),
                sessions: store.clone(),
                invitations: store.clone(),
                captchas: store.clone(),
                signup: store.clone(),
            },
            projects: store.clone(),
            auth: AuthPorts {
                keys: store.clone(),
                device_grants: store.clone(),
                oauth_clients: store.clone(),
                oauth_grants: store.clone(),
                signing_keys: store.clone(),
                client_documents,
            },
            pages: PageStores {
                pages: store.clone(),
                links: store.clone(),
                bundles,
                directory: store.clone(),
                ids,
                requests: store.clone(),
                objects: store.clone(),
                object_bytes,
            },
            mail: MailPorts {
                mailer,
                dispatch,
                quota: store.clone(),
            },
            databases: DatabasePorts {
                records: store.clone(),
                cluster,
                runtime: data_api,
            },
            runtime: RuntimePorts {
                clock,
                timer,
                offload,
                limiter: store,
            },
        }
    }
}
