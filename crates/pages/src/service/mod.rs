//! The page use cases. Multi-step writes undo what they did when a later step fails:
//!
//! - publish: record (pending, leased) → bundle → link → ready; a failure undoes the earlier
//!   steps. The publish renews its lease while it runs, so a publish that died (a crash, a
//!   dropped request) frees its slug once the lease lapses, and the janitor sweeps the rest;
//! - patch: record first, then link; a failed link update writes the old record back;
//! - delete: bundle, then link, then record; failed cleanups still remove the record and
//!   are reported;
//! - add files: the whole batch is validated first; new objects are content-addressed, so
//!   the previous files keep serving until the manifest commits, and a failure removes only
//!   the objects this call uploaded;
//! - replace files: the same, but the manifest is swapped whole in one transaction, and
//!   the objects only the old one named are marked retired after it commits; the janitor
//!   removes them once they were kept long enough for a backup under way to copy them.
//!
//! Publish lives in `publish`, patch, add files and replace files in `update`, the sweep of
//! retired objects in `retired`, the lists (whole and paged) in `lists`, the refusals in
//! `error`; this file holds the service, its ports and the other reads.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use quire_kernel::PageChanges;
use quire_kernel::password::hash_password_unchecked;
use quire_kernel::{
    AccountId, Clock, Email, Handle, InfraError, Offload, PageId, Principal, ProjectId,
    ProjectSlug, Timer, offloaded,
};
use quire_links::{Access, Link, LinkStore, PolicyInput, PolicyPatch};
use quire_projects::{ProjectAccess, ProjectStore, authorize_loaded, authorize_project};
use time::OffsetDateTime;

use crate::model::{FileInput, Limits, Page};
use crate::origins::PageOrigins;
use crate::ports::{
    AccountDirectory, BundleStore, PageDatabases, PageStore, PublicIds, PublishRequests,
};
use crate::validate;

mod error;
mod lists;
mod lookup;
mod publish;
mod replay;
mod retired;
mod update;

pub use error::PageError;
pub use lists::{FILES_LIST, PAGES_LIST, PageLister, SHARED_LIST};
pub use lookup::{FileSlice, MAX_FILE_SLICE};
pub use replay::REQUEST_MEMORY;

/// Objects written to the bundle store at once during a publish or add-files.
pub const UPLOAD_CONCURRENCY: usize = 8;

/// Settings of the page service.
#[derive(Debug, Clone)]
pub struct PageConfig {
    /// Where published pages and short links live.
    pub origins: PageOrigins,
    pub limits: Limits,
    /// Public ids tried before giving up with `public_id_exhausted`.
    pub public_id_attempts: u32,
    /// How long a publish holds its pending record without renewing it; a publish renews
    /// at a third of this, so a dead one frees its slug at most this long after it died.
    pub publish_lease: Duration,
    /// How long an object stays in storage after a replace stopped naming it, before the
    /// janitor removes it (`retired`): a backup that read the manifest before still finds it.
    pub replaced_files_kept: Duration,
}

/// Temporary objects untouched for this long belong to no write still running.
pub const LEFTOVER_AGE: Duration = Duration::from_secs(10 * 60);

impl Default for PageConfig {
    fn default() -> Self {
        Self {
            origins: PageOrigins::default(),
            limits: Limits::default(),
            public_id_attempts: 5,
            publish_lease: Duration::from_secs(60),
            replaced_files_kept: Duration::from_secs(10 * 60),
        }
    }
}

/// A page with its link and addresses, as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageView {
    pub page: Page,
    pub link: Option<Link>,
    pub url: String,
    pub short_url: Option<String>,
    pub project_slug: ProjectSlug,
}

/// Who may see a page and for how long, as its link says: a page without a link is
/// private, with no expiry, no budget and no views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exposure {
    pub access: Access,
    pub expires_at: Option<OffsetDateTime>,
    pub max_views: Option<u64>,
    pub view_count: u64,
}

impl PageView {
    #[must_use]
    pub fn exposure(&self) -> Exposure {
        match &self.link {
            Some(l) => Exposure {
                access: l.policy.access,
                expires_at: l.policy.expires_at,
                max_views: l.policy.max_views,
                view_count: l.view_count,
            },
            None => Exposure {
                access: Access::Private,
                expires_at: None,
                max_views: None,
                view_count: 0,
            },
        }
    }
}

/// A publish request whose fields have their JSON types.
#[derive(Debug, Clone, Default)]
pub struct PublishRequest {
    pub title: String,
    pub files: Vec<FileInput>,
    pub slug: Option<String>,
    pub entrypoint: Option<String>,
    /// Its link's access, expiry, view budget, allow list, alias and password.
    pub policy: PolicyInput,
    pub project: Option<String>,
    /// The slug of a database of the owner in the page's project.
    pub database: Option<String>,
}

