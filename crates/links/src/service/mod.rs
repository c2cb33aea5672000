//! The URL-link use cases (`/api/link/v1`): create, list, fetch, change, delete, and the
//! counts. A URL link is a link of its own: its policy is edited here, where a page's link
//! is edited through its page (and is `NotFound` here). Every write is one store
//! transaction, so none is ever half-applied; each committed change is announced through
//! the kernel's `PageChanges`, so the pages origin drops what it cached.
//!
//! Writes are in `write`, reads and counts in `read`, the refusals in `error`.

use std::sync::Arc;

use quire_kernel::password::hash_password_unchecked;
use quire_kernel::{Clock, InfraError, Offload, PageChanges, Principal, ProjectSlug, offloaded};
use quire_projects::{ProjectAccess, ProjectStore, authorize_project};

use crate::model::{Link, Target};
use crate::policy_input::{PolicyInput, PolicyPatch};
use crate::ports::{AccountDirectory, LinkStore, PublicIds};
use crate::target_url::UrlRules;

mod error;
mod read;
mod write;

pub use error::LinkError;
pub use read::{MAX_STATS_DAYS, StatsSpan};

/// Settings of the link service.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// What a target URL must meet; its `links_origin` is where short links live.
    pub urls: UrlRules,
    /// Public ids tried before giving up with `public_id_exhausted`.
    pub public_id_attempts: u32,
}

impl Default for LinkConfig {
    fn default() -> Self {
        Self {
            urls: UrlRules {
                links_origin: "http://localhost:8081".into(),
                listener: None,
                deny: crate::DenyHosts::default(),
            },
            public_id_attempts: 5,
        }
    }
}

/// The adapters a [`LinkService`] works through.
#[derive(Debug, Clone)]
pub struct LinkPorts {
    pub links: Arc<dyn LinkStore>,
    pub accounts: Arc<dyn AccountDirectory>,
    pub projects: Arc<dyn ProjectStore>,
    pub clock: Arc<dyn Clock>,
    /// Where link passwords are hashed, off the async workers.
    pub offload: Arc<dyn Offload>,
    pub ids: Arc<dyn PublicIds>,
    /// Told of every committed change to a link.
    pub changes: Arc<dyn PageChanges>,
}

/// A new URL link, its fields as JSON typed them.
#[derive(Debug, Clone, Default)]
pub struct NewLink {
    pub url: String,
    pub title: Option<String>,
    /// Its access, expiry, view budget, allow list, alias and password.
    pub policy: PolicyInput,
    pub expired_url: Option<String>,
    pub redirect_status: Option<i128>,
    pub project: Option<String>,
}

/// A change: `None` keeps a field; `Some(None)` clears a nullable one.
#[derive(Debug, Clone, Default)]
pub struct LinkPatch {
    pub url: Option<String>,
    pub title: Option<Option<String>>,
    /// The changes to its access, expiry, view budget, allow list, alias and password.
    pub policy: PolicyPatch,
    pub expired_url: Option<Option<String>>,
    /// `null` goes back to 302.
    pub redirect_status: Option<Option<i128>>,
    pub status: Option<String>,
}

/// A URL link with its short URL and project, as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkView {
    pub link: Link,
    pub short_url: String,
    pub project_slug: ProjectSlug,
}

/// The URL-link use cases.
#[derive(Debug, Clone)]
pub struct LinkService {
    ports: LinkPorts,
    config: LinkConfig,
}

impl LinkService {
    #[must_use]
    pub fn new(ports: LinkPorts, config: LinkConfig) -> Self {
        Self { ports, config }
    }

    /// The short URL of `code`.
    #[must_use]
    pub fn short_url(&self, code: &str) -> String {
        format!(
            "{}/s/{code}",
            self.config.urls.links_origin.trim_end_matches('/')
        )
    }

    fn view(&self, link: Link, project_slug: ProjectSlug) -> LinkView {
        LinkView {
            short_url: self.short_url(link.code()),
            link,
            project_slug,
        }
    }

    /// A URL link of the caller's account in a project the caller reaches with `access`:
    /// another account's link, and any page's link, is `NotFound`.
    async fn reachable(
        &self,
        principal: &Principal,
        id: quire_kernel::LinkId,
        access: ProjectAccess,
    ) -> Result<(Link, ProjectSlug), LinkError> {
        let link = self
            .ports
            .links
            .link(id)
            .await?
            .filter(|l| l.account_id == principal.account_id)
            .filter(|l| matches!(l.target, Target::Url(_)))
            .ok_or(LinkError::NotFound)?;
        let project = authorize_project(
            self.ports.projects.as_ref(),
            principal,
            link.project_id,
            access,
        )
        .await?;
        Ok((link, project.slug))
    }

    /// Link passwords are hashed on the offload: argon2id would hold the async worker for
    /// tens of milliseconds.
    async fn hash_password(&self, password: String) -> Result<String, LinkError> {
        offloaded(self.ports.offload.as_ref(), move || {
            hash_password_unchecked(&password)
        })
        .await?
        .map_err(|e| LinkError::Infra(InfraError::new(e.to_string())))
    }
}
