//! The database use cases (`/api/database/v1`): create, list, get, delete, SQL, the data
//! API's switch, settings, secret and reload, and the janitor's sweep; and the data API's
//! requests (`/db/{slug}/…`).
//!
//! Writes are in `write`, reads in `read`, the account's quotas in `quota`, SQL in `sql`,
//! the data API's lifecycle in `data_api` and its settings in `settings`, what every data
//! API request goes through (the database, the keys, the instance) in `gateway` and a REST
//! request in `rest`, the
//! owner's view of end users in `users`, what pages ask (the database a page names, its
//! client at `/-/db.json`) in `pages`, the refusals in `error`.

use std::sync::Arc;
use std::time::Duration;

use quire_accounts::{SealedSecret, SealingKey};
use quire_kernel::{Clock, DatabaseId, InfraError, Offload, Principal, ProjectSlug, RateLimiter};
use quire_projects::{ProjectAccess, ProjectStore, authorize_project};

use crate::model::{Database, TenantAccess};
use crate::ports::{Cluster, DatabaseRecords, EndUserMail, OpenTable};
use crate::runtime::DataApiRuntime;

mod data_api;
mod error;
mod gateway;
mod pages;
mod quota;
mod read;
mod rest;
mod settings;
mod sql;
mod users;
mod write;

pub use data_api::DataApiSecret;
pub use error::DatabaseError;
pub use gateway::{Acting, Credentials, GatewayError, Reach};
pub use pages::PageClient;
pub use quota::{DEFAULT_MAX_BYTES, DEFAULT_MAX_DATABASES, DatabaseUsage};
pub use sql::MAX_SQL_BYTES;
pub use users::{EndUsersView, MAX_END_USERS_LISTED};
pub use write::{NewDatabase, Swept};

/// Most rows of a query's answer.
pub const MAX_QUERY_ROWS: usize = 1_000;

/// Settings of the database service.
#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    /// The API origin (`QUIRE_BASE_URL`): the data API lives at `{base}/db/{slug}`.
    pub base_url: String,
    /// How long a creation may take before the janitor presumes its request dead.
    pub lease: Duration,
    /// The owner's SQL queries one account may run at once on this replica (at least 1).
    pub sql_per_account: usize,
    /// Most databases one account may have (`QUIRE_MAX_DATABASES_PER_ACCOUNT`); 0 is no
    /// cap.
    pub max_databases: u64,
    /// Most bytes one account's databases may hold together before it may make no more
    /// (`QUIRE_MAX_DATABASE_BYTES_PER_ACCOUNT`); 0 is no cap.
    pub max_bytes: u64,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            base_url: "http://localhost:8080".into(),
            lease: Duration::from_secs(120),
            sql_per_account: 4,
            max_databases: DEFAULT_MAX_DATABASES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// The adapters a [`DatabaseService`] works through.
#[derive(Debug, Clone)]
pub struct DatabasePorts {
    pub records: Arc<dyn DatabaseRecords>,
    /// `None` when no cluster is configured: every use case but the list answers
    /// [`DatabaseError::Unavailable`].
    pub cluster: Option<Arc<dyn Cluster>>,
    pub projects: Arc<dyn ProjectStore>,
    pub clock: Arc<dyn Clock>,
    /// This replica's data API instances (told at once when one must stop).
    pub runtime: Arc<dyn DataApiRuntime>,
    /// Seals role passwords and JWT secrets at rest.
    pub sealing: SealingKey,
    /// Runs argon2id off the async workers (end users' passwords).
    pub offload: Arc<dyn Offload>,
    /// Counts end users' sign-ups and grants, shared by every replica.
    pub limiter: Arc<dyn RateLimiter>,
    /// Confirmation emails to end users, in the account's quota.
    pub mail: Arc<dyn EndUserMail>,
}

