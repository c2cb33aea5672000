//! A test world in a line: the in-memory fakes, a clock that stands still, a timer fired by
//! hand, an offload that runs each job on a thread, the accounts a test names, and every
//! service built by the composition root (`quire_app::build`), exactly as `quire-server`
//! builds them over the real adapters.
//!
//! ```ignore
//! let w = World::builder().accounts(&["ann", "bob"]).public_ids("SAMESAME01").build().await;
//! w.services.pages.publish(&w.master("ann"), request).await?;
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use quire_accounts::CreatedAccount;
use quire_app::{OtherAdapters, Ports, Services, Settings};
use quire_kernel::{Offload, Principal};
use quire_pages::{AccountDirectory, PageOrigins, PublicIds, RandomPublicIds};

use crate::fixtures::{create_account, master};
use crate::memory::Op;
use crate::{
    FixedClock, HandTimer, MemoryBundles, MemoryDocuments, MemoryMailer, MemoryObjectBytes,
    MemoryStore, ThreadOffload,
};

/// The origin of the API and dashboard in every world unless a test says otherwise.
pub const BASE_URL: &str = "https://quire.test";

/// Everything a test of the services touches; the fakes are shared with the services, so a
/// test can inspect them, fail an operation or move the clock.
#[derive(Debug)]
pub struct World {
    pub store: Arc<MemoryStore>,
    pub bundles: Arc<MemoryBundles>,
    /// Objects' bytes.
    pub object_bytes: Arc<MemoryObjectBytes>,
    pub clock: Arc<FixedClock>,
    pub timer: Arc<HandTimer>,
    /// The relay of the email route: what was sent, or a refusal to make.
    pub mailer: Arc<MemoryMailer>,
    /// The client metadata documents the OAuth server can fetch.
    pub documents: Arc<MemoryDocuments>,
    pub services: Services,
    accounts: HashMap<String, CreatedAccount>,
    /// What the services were built from, for a replica.
    ports: Ports,
    settings: Settings,
}

impl World {
    /// A world with no account, random public ids and each service's default settings.
    #[must_use]
    pub fn builder() -> WorldBuilder {
        WorldBuilder::default()
    }

    /// The account created for `handle`.
    ///
    /// # Panics
    /// When the builder was not asked for it.
    #[must_use]
    pub fn account(&self, handle: &str) -> &CreatedAccount {
        self.accounts
            .get(handle)
            .unwrap_or_else(|| panic!("the world has no account {handle:?}"))
    }

    /// `handle`'s master-key principal, at home in its default project.
    #[must_use]
    pub fn master(&self, handle: &str) -> Principal {
        let created = self.account(handle);
        master(created.account.id, created.project.id)
    }

    /// `handle`'s master key, as a client sends it.
    #[must_use]
    pub fn key(&self, handle: &str) -> String {
        self.account(handle).master_key.expose().to_owned()
    }

    /// The services of another replica over the same store and bundles: its changes reach
    /// this replica's caches only as a real other replica's would.
    #[must_use]
    pub fn replica(&self) -> Services {
        quire_app::build(self.ports.clone(), self.settings.clone())
    }

    /// The state of the HTTP edge over this world's services, for
    /// `App::new().configure(quire_http::configure(w.app_state()))`.
    #[cfg(feature = "http")]
    #[must_use]
    pub fn app_state(&self) -> quire_edge::AppState {
        #[derive(Debug)]
        struct Ready;
        #[async_trait::async_trait]
        impl quire_edge::Readiness for Ready {
            async fn check(&self) -> Result<(), quire_edge::NotReady> {
                Ok(())
            }
        }
        quire_edge::AppState::new(
            self.services.clone(),
            self.settings.base_url.clone(),
            quire_edge::client_ip::TrustedProxies::default(),
            Arc::new(Ready),
        )
    }
}

/// What a test asks of its world; see [`World::builder`].
#[derive(Debug)]
pub struct WorldBuilder {
    handles: Vec<String>,
    ids: Arc<dyn PublicIds>,
    offload: Arc<dyn Offload>,
    directory: Option<Arc<dyn AccountDirectory>>,
    cluster: Option<Arc<dyn quire_databases::Cluster>>,
    settings: Settings,
    failing: Vec<Op>,
}

impl Default for WorldBuilder {
    fn default() -> Self {
        Self {
            handles: Vec::new(),
            ids: Arc::new(RandomPublicIds),
            offload: Arc::new(ThreadOffload),
            directory: None,
            cluster: None,
            settings: Settings {
                signing_key: b"test signing key".to_vec(),
                oauth_dynamic_registration: true,
                oauth_client_metadata_documents: true,
                ..Settings::default()
            },
            failing: Vec::new(),
        }
        .base_url(BASE_URL)
    }
}

impl WorldBuilder {
    /// Activated accounts, each with its default project and master key
    /// (`handle@example.com`).
    #[must_use]
    pub fn accounts(mut self, handles: &[&str]) -> Self {
        self.handles.extend(handles.iter().map(|h| (*h).to_owned()));
        self
    }