/// A patch: `None` keeps a field; `Some(None)` clears a nullable one.
#[derive(Debug, Clone, Default)]
pub struct PatchRequest {
    pub title: Option<String>,
    pub slug: Option<String>,
    /// The changes to its link's access, expiry, view budget, allow list, alias and
    /// password.
    pub policy: PolicyPatch,
    pub status: Option<String>,
    pub database: Option<Option<String>>,
}

/// The result of adding files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilesAdded {
    pub id: PageId,
    pub file_count: u64,
    pub size_bytes: u64,
}

/// What a janitor pass removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    pub pending_pages: usize,
    pub orphaned_bundles: usize,
    /// Temporary objects and emptied folders that interrupted writes left.
    pub leftovers: usize,
    /// Objects a replace stopped naming, removed once they were kept long enough.
    pub replaced_files: usize,
    /// Publish request ids older than [`REQUEST_MEMORY`], forgotten.
    pub forgotten_requests: u64,
}

/// Page passwords have no minimum length: the owner chooses what visitors type. They are
/// hashed on the offload: argon2id would hold the async worker for tens of milliseconds.
async fn hash_page_password(offload: &dyn Offload, password: String) -> Result<String, PageError> {
    offloaded(offload, move || hash_password_unchecked(&password))
        .await?
        .map_err(|e| PageError::Infra(InfraError::new(e.to_string())))
}

/// The page use cases.
#[derive(Debug, Clone)]
pub struct PageService {
    pages: Arc<dyn PageStore>,
    bundles: Arc<dyn BundleStore>,
    links: Arc<dyn LinkStore>,
    accounts: Arc<dyn AccountDirectory>,
    projects: Arc<dyn ProjectStore>,
    clock: Arc<dyn Clock>,
    timer: Arc<dyn Timer>,
    offload: Arc<dyn Offload>,
    ids: Arc<dyn PublicIds>,
    changes: Arc<dyn PageChanges>,
    requests: Arc<dyn PublishRequests>,
    databases: Arc<dyn PageDatabases>,
    config: PageConfig,
}

/// The adapters a [`PageService`] works through.
#[derive(Debug, Clone)]
pub struct PagePorts {
    pub pages: Arc<dyn PageStore>,
    pub bundles: Arc<dyn BundleStore>,
    pub links: Arc<dyn LinkStore>,
    pub accounts: Arc<dyn AccountDirectory>,
    pub projects: Arc<dyn ProjectStore>,
    pub clock: Arc<dyn Clock>,
    pub timer: Arc<dyn Timer>,
    /// Where a large batch and page passwords are hashed, so that no async worker waits on
    /// them.
    pub offload: Arc<dyn Offload>,
    pub ids: Arc<dyn PublicIds>,
    /// Told of every committed change to a page (the pages origin's caches listen).
    pub changes: Arc<dyn PageChanges>,
    /// Publishes by request id, so a retried publish replays (the MCP tools).
    pub requests: Arc<dyn PublishRequests>,
    /// The databases a page may name.
    pub databases: Arc<dyn PageDatabases>,
}

impl PageService {
    /// The time by the clock pages expire by: what a surface shows "in 6 days" against.
    #[must_use]
    pub fn now(&self) -> OffsetDateTime {
        self.clock.now()
    }

    pub fn new(ports: PagePorts, config: PageConfig) -> Self {
        Self {
            pages: ports.pages,
            bundles: ports.bundles,
            links: ports.links,
            accounts: ports.accounts,
            projects: ports.projects,
            clock: ports.clock,
            timer: ports.timer,
            offload: ports.offload,
            ids: ports.ids,
            changes: ports.changes,
            requests: ports.requests,
            databases: ports.databases,
            config,
        }
    }

    #[must_use]
    pub fn limits(&self) -> Limits {
        self.config.limits
    }

    /// The public URL of the page `slug` of `owner_handle`.
    #[must_use]
    pub fn url_of(&self, owner_handle: &str, slug: &str) -> String {
        self.config.origins.page_url(owner_handle, slug)
    }

    async fn links_by_page(&self, ids: &[PageId]) -> Result<HashMap<PageId, Link>, InfraError> {
        Ok(self
            .links
            .links_of_pages(ids)
            .await?
            .into_iter()
            .filter_map(|l| Some((l.page()?, l)))
            .collect())
    }

    async fn owner(&self, account: AccountId) -> Result<(Handle, Email), PageError> {
        self.accounts
            .handle_and_email(account)
            .await?
            .ok_or(PageError::ProfileHandleMissing)
    }

    fn view(
        &self,
        page: Page,
        link: Option<Link>,
        handle: &Handle,
        project: ProjectSlug,
    ) -> PageView {
        PageView {
            url: self.url_of(handle.as_str(), &page.slug),
            short_url: link
                .as_ref()
                .map(|l| self.config.origins.short_url(l.code())),
            page,
            link,
            project_slug: project,
        }
    }