/// A database as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseView {
    pub database: Database,
    pub project_slug: ProjectSlug,
    /// `None` when the cluster did not say (a database dropped meanwhile).
    pub size_bytes: Option<u64>,
    /// What Supabase's clients take as their URL: `{base}/db/{slug}`.
    pub api_url: String,
    pub rest_url: String,
    pub auth_url: String,
    /// The tables and views it leaves open to `anon`; `None` when not read (a list, a
    /// creation) or when they could not be.
    pub open_tables: Option<Vec<OpenTable>>,
    /// The exposed schemas the database does not have (yet); `None` when not read (read
    /// only as the settings change) or when they could not be.
    pub missing_schemas: Option<Vec<String>>,
}

/// The database use cases.
#[derive(Debug, Clone)]
pub struct DatabaseService {
    pub(crate) ports: DatabasePorts,
    pub(crate) config: DatabaseConfig,
    pub(crate) running: Arc<sql::RunningQueries>,
}

impl DatabaseService {
    #[must_use]
    pub fn new(ports: DatabasePorts, config: DatabaseConfig) -> Self {
        Self {
            ports,
            config,
            running: Arc::default(),
        }
    }

    /// Whether a cluster is configured.
    #[must_use]
    pub fn available(&self) -> bool {
        self.ports.cluster.is_some()
    }

    pub(crate) fn cluster(&self) -> Result<&Arc<dyn Cluster>, DatabaseError> {
        self.ports
            .cluster
            .as_ref()
            .ok_or(DatabaseError::Unavailable)
    }

    pub(crate) fn api_url(&self, slug: &ProjectSlug) -> String {
        format!("{}/db/{}", self.config.base_url.trim_end_matches('/'), slug)
    }

    pub(crate) fn view(
        &self,
        database: Database,
        project_slug: ProjectSlug,
        size_bytes: Option<u64>,
    ) -> DatabaseView {
        let api_url = self.api_url(&database.slug);
        DatabaseView {
            rest_url: format!("{api_url}/rest/v1"),
            auth_url: format!("{api_url}/auth/v1"),
            api_url,
            database,
            project_slug,
            size_bytes,
            open_tables: None,
            missing_schemas: None,
        }
    }

    /// A ready database of the caller's account in a project the caller reaches with
    /// `access`: another account's database, or one not ready, is `NotFound`.
    pub(crate) async fn reachable(
        &self,
        principal: &Principal,
        id: DatabaseId,
        access: ProjectAccess,
    ) -> Result<(Database, ProjectSlug), DatabaseError> {
        self.cluster()?;
        let database = self
            .ports
            .records
            .database(id)
            .await?
            .filter(|d| {
                d.account_id == principal.account_id
                    && d.status == crate::DatabaseStatus::Ready
                    && !d.lapsed(self.ports.clock.now())
            })
            .ok_or(DatabaseError::NotFound)?;
        let project = authorize_project(
            self.ports.projects.as_ref(),
            principal,
            database.project_id,
            access,
        )
        .await?;
        Ok((database, project.slug))
    }

    /// The passwords of a database's roles, opened.
    pub(crate) fn access(&self, database: &Database) -> Result<TenantAccess, DatabaseError> {
        Ok(TenantAccess {
            names: database.names(),
            owner_password: self.open(database.id, "owner", &database.owner_secret)?,
            authenticator_password: self.open(
                database.id,
                "authenticator",
                &database.authenticator_secret,
            )?,
        })
    }

    pub(crate) fn seal(&self, id: DatabaseId, what: &str, plain: &str) -> SealedSecret {
        self.ports
            .sealing
            .seal(&purpose(id, what), plain.as_bytes())
    }

    pub(crate) fn open(
        &self,
        id: DatabaseId,
        what: &str,
        sealed: &SealedSecret,
    ) -> Result<String, DatabaseError> {
        let plain = self
            .ports
            .sealing
            .open(&purpose(id, what), sealed)
            .map_err(|e| InfraError::new(e.to_string()))?;
        String::from_utf8(plain).map_err(|_| {
            DatabaseError::Infra(InfraError::new("a sealed database secret is not text"))
        })
    }
}

fn purpose(id: DatabaseId, what: &str) -> String {
    format!("database {} {what}", id.0)
}