    /// Every page gets the public id `id`, so a second publish collides with the first.
    #[must_use]
    pub fn public_ids(self, id: &str) -> Self {
        self.ids(Arc::new(FixedPublicId(id.to_owned())))
    }

    /// Where public ids come from.
    #[must_use]
    pub fn ids(mut self, ids: Arc<dyn PublicIds>) -> Self {
        self.ids = ids;
        self
    }

    /// Where the services run CPU work that would hold an async worker ([`ThreadOffload`]
    /// unless a test says otherwise).
    #[must_use]
    pub fn offload(mut self, offload: Arc<dyn Offload>) -> Self {
        self.offload = offload;
        self
    }

    /// The page service and the pages origin read handles from `directory` instead of the
    /// store.
    #[must_use]
    pub fn directory(mut self, directory: Arc<dyn AccountDirectory>) -> Self {
        self.directory = Some(directory);
        self
    }

    /// The database service runs on `cluster` (without one it is off, as on a server with
    /// no PostgreSQL cluster configured).
    #[must_use]
    pub fn cluster(mut self, cluster: Arc<dyn quire_databases::Cluster>) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// Where pages and short links live, for the page service and the pages origin alike.
    #[must_use]
    pub fn origins(mut self, origins: &PageOrigins) -> Self {
        self.settings.pages.origins = origins.clone();
        self.settings.serving.origins = origins.clone();
        self
    }

    /// The origin of the API and dashboard (device-login links, sign-in redirects).
    #[must_use]
    pub fn base_url(mut self, url: &str) -> Self {
        self.settings.base_url = url.to_owned();
        self.settings.serving.base_url = url.to_owned();
        self
    }

    /// Any other setting.
    #[must_use]
    pub fn settings(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(&mut self.settings);
        self
    }

    /// The store's `op` fails once the world is built (its accounts are made first).
    #[must_use]
    pub fn failing(mut self, op: Op) -> Self {
        self.failing.push(op);
        self
    }

    /// Creates the accounts, then builds every service.
    ///
    /// # Panics
    /// When an account cannot be created (a handle twice, or not a handle).
    pub async fn build(self) -> World {
        let store = Arc::new(MemoryStore::new());
        let clock = Arc::new(FixedClock::new());
        let mut accounts = HashMap::new();
        for handle in self.handles {
            let created = create_account(store.clone(), clock.clone(), &handle).await;
            accounts.insert(handle, created);
        }
        for op in self.failing {
            store.fail(op);
        }
        let bundles = Arc::new(MemoryBundles::new());
        let object_bytes = Arc::new(MemoryObjectBytes::default());
        let timer = Arc::new(HandTimer::new());
        let mailer = Arc::new(MemoryMailer::new());
        let documents = Arc::new(MemoryDocuments::new());
        let mut ports = Ports::from_store(
            store.clone(),
            OtherAdapters {
                bundles: bundles.clone(),
                object_bytes: object_bytes.clone(),
                ids: self.ids,
                mailer: mailer.clone(),
                dispatch: mailer.clone(),
                clock: clock.clone(),
                timer: timer.clone(),
                offload: self.offload,
                client_documents: documents.clone(),
                cluster: self.cluster,
                data_api: Arc::new(quire_databases::NoRuntime),
            },
        );
        if let Some(directory) = self.directory {
            ports.pages.directory = directory;
        }
        World {
            services: quire_app::build(ports.clone(), self.settings.clone()),
            store,
            bundles,
            object_bytes,
            clock,
            timer,
            mailer,
            documents,
            accounts,
            ports,
            settings: self.settings,
        }
    }
}

/// The same public id every time.
#[derive(Debug)]
struct FixedPublicId(String);

impl PublicIds for FixedPublicId {
    fn next_id(&self) -> String {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use quire_projects::ListProjectsError;

    use super::*;

    #[tokio::test]
    async fn accounts_are_made_before_operations_fail() {
        let w = World::builder()
            .accounts(&["ann", "bob"])
            .failing(Op::ProjectsOfAccount)
            .build()
            .await;
        assert_ne!(w.account("ann").account.id, w.account("bob").account.id);
        assert!(w.key("bob").starts_with("qk_"), "{}", w.key("bob"));
        let listed = w.services.projects.list(&w.master("ann")).await;
        assert!(matches!(listed, Err(ListProjectsError::Infra(_))));
        w.store.heal();
        let listed = w.services.projects.list(&w.master("ann")).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, w.account("ann").project.id);
    }

    #[tokio::test]
    async fn a_replica_shares_the_fakes_and_the_settings() {
        let w = World::builder()
            .accounts(&["ann"])
            .base_url("https://dash.example")
            .build()
            .await;
        let replica = w.replica();
        let listed = replica.projects.list(&w.master("ann")).await.unwrap();
        assert_eq!(listed[0].id, w.account("ann").project.id);
        let started = replica.device_auth.start(None, "192.0.2.1").await.unwrap();
        assert_eq!(
            started.verification_uri,
            "https://dash.example/authorize-agent"
        );
    }
}