    /// The database a page of `account` in `project` is to name: `None` for none (an empty
    /// slug is none); a slug naming no ready database of the account in that project is
    /// `Invalid`, whether it names nothing or another owner's or project's.
    async fn check_database(
        &self,
        account: AccountId,
        project: ProjectId,
        raw: Option<&str>,
    ) -> Result<Option<String>, PageError> {
        let Some(slug) = raw.filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        if ProjectSlug::parse(slug).is_err()
            || !self.databases.may_name(account, project, slug).await?
        {
            return Err(PageError::Invalid(format!(
                "database {} is not a database of yours in the page's project",
                validate::quoted(slug)
            )));
        }
        Ok(Some(slug.to_owned()))
    }

    /// A page the caller may reach with `access`: another account's page is `NotFound`, a
    /// page of the account out of the key's reach is `InsufficientScope`.
    async fn reachable(
        &self,
        principal: &Principal,
        id: PageId,
        access: ProjectAccess,
    ) -> Result<(Page, ProjectSlug), PageError> {
        let page = self.pages.page(id).await?.ok_or(PageError::NotFound)?;
        if page.account_id != principal.account_id {
            return Err(PageError::NotFound);
        }
        let project =
            authorize_project(self.projects.as_ref(), principal, page.project_id, access).await?;
        Ok((page, project.slug))
    }

    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Infra`.
    pub async fn get(&self, principal: &Principal, id: PageId) -> Result<PageView, PageError> {
        let details = self
            .pages
            .page_details(id)
            .await?
            .filter(|d| d.page.account_id == principal.account_id)
            .ok_or(PageError::NotFound)?;
        let project = authorize_loaded(
            self.projects.as_ref(),
            principal,
            details.project,
            ProjectAccess::Read,
        )
        .await?;
        Ok(self.view(details.page, details.link, &details.owner, project.slug))
    }

    /// Deletes the bundle, then the link, then the record.
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`; `StorageCleanupFailed` / `LinkCleanupFailed` when the
    /// record is gone but files or link were left; `Infra` when the record could not go.
    pub async fn delete(&self, principal: &Principal, id: PageId) -> Result<(), PageError> {
        let (page, _) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let storage = self.bundles.delete_page(page.id).await;
        let link = self.links.delete_link_of_page(page.id).await;
        let record = self.pages.delete_page(page.id).await;
        // Even a delete that failed half-way changed what visitors may see.
        self.changes.page_changed(page.id);
        record?;
        if storage.is_err() {
            return Err(PageError::StorageCleanupFailed);
        }
        if link.is_err() {
            return Err(PageError::LinkCleanupFailed);
        }
        Ok(())
    }

    /// The page's views per UTC day over the last `days` days up to today, oldest first,
    /// with a zero for each day without views.
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Infra`.
    pub async fn daily_views(
        &self,
        principal: &Principal,
        id: PageId,
        days: u16,
    ) -> Result<Vec<(time::Date, u64)>, PageError> {
        let (page, _) = self.reachable(principal, id, ProjectAccess::Read).await?;
        let today = self.clock.now().date();
        let first = today - time::Duration::days(i64::from(days.max(1)) - 1);
        let counted: HashMap<time::Date, u64> = match self.links.link_of_page(page.id).await? {
            Some(link) => self
                .links
                .daily_views(link.id, first)
                .await?
                .into_iter()
                .collect(),
            None => HashMap::new(),
        };
        Ok((0..i64::from(days.max(1)))
            .map(|n| {
                let day = first + time::Duration::days(n);
                (day, counted.get(&day).copied().unwrap_or(0))
            })
            .collect())
    }

    /// Removes pending pages whose lease lapsed (publishes that died) with their objects and
    /// links, objects of pages that no longer exist, objects replaced longer ago than
    /// [`PageConfig::replaced_files_kept`], and what interrupted writes left in the bundle
    /// store (temporary objects, emptied folders).
    ///
    /// # Errors
    /// `Infra` when the stores cannot be listed; individual removals that fail are retried
    /// on the next pass.
    pub async fn sweep(&self) -> Result<Swept, PageError> {
        let mut swept = Swept::default();
        for id in self.pages.stale_pending(self.clock.now()).await? {
            if self.reclaim(id).await {
                swept.pending_pages += 1;
            }
        }
        for id in self.bundles.pages().await? {
            if !self.pages.page_exists(id).await? && self.bundles.delete_page(id).await.is_ok() {
                swept.orphaned_bundles += 1;
            }
        }
        swept.replaced_files = self.sweep_retired().await?;
        swept.leftovers = self.bundles.sweep_leftovers(LEFTOVER_AGE).await?;
        swept.forgotten_requests = self
            .requests
            .forget_before(self.clock.now() - REQUEST_MEMORY)
            .await?;
        Ok(swept)
    }
}
