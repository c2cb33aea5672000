//! The performance layer: pages as served (policy, handle, manifest) and small files, kept
//! in bounded moka caches and per-thread front caches, loaded from the stores on a miss,
//! and dropped when the page and project services announce a change ([`PageChanges`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use quire_kernel::conditional::http_date;
use quire_kernel::{Handle, InfraError, LinkId, PageChanges, PageId, ProjectId};
use quire_pages::{Page, PageStatus};
use time::OffsetDateTime;

use crate::cache::{
    CachedFile, FileSlot, Freshness, Site, count_lookup, front_get, front_put, gzip,
};
use crate::service::{Inner, ServingService};

pub(crate) fn site_key(handle: &str, slug: &str) -> String {
    format!("{handle}/{slug}")
}

impl ServingService {
    /// Drops what is cached about a page (after a change through the API on this replica);
    /// other replicas see the change within [`crate::ServingConfig::policy_ttl`]. The page and
    /// project services call this through [`PageChanges`].
    pub fn forget(&self, page: PageId) {
        self.forget_sites(move |site| site.page.id == page);
    }

    /// Drops the cached sites `stale` picks, every page remembered as unknown (a renamed or
    /// moved page may have been), and every short-link code; the per-thread front caches
    /// notice through the change mark.
    pub(crate) fn forget_sites(&self, stale: impl Fn(&Site) -> bool + Send + Sync + 'static) {
        let micros = self.inner.ports.clock.now().unix_timestamp_nanos() / 1_000;
        self.inner
            .changed
            .store(u64::try_from(micros).unwrap_or(0).max(1), Ordering::Release);
        let dropped = self
            .inner
            .sites
            .invalidate_entries_if(move |_, site| site.as_ref().is_none_or(|s| stale(s)));
        if dropped.is_err() {
            self.inner.sites.invalidate_all();
        }
        self.inner.codes.invalidate_all();
    }

    /// Forgets what is remembered about a dashboard session (after a sign-out on this
    /// replica); other replicas notice within [`ServingConfig::policy_ttl`].
    pub async fn forget_session(&self, id_hash: &str) {
        self.inner.sessions.invalidate(id_hash).await;
    }

    /// Writes the views counted in memory to the store, and settles the view leases of
    /// budgeted pages (returning idle blocks); on failure they stay counted here. Returns
    /// how many views were written.
    ///
    /// # Errors
    /// [`InfraError`] when the store refuses them (they are kept for the next flush).
    pub async fn flush_views(&self) -> Result<u64, InfraError> {
        self.write_views(false).await
    }

    /// [`ServingService::flush_views`] at shutdown: every leased view not served goes back
    /// to its budget.
    ///
    /// # Errors
    /// As [`ServingService::flush_views`].
    pub async fn close_views(&self) -> Result<u64, InfraError> {
        self.write_views(true).await
    }

    /// Settles the view leases that lapsed in the store (their holder died, or could not
    /// renew them): their views join the counts as served. Returns how many views.
    ///
    /// # Errors
    /// [`InfraError`] when the store fails (the rest are settled by the next call).
    pub async fn settle_lapsed_leases(&self) -> Result<u64, InfraError> {
        let now = self.inner.ports.clock.now();
        self.inner.ports.links.settle_lapsed_leases(now).await
    }

    async fn write_views(&self, closing: bool) -> Result<u64, InfraError> {
        let now = self.inner.ports.clock.now();
        let day = now.date();
        let links = self.inner.ports.links.as_ref();
        let leased = self.inner.leases.settle(links, now, closing).await;
        let taken = self.inner.views.take();
        let tallied = if taken.is_empty() {
            Ok(0)
        } else {
            match links.add_views(&taken, day).await {
                Ok(()) => Ok(taken.iter().map(|(_, n)| n).sum()),
                Err(e) => {
                    self.inner.views.restore(&taken);
                    Err(e)
                }
            }
        };
        let notes = self.inner.notes.take();
        if !notes.is_empty()
            && let Err(e) = links.add_visit_notes(&notes, day, now).await
        {
            self.inner.notes.restore(notes);
            return Err(e);
        }
        Ok(leased? + tallied?)
    }

