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
//!   the objects this call uploaded.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use quire_kernel::{
    AccountId, Clock, Email, Handle, InfraError, PageId, Principal, ProjectSlug, Timer,
};
use quire_projects::{
    AddressError, ProjectAccess, ProjectStore, address_project, authorize_project,
};
use time::OffsetDateTime;

use quire_kernel::password::hash_password_unchecked;
use quire_kernel::{LinkId, PageChanges};
use quire_links::{Access, AllowEntry, Link, LinkStore, LinkWriteError, Policy};

use crate::model::{
    FileData, FileEntry, FileInput, Limits, Page, PageStatus, PasswordChange, SharedPage,
};
use crate::origins::PageOrigins;
use crate::ports::{
    AccountDirectory, BundleStore, InsertPageError, PageStore, PublicIds, UpdatePageStoreError,
};
use crate::validate::{self, FilesError, LimitKind};

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

/// Errors shared by the page use cases; each use case documents which it returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("this credential cannot reach that project or page")]
    InsufficientScope,
    #[error("page not found")]
    NotFound,
    /// A field failed validation; the message names it.
    #[error("{0}")]
    Invalid(String),
    #[error("access is password, so a password is required")]
    PasswordRequired,
    /// Publish with an explicit slug the owner already uses.
    #[error("you already have a page with that slug")]
    SlugConflict,
    /// Patch to a slug the owner already uses.
    #[error("you already have a page with that slug")]
    SlugTaken,
    #[error("that alias is already in use")]
    AliasConflict,
    #[error("{message}")]
    TooLarge { limit: LimitKind, message: String },
    #[error("no free public id was found; retry the request")]
    PublicIdExhausted,
    #[error("the page owner has no handle")]
    ProfileHandleMissing,
    #[error(
        "the page was deleted but some of its stored files were not; they will be removed later"
    )]
    StorageCleanupFailed,
    #[error("the page was deleted but its short link was not")]
    LinkCleanupFailed,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

impl From<AddressError> for PageError {
    fn from(e: AddressError) -> Self {
        match e {
            AddressError::InsufficientScope => PageError::InsufficientScope,
            AddressError::Infra(e) => PageError::Infra(e),
        }
    }
}

impl From<FilesError> for PageError {
    fn from(e: FilesError) -> Self {
        match e {
            FilesError::Invalid(i) => PageError::Invalid(i.0),
            FilesError::TooLarge { limit, message } => PageError::TooLarge { limit, message },
        }
    }
}

impl From<validate::Invalid> for PageError {
    fn from(e: validate::Invalid) -> Self {
        PageError::Invalid(e.0)
    }
}

/// A publish request whose fields have their JSON types.
#[derive(Debug, Clone, Default)]
pub struct PublishRequest {
    pub title: String,
    pub files: Vec<FileInput>,
    pub slug: Option<String>,
    pub entrypoint: Option<String>,
    pub access: Option<String>,
    pub password: Option<String>,
    pub expires_at: Option<String>,
    pub max_views: Option<i128>,
    pub alias: Option<String>,
    pub allow: Vec<String>,
    pub project: Option<String>,
}

/// A patch: `None` keeps a field; `Some(None)` clears a nullable one.
#[derive(Debug, Clone, Default)]
pub struct PatchRequest {
    pub title: Option<String>,
    pub slug: Option<String>,
    pub access: Option<String>,
    pub password: Option<Option<String>>,
    pub expires_at: Option<Option<String>>,
    pub max_views: Option<Option<i128>>,
    pub alias: Option<Option<String>>,
    pub status: Option<String>,
    pub allow: Option<Vec<String>>,
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
}

/// Page passwords have no minimum length: the owner chooses what visitors type.
fn hash_page_password(password: &str) -> Result<String, PageError> {
    hash_password_unchecked(password).map_err(|e| PageError::Infra(InfraError::new(e.to_string())))
}

impl From<LinkWriteError> for PageError {
    fn from(e: LinkWriteError) -> Self {
        match e {
            LinkWriteError::CodeTaken => PageError::AliasConflict,
            LinkWriteError::Infra(e) => PageError::Infra(e),
        }
    }
}