    /// What this thread's front caches may trust now.
    pub(crate) fn freshness(&self) -> Freshness {
        Freshness {
            now: self.inner.ports.clock.now(),
            ttl: self.inner.config.policy_ttl,
            changed_at: match self.inner.changed.load(Ordering::Acquire) {
                0 => None,
                micros => {
                    OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1_000).ok()
                }
            },
        }
    }

    pub(crate) async fn site(
        &self,
        handle: &str,
        slug: &str,
    ) -> Result<Option<Arc<Site>>, InfraError> {
        let freshness = self.freshness();
        if let Some(site) = front_get(self.inner.id, handle, slug, &freshness) {
            count_lookup("serving_pages_front", true);
            return Ok(Some(site));
        }
        count_lookup("serving_pages_front", false);
        let site = self.cached_site(handle, slug).await?;
        // Judged at the time the load ended: a site loaded just now was loaded after `now`.
        let freshness = Freshness {
            now: self.inner.ports.clock.now(),
            ..freshness
        };
        if let Some(site) = &site
            && freshness.trusts(site)
        {
            front_put(self.inner.id, site, &freshness);
        }
        Ok(site)
    }

    pub(crate) async fn cached_site(
        &self,
        handle: &str,
        slug: &str,
    ) -> Result<Option<Arc<Site>>, InfraError> {
        let inner = self.inner.clone();
        let (h, s) = (handle.to_owned(), slug.to_owned());
        self.inner
            .sites
            .try_get_with(site_key(handle, slug), async move {
                inner.load_by_slug(&h, &s).await
            })
            .await
            .map_err(|e| (*e).clone())
    }

    /// The page as stored now, bypassing the cache (password checks see new passwords at once).
    pub(crate) async fn fresh_site(
        &self,
        handle: &str,
        slug: &str,
    ) -> Result<Option<Arc<Site>>, InfraError> {
        let site = self.inner.load_by_slug(handle, slug).await?;
        self.inner
            .sites
            .insert(site_key(handle, slug), site.clone())
            .await;
        Ok(site)
    }

    pub(crate) async fn file(
        &self,
        page: PageId,
        slot: &FileSlot,
    ) -> Result<Arc<CachedFile>, InfraError> {
        if let Some(file) = slot.bytes.get() {
            count_lookup("serving_files", true);
            return Ok(file.clone());
        }
        let entry = &slot.entry;
        if entry.size_bytes > self.inner.config.max_cached_file {
            count_lookup("serving_files", false);
            let bytes = self.inner.load_bytes(page, &entry.sha256).await?;
            return Ok(Arc::new(CachedFile {
                identity: bytes,
                gzip: None,
            }));
        }
        let inner = self.inner.clone();
        let (sha, content_type) = (entry.sha256.clone(), entry.content_type.clone());
        let loaded = Arc::new(AtomicBool::new(false));
        let loading = loaded.clone();
        let file = self
            .inner
            .files
            .try_get_with((page, entry.sha256.clone()), async move {
                loading.store(true, Ordering::Relaxed);
                let identity = inner.load_bytes(page, &sha).await?;
                let gzip = gzip(&content_type, &identity);
                Ok::<_, InfraError>(Arc::new(CachedFile { identity, gzip }))
            })
            .await
            .map_err(|e| (*e).clone())
            .inspect(|file| {
                let _ = slot.bytes.set(file.clone());
            });
        count_lookup("serving_files", !loaded.load(Ordering::Relaxed));
        file
    }
}

impl Inner {
    pub(crate) async fn load_by_slug(
        &self,
        handle: &str,
        slug: &str,
    ) -> Result<Option<Arc<Site>>, InfraError> {
        let Ok(handle) = Handle::parse(handle) else {
            return Ok(None);
        };
        let Some(account) = self.ports.accounts.account_by_handle(&handle).await? else {
            return Ok(None);
        };
        let Some(page) = self.ports.pages.page_by_slug(account, slug).await? else {
            return Ok(None);
        };
        self.assemble(page, handle).await
    }

    pub(crate) async fn load_by_code(&self, code: &str) -> Result<Option<Arc<Site>>, InfraError> {
        let Some(page) = self
            .ports
            .links
            .link_by_code(code)
            .await?
            .and_then(|link| link.page())
        else {
            return Ok(None);
        };
        self.load_by_id(page).await
    }

    pub(crate) async fn load_by_id(&self, id: PageId) -> Result<Option<Arc<Site>>, InfraError> {
        let Some(page) = self.ports.pages.page(id).await? else {
            return Ok(None);
        };
        let Some((handle, _)) = self
            .ports
            .accounts
            .handle_and_email(page.account_id)
            .await?
        else {
            return Ok(None);
        };
        if page.status == PageStatus::Archived {
            return Ok(None);
        }
        self.assemble(page, handle).await
    }

    pub(crate) async fn assemble(
        &self,
        page: Page,
        handle: Handle,
    ) -> Result<Option<Arc<Site>>, InfraError> {
        let Some(link) = self.ports.links.link_of_page(page.id).await? else {
            return Ok(None);
        };
        let files: HashMap<String, FileSlot> = self
            .ports
            .pages
            .files(page.id)
            .await?
            .into_iter()
            .map(|entry| {
                let slot = FileSlot {
                    entry,
                    bytes: std::sync::OnceLock::new(),
                };
                (slot.entry.path.clone(), slot)
            })
            .collect();
        let modified = page.updated_at.unix_timestamp();
        Ok(Some(Arc::new(Site {
            last_modified: (modified, http_date(modified).into()),
            page,
            handle,
            link,
            files,
            spent: std::sync::atomic::AtomicBool::new(false),
            loaded_at: self.ports.clock.now(),
        })))
    }

    pub(crate) async fn load_range(
        &self,
        page: PageId,
        sha: &str,
        range: std::ops::Range<u64>,
    ) -> Result<Bytes, InfraError> {
        self.ports
            .bundles
            .get_range(page, sha, range)
            .await?
            .map(Bytes::from)
            .ok_or_else(|| InfraError::new(format!("page {page}: stored file {sha} is missing")))
    }

    pub(crate) async fn load_bytes(&self, page: PageId, sha: &str) -> Result<Bytes, InfraError> {
        self.ports
            .bundles
            .get(page, sha)
            .await?
            .map(Bytes::from)
            .ok_or_else(|| InfraError::new(format!("page {page}: stored file {sha} is missing")))
    }
}

impl PageChanges for ServingService {
    fn page_changed(&self, page: PageId) {
        self.forget(page);
    }

    fn link_changed(&self, link: LinkId) {
        self.forget_sites(move |site| site.link.id == link);
    }

    fn project_changed(&self, project: ProjectId) {
        self.forget_sites(move |site| site.page.project_id == project);
    }
}