fn access_of(raw: &str) -> Result<Access, PageError> {
    Access::parse(raw).ok_or_else(|| {
        PageError::Invalid("access must be private, password, allow_list or public".into())
    })
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
    ids: Arc<dyn PublicIds>,
    changes: Arc<dyn PageChanges>,
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
    pub ids: Arc<dyn PublicIds>,
    /// Told of every committed change to a page (the pages origin's caches listen).
    pub changes: Arc<dyn PageChanges>,
}

impl PageService {
    pub fn new(ports: PagePorts, config: PageConfig) -> Self {
        Self {
            pages: ports.pages,
            bundles: ports.bundles,
            links: ports.links,
            accounts: ports.accounts,
            projects: ports.projects,
            clock: ports.clock,
            timer: ports.timer,
            ids: ports.ids,
            changes: ports.changes,
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
            .map(|l| (l.page_id, l))
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

    /// Parses an allow list, then resolves its handles in one lookup; duplicates are
    /// dropped (first one kept) in linear time.
    async fn resolve_allow(&self, raw: &[String]) -> Result<Vec<AllowEntry>, PageError> {
        if raw.len() > validate::MAX_ALLOW_ENTRIES {
            return Err(PageError::Invalid(format!(
                "allow has {} entries; at most {} are allowed",
                raw.len(),
                validate::MAX_ALLOW_ENTRIES
            )));
        }
        enum Parsed {
            Email(Email),
            Handle(Handle),
        }
        let mut parsed = Vec::with_capacity(raw.len());
        let mut handles = Vec::new();
        for entry in raw {
            if entry.contains('@') {
                parsed.push(Parsed::Email(Email::parse(entry).map_err(|_| {
                    PageError::Invalid(format!(
                        "allow entry {} is not a valid email",
                        validate::quoted(entry)
                    ))
                })?));
            } else {
                let handle = Handle::parse(entry.trim_start_matches('@')).map_err(|_| {
                    PageError::Invalid(format!(
                        "allow entry {} is neither an email nor a handle",
                        validate::quoted(entry)
                    ))
                })?;
                handles.push(handle.clone());
                parsed.push(Parsed::Handle(handle));
            }
        }
        let accounts = if handles.is_empty() {
            std::collections::HashMap::new()
        } else {
            self.accounts.accounts_by_handles(&handles).await?
        };
        let mut seen = std::collections::HashSet::with_capacity(parsed.len());
        let mut out = Vec::with_capacity(parsed.len());
        for entry in parsed {
            let resolved = match entry {
                Parsed::Email(e) => AllowEntry::Email(e),
                Parsed::Handle(h) => AllowEntry::Account(*accounts.get(&h).ok_or_else(|| {
                    PageError::Invalid(format!(
                        "allow entry \"{}\": no account has that handle",
                        h.as_str()
                    ))
                })?),
            };
            if seen.insert(resolved.clone()) {
                out.push(resolved);
            }
        }
        Ok(out)
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

    /// Publishes a page: record, bundle, link, in that order, all or nothing.
    ///
    /// # Errors
    /// `InsufficientScope`, `Invalid`, `PasswordRequired`, `SlugConflict`, `AliasConflict`,
    /// `TooLarge`, `PublicIdExhausted`, `ProfileHandleMissing`, `Infra`.
    pub async fn publish(
        &self,
        principal: &Principal,
        req: PublishRequest,
    ) -> Result<PageView, PageError> {
        let project = address_project(
            self.projects.as_ref(),
            principal,
            req.project.as_deref(),
            ProjectAccess::Write,
        )
        .await?;
        let now = self.clock.now();
        let title = validate::title(&req.title)?;
        let explicit_slug = req.slug.as_deref().map(validate::slug).transpose()?;
        let entrypoint = req.entrypoint.unwrap_or_else(|| "index.html".into());
        validate::path(&entrypoint).map_err(|_| {
            PageError::Invalid(format!(
                "entrypoint {} is not a safe path",
                validate::quoted(&entrypoint)
            ))
        })?;
        let access = req
            .access
            .as_deref()
            .map_or(Ok(Access::Private), access_of)?;
        let expires_at = req
            .expires_at
            .as_deref()
            .map(|t| validate::expires_at(t, now))
            .transpose()?;
        let max_views = req.max_views.map(validate::max_views).transpose()?;
        let alias = req.alias.as_deref().map(validate::alias).transpose()?;
        if access == Access::Password && req.password.as_deref().is_none_or(str::is_empty) {
            return Err(PageError::PasswordRequired);
        }
        if let Some(p) = &req.password {
            validate::page_password(p)?;
        }
        let allow = self.resolve_allow(&req.allow).await?;
        let files = validate::files(req.files, &[], &self.config.limits)?;
        if !files.iter().any(|f| f.entry.path == entrypoint) {
            return Err(PageError::Invalid(format!(
                "entrypoint {} is not among the files",
                validate::quoted(&entrypoint)
            )));
        }
        let (handle, _) = self.owner(project.account_id).await?;

        let manifest: Vec<FileEntry> = files.iter().map(|f| f.entry.clone()).collect();
        let mut page = Page {
            id: PageId::new(),
            public_id: String::new(),
            account_id: project.account_id,
            project_id: project.id,
            slug: String::new(),
            title,
            entrypoint,
            status: PageStatus::Active,
            size_bytes: manifest.iter().map(|f| f.size_bytes).sum(),
            file_count: manifest.len() as u64,
            created_at: now,
            updated_at: now,
            archived_at: None,
        };
        self.insert_with_fresh_ids(&mut page, explicit_slug.as_deref(), &manifest)
            .await?;
        let password_hash = req
            .password
            .filter(|p| !p.is_empty())
            .map(|p| hash_page_password(&p))
            .transpose()?;
        let new_link = Link {
            id: LinkId::new(),
            page_id: page.id,
            account_id: page.account_id,
            project_id: page.project_id,
            public_id: page.public_id.clone(),
            alias,
            policy: Policy {
                access,
                expires_at,
                max_views,
                allow,
            },
            password_hash,
            view_count: 0,
            created_at: now,
            updated_at: now,
        };
        let link = self
            .while_leased(page.id, self.finish_publish(page.id, files, new_link))
            .await?;
        // The slug may have been remembered as unknown by the pages origin.
        self.changes.page_changed(page.id);
        Ok(self.view(page, Some(link), &handle, project.slug))
    }

    /// The steps after the record: bundle, link, ready; a failure undoes what was done.
    async fn finish_publish(
        &self,
        id: PageId,
        files: Vec<FileData>,
        new_link: Link,
    ) -> Result<Link, PageError> {
        if let Err((e, _)) = self.upload(id, files).await {
            self.undo_publish(id, false).await;
            return Err(e.into());
        }
        if let Err(e) = self.links.insert_link(&new_link).await {
            self.undo_publish(id, false).await;
            return Err(e.into());
        }
        if let Err(e) = self.pages.mark_ready(id).await {
            self.undo_publish(id, true).await;
            return Err(e.into());
        }
        Ok(new_link)
    }

    /// Runs `work` while renewing the lease of the pending page `id` every third of the
    /// lease. A renewal that finds the record gone (reclaimed after a stall longer than the
    /// lease) stops the work, which is then dropped; a failed renewal is retried at the next
    /// tick, since the lease still has two thirds of its time.
    async fn while_leased<T>(
        &self,
        id: PageId,
        work: impl std::future::Future<Output = Result<T, PageError>>,
    ) -> Result<T, PageError> {
        let renew = async {
            loop {
                self.timer.sleep(self.config.publish_lease / 3).await;
                match self.pages.renew_lease(id, self.lease_end()).await {
                    Ok(true) | Err(_) => {}
                    Ok(false) => {
                        return PageError::Infra(InfraError::new(
                            "the publish lost its pending record: its lease lapsed",
                        ));
                    }
                }
            }
        };
        let work = std::pin::pin!(work);
        let renew = std::pin::pin!(renew);
        match futures_util::future::select(work, renew).await {
            futures_util::future::Either::Left((done, _)) => done,
            futures_util::future::Either::Right((lost, _)) => {
                self.undo_publish(id, true).await;
                Err(lost)
            }
        }
    }

    fn lease_end(&self) -> OffsetDateTime {
        self.clock.now()
            + time::Duration::try_from(self.config.publish_lease)
                .unwrap_or(time::Duration::minutes(1))
    }

    /// Removes a dead publish: link, objects, then the record (kept when the objects
    /// cannot go, so the janitor finds it again). Returns whether the record went.
    async fn reclaim(&self, id: PageId) -> bool {
        self.links.delete_link_of_page(id).await.is_ok()
            && self.bundles.delete_page(id).await.is_ok()
            && self.pages.delete_page(id).await.is_ok()
    }

    /// Tries public ids (and, for a derived slug, `-2`, `-3`… suffixes) until the pending
    /// record is stored. A slug held by a dead publish (lease lapsed) is reclaimed first.
    async fn insert_with_fresh_ids(
        &self,
        page: &mut Page,
        explicit_slug: Option<&str>,
        manifest: &[FileEntry],
    ) -> Result<(), PageError> {
        let base =
            explicit_slug.map_or_else(|| validate::slug_from_title(&page.title), str::to_owned);
        let mut candidate = 1;
        let mut id_attempts = 0;
        let mut reclaimed = false;
        page.public_id = self.ids.next_id();
        loop {
            page.slug = validate::slug_candidate(&base, candidate);
            match self
                .pages
                .insert_pending(page, manifest, self.lease_end())
                .await
            {
                Ok(()) => return Ok(()),
                Err(InsertPageError::SlugTaken) if !reclaimed => {
                    reclaimed = true;
                    let now = self.clock.now();
                    if let Some(dead) = self
                        .pages
                        .lapsed_slug_holder(page.account_id, &page.slug, now)
                        .await?
                    {
                        self.reclaim(dead).await;
                    }
                }
                Err(InsertPageError::SlugTaken) if explicit_slug.is_some() => {
                    return Err(PageError::SlugConflict);
                }
                Err(InsertPageError::SlugTaken) => {
                    reclaimed = false;
                    candidate += 1;
                    if candidate > 1_000 {
                        return Err(PageError::SlugConflict);
                    }
                }
                Err(InsertPageError::PublicIdTaken) => {
                    id_attempts += 1;
                    if id_attempts >= self.config.public_id_attempts {
                        return Err(PageError::PublicIdExhausted);
                    }
                    page.public_id = self.ids.next_id();
                }
                Err(InsertPageError::Infra(e)) => return Err(e.into()),
            }
        }
    }

    /// Uploads each distinct object of `files`, [`UPLOAD_CONCURRENCY`] at a time; returns the
    /// hashes written, or the first error with every hash that was written (for undo).
    async fn upload(
        &self,
        page: PageId,
        files: Vec<FileData>,
    ) -> Result<Vec<String>, (InfraError, Vec<String>)> {
        use futures_util::StreamExt;
        let mut seen = HashSet::new();
        let distinct: Vec<FileData> = files
            .into_iter()
            .filter(|f| seen.insert(f.entry.sha256.clone()))
            .collect();
        let results: Vec<(String, Result<(), InfraError>)> =
            futures_util::stream::iter(distinct.into_iter().map(|f| async move {
                let r = self.bundles.put(page, &f.entry.sha256, f.bytes).await;
                (f.entry.sha256, r)
            }))
            .buffer_unordered(UPLOAD_CONCURRENCY)
            .collect()
            .await;
        let mut written = Vec::with_capacity(results.len());
        let mut first_error = None;
        for (hash, r) in results {
            match r {
                Ok(()) => written.push(hash),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            None => Ok(written),
            Some(e) => Err((e, written)),
        }
    }

    /// Best effort: what cannot be removed now is left to [`PageService::sweep`] (the record
    /// stays pending, so it is never visible).
    async fn undo_publish(&self, page: PageId, link_created: bool) {
        if link_created {
            let _ = self.links.delete_link_of_page(page).await;
        }
        if self.bundles.delete_page(page).await.is_ok() {
            let _ = self.pages.delete_page(page).await;
        }
    }

    /// Ready pages of the addressed project with the status (default `active`).
    ///
    /// # Errors
    /// `InsufficientScope`, `Invalid` (status filter), `Infra`.
    pub async fn list(
        &self,
        principal: &Principal,
        project: Option<&str>,
        status: Option<&str>,
    ) -> Result<(ProjectSlug, Vec<PageView>), PageError> {
        let status = match status {
            None => PageStatus::Active,
            Some(s) => PageStatus::parse(s)
                .ok_or_else(|| PageError::Invalid("status must be active or archived".into()))?,
        };
        let project = address_project(
            self.projects.as_ref(),
            principal,
            project,
            ProjectAccess::Read,
        )
        .await?;
        let pages = self.pages.pages_in_project(project.id, status).await?;
        let ids: Vec<PageId> = pages.iter().map(|p| p.id).collect();
        let mut links = self.links_by_page(&ids).await?;
        let (handle, _) = self.owner(project.account_id).await?;
        let views = pages
            .into_iter()
            .map(|p| {
                let link = links.remove(&p.id);
                self.view(p, link, &handle, project.slug.clone())
            })
            .collect();
        Ok((project.slug, views))
    }

    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Infra`.
    pub async fn get(&self, principal: &Principal, id: PageId) -> Result<PageView, PageError> {
        let (page, project) = self.reachable(principal, id, ProjectAccess::Read).await?;
        let link = self.links.link_of_page(page.id).await?;
        let (handle, _) = self.owner(page.account_id).await?;
        Ok(self.view(page, link, &handle, project))
    }

    /// Updates the record, then the link; a failed link update restores the record.
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Invalid`, `PasswordRequired`, `SlugTaken`,
    /// `AliasConflict`, `Infra`.
    pub async fn update(
        &self,
        principal: &Principal,
        id: PageId,
        req: PatchRequest,
    ) -> Result<PageView, PageError> {
        let (old, project) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let mut link = self
            .links
            .link_of_page(id)
            .await?
            .ok_or_else(|| InfraError::new("page has no link"))?;
        let now = self.clock.now();

        let mut page = old.clone();
        if let Some(t) = &req.title {
            page.title = validate::title(t)?;
        }
        if let Some(s) = &req.slug {
            page.slug = validate::slug(s)?;
        }
        if let Some(s) = &req.status {
            let status = PageStatus::parse(s)
                .ok_or_else(|| PageError::Invalid("status must be active or archived".into()))?;
            if status != page.status {
                page.archived_at = (status == PageStatus::Archived).then_some(now);
            }
            page.status = status;
        }
        if let Some(a) = &req.access {
            link.policy.access = access_of(a)?;
        }
        if let Some(e) = &req.expires_at {
            link.policy.expires_at = e
                .as_deref()
                .map(|t| validate::expires_at(t, now))
                .transpose()?;
        }
        if let Some(m) = req.max_views {
            link.policy.max_views = m.map(validate::max_views).transpose()?;
        }
        if let Some(alias) = req.alias {
            link.alias = alias.as_deref().map(validate::alias).transpose()?;
        }
        if let Some(allow) = &req.allow {
            link.policy.allow = self.resolve_allow(allow).await?;
        }
        let password = match req.password {
            None => PasswordChange::Keep,
            Some(None) => PasswordChange::Clear,
            Some(Some(p)) if p.is_empty() => PasswordChange::Clear,
            Some(Some(p)) => {
                validate::page_password(&p)?;
                PasswordChange::Set(p)
            }
        };
        let will_have_password = match &password {
            PasswordChange::Keep => link.has_password(),
            PasswordChange::Set(_) => true,
            PasswordChange::Clear => false,
        };
        if link.policy.access == Access::Password && !will_have_password {
            return Err(PageError::PasswordRequired);
        }
        match password {
            PasswordChange::Keep => {}
            PasswordChange::Clear => link.password_hash = None,
            PasswordChange::Set(p) => link.password_hash = Some(hash_page_password(&p)?),
        }
        link.updated_at = now;
        page.updated_at = now;
        let (handle, _) = self.owner(page.account_id).await?;

        self.pages.update_page(&page).await.map_err(|e| match e {
            UpdatePageStoreError::SlugTaken => PageError::SlugTaken,
            UpdatePageStoreError::Infra(e) => PageError::Infra(e),
        })?;
        match self.links.update_link(&link).await {
            Ok(()) => {
                self.changes.page_changed(id);
                Ok(self.view(page, Some(link), &handle, project))
            }
            Err(e) => {
                // The record committed first; put it back so nothing is half-applied.
                if let Err(revert) = self.pages.update_page(&old).await {
                    return Err(PageError::Infra(InfraError::new(format!(
                        "link update failed ({e}) and the page record could not be restored: {revert}"
                    ))));
                }
                Err(e.into())
            }
        }
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

    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Infra`.
    pub async fn files(
        &self,
        principal: &Principal,
        id: PageId,
    ) -> Result<Vec<FileEntry>, PageError> {
        let (page, _) = self.reachable(principal, id, ProjectAccess::Read).await?;
        Ok(self.pages.files(page.id).await?)
    }

    /// Adds (or replaces, by path) files of a page.
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Invalid`, `TooLarge`, `Infra`; on any error the
    /// page's files are listed and stored exactly as before.
    pub async fn add_files(
        &self,
        principal: &Principal,
        id: PageId,
        inputs: Vec<FileInput>,
    ) -> Result<FilesAdded, PageError> {
        let (page, _) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let existing = self.pages.files(page.id).await?;
        let batch = validate::files(inputs, &existing, &self.config.limits)?;
        let stored: HashSet<String> = existing.iter().map(|e| e.sha256.clone()).collect();
        let new_entries: Vec<FileEntry> = batch.iter().map(|f| f.entry.clone()).collect();
        let to_upload: Vec<FileData> = batch
            .into_iter()
            .filter(|f| !stored.contains(&f.entry.sha256))
            .collect();
        let uploaded = match self.upload(page.id, to_upload).await {
            Ok(written) => written,
            Err((e, written)) => {
                self.remove_objects(page.id, &written).await;
                return Err(e.into());
            }
        };
        let mut manifest: HashMap<String, FileEntry> =
            existing.into_iter().map(|e| (e.path.clone(), e)).collect();
        for e in &new_entries {
            manifest.insert(e.path.clone(), e.clone());
        }
        let size: u64 = manifest.values().map(|e| e.size_bytes).sum();
        let count = manifest.len() as u64;
        if let Err(e) = self
            .pages
            .put_files(page.id, &new_entries, size, count, self.clock.now())
            .await
        {
            self.remove_objects(page.id, &uploaded).await;
            return Err(e.into());
        }
        // Objects no path refers to any more (replaced content) can go now.
        let referenced: HashSet<&str> = manifest.values().map(|e| e.sha256.as_str()).collect();
        let unreferenced: Vec<String> = stored
            .iter()
            .filter(|s| !referenced.contains(s.as_str()))
            .cloned()
            .collect();
        self.remove_objects(page.id, &unreferenced).await;
        self.changes.page_changed(page.id);
        Ok(FilesAdded {
            id: page.id,
            file_count: count,
            size_bytes: size,
        })
    }

    async fn remove_objects(&self, page: PageId, hashes: &[String]) {
        for h in hashes {
            let _ = self.bundles.delete(page, h).await;
        }
    }

    /// Pages whose allow list names the caller's account or email (archived pages excluded).
    ///
    /// # Errors
    /// `Infra`.
    pub async fn shared_with(&self, principal: &Principal) -> Result<Vec<SharedPage>, PageError> {
        let email = self
            .accounts
            .handle_and_email(principal.account_id)
            .await?
            .map(|(_, e)| e);
        let shared = self
            .links
            .shared_with(principal.account_id, email.as_ref())
            .await?;
        let ids: Vec<PageId> = shared.iter().map(|(id, _)| *id).collect();
        let shared_at: HashMap<PageId, OffsetDateTime> = shared.into_iter().collect();
        let pages = self.pages.pages_by_ids(&ids).await?;
        let mut links = self.links_by_page(&ids).await?;
        let mut handles: HashMap<AccountId, Handle> = HashMap::new();
        let mut out = Vec::new();
        for page in pages.into_iter().filter(|p| p.status == PageStatus::Active) {
            let Some(link) = links.remove(&page.id) else {
                continue;
            };
            if let std::collections::hash_map::Entry::Vacant(slot) = handles.entry(page.account_id)
            {
                slot.insert(self.owner(page.account_id).await?.0);
            }
            out.push(SharedPage {
                owner_handle: handles[&page.account_id].to_string(),
                shared_at: shared_at[&page.id],
                link,
                page,
            });
        }
        out.sort_by_key(|s| std::cmp::Reverse(s.shared_at));
        Ok(out)
    }

    /// Removes pending pages whose lease lapsed (publishes that died) with their objects and
    /// links, objects of pages that no longer exist, and what interrupted writes left in the
    /// bundle store (temporary objects, emptied folders).
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
        swept.leftovers = self.bundles.sweep_leftovers(LEFTOVER_AGE).await?;
        Ok(swept)
    }
}
