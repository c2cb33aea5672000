//! Page details held in memory for [`PAGE_READ_TTL`], in front of the page store: the API's
//! fetch of a page reads nothing from the database while its details are fresh here.
//!
//! It decorates both stores the page details come from. Every write through this replica is
//! seen at once: the page and link writes drop the page they touch (views this replica
//! settles included, found through the link's page), and the change listeners (told by the
//! page and project services after each committed write) drop the page, or everything for a
//! link or a project. A change made through another replica, views included, is seen within
//! [`PAGE_READ_TTL`]. Only pages that exist are held, so guessing ids fills nothing. Every
//! other read and write goes to the store as is.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use quire_kernel::{
    AccountId, Clock, Email, InfraError, LeaseId, LinkId, PageChanges, PageId, ProjectId, TimeKey,
};
use quire_links::{Link, LinkStats, LinkStore, LinkWriteError, VisitNotes};
use quire_pages::{
    FileEntry, InsertPageError, Limits, Page, PageDetails, PageStatus, PageStore, PageTotals,
    PutFilesError, ReplacedFiles, UpdatePageStoreError,
};
use time::{Date, OffsetDateTime};

use crate::ClockCache;

/// How long a page's details are trusted: the longest a change made on another replica
/// takes to show in the API's fetch of a page here.
pub const PAGE_READ_TTL: Duration = Duration::from_secs(1);

/// Most pages held at once.
const CAPACITY: u64 = 10_000;

/// The page and link stores, with the API's fetch of a page cached.
#[derive(Debug)]
pub struct CachedPageStore {
    store: Arc<dyn PageStore>,
    links: Arc<dyn LinkStore>,
    details: ClockCache<PageId, PageDetails>,
    /// The page of each held page's link, so a link's views drop the right page.
    page_of_link: Mutex<HashMap<LinkId, PageId>>,
}

impl CachedPageStore {
    /// Page details from `store` and `links`, each trusted for [`PAGE_READ_TTL`] by `clock`.
    #[must_use]
    pub fn new(
        store: Arc<dyn PageStore>,
        links: Arc<dyn LinkStore>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            store,
            links,
            details: ClockCache::with_invalidation_closures(CAPACITY, PAGE_READ_TTL, clock)
                .named("api_pages"),
            page_of_link: Mutex::new(HashMap::new()),
        }
    }

    fn page_of_link(&self) -> MutexGuard<'_, HashMap<LinkId, PageId>> {
        self.page_of_link
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn remember(&self, details: &PageDetails) {
        if let Some(link) = &details.link {
            let mut index = self.page_of_link();
            // Bounded like the cache; forgetting the index means forgetting the pages too.
            if index.len() as u64 >= 2 * CAPACITY {
                index.clear();
                self.details.invalidate_all();
            }
            index.insert(link.id, details.page.id);
        }
    }

    async fn forget_link(&self, link: LinkId) {
        let page = self.page_of_link().get(&link).copied();
        if let Some(page) = page {
            self.details.invalidate(&page).await;
        }
    }

    /// Drops the page before and after `write`, so a fetch that read the old row while the
    /// write ran does not outlive it. (One that reads before the write commits and stores
    /// after the second drop can still hold the old details until the TTL; the TTL is the
    /// bound, as for another replica's writes.)
    async fn around<T>(&self, page: PageId, write: impl Future<Output = T>) -> T {
        self.details.invalidate(&page).await;
        let done = write.await;
        self.details.invalidate(&page).await;
        done
    }
}

#[async_trait]
impl PageStore for CachedPageStore {
    async fn insert_pending(
        &self,
        page: &Page,
        files: &[FileEntry],
        lease_until: OffsetDateTime,
    ) -> Result<(), InsertPageError> {
        self.store.insert_pending(page, files, lease_until).await
    }

    async fn renew_lease(&self, id: PageId, until: OffsetDateTime) -> Result<bool, InfraError> {
        self.store.renew_lease(id, until).await
    }

    async fn mark_ready(&self, id: PageId) -> Result<(), InfraError> {
        self.around(id, self.store.mark_ready(id)).await
    }

    async fn delete_page(&self, id: PageId) -> Result<(), InfraError> {
        self.around(id, self.store.delete_page(id)).await
    }

    async fn page(&self, id: PageId) -> Result<Option<Page>, InfraError> {
        self.store.page(id).await
    }

    async fn page_details(&self, id: PageId) -> Result<Option<PageDetails>, InfraError> {
        if let Some(details) = self.details.get(&id).await {
            return Ok(Some(details));
        }
        let found = self.store.page_details(id).await?;
        if let Some(details) = &found {
            self.remember(details);
            self.details.insert(id, details.clone()).await;
        }
        Ok(found)
    }

    async fn page_by_slug(&self, owner: AccountId, slug: &str) -> Result<Option<Page>, InfraError> {
        self.store.page_by_slug(owner, slug).await
    }

    async fn project_pages(
        &self,
        project: ProjectId,
        status: PageStatus,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<Page>, InfraError> {
        self.store
            .project_pages(project, status, after, limit)
            .await
    }

    async fn shared_pages(
        &self,
        account: AccountId,
        email: Option<&Email>,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<(Page, OffsetDateTime)>, InfraError> {
        self.store.shared_pages(account, email, after, limit).await
    }

    async fn update_page(&self, page: &Page) -> Result<(), UpdatePageStoreError> {
        self.around(page.id, self.store.update_page(page)).await
    }

    async fn files(&self, id: PageId) -> Result<Vec<FileEntry>, InfraError> {
        self.store.files(id).await
    }

    async fn files_after(
        &self,
        id: PageId,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<FileEntry>, InfraError> {
        self.store.files_after(id, after, limit).await
    }

    async fn put_files(
        &self,
        id: PageId,
        files: &[FileEntry],
        limits: &Limits,
        updated_at: OffsetDateTime,
    ) -> Result<PageTotals, PutFilesError> {
        self.around(id, self.store.put_files(id, files, limits, updated_at))
            .await
    }

    async fn replace_files(
        &self,
        id: PageId,
        files: &[FileEntry],
        limits: &Limits,
        updated_at: OffsetDateTime,
    ) -> Result<ReplacedFiles, PutFilesError> {
        self.around(id, self.store.replace_files(id, files, limits, updated_at))
            .await
    }

    async fn stale_pending(&self, now: OffsetDateTime) -> Result<Vec<PageId>, InfraError> {
        self.store.stale_pending(now).await
    }

    async fn lapsed_slug_holder(
        &self,
        owner: AccountId,
        slug: &str,
        now: OffsetDateTime,
    ) -> Result<Option<PageId>, InfraError> {
        self.store.lapsed_slug_holder(owner, slug, now).await
    }

    async fn page_exists(&self, id: PageId) -> Result<bool, InfraError> {
        self.store.page_exists(id).await
    }
}

#[async_trait]
impl LinkStore for CachedPageStore {
    async fn insert_link(&self, link: &Link) -> Result<(), LinkWriteError> {
        match link.page() {
            Some(page) => self.around(page, self.links.insert_link(link)).await,
            None => self.links.insert_link(link).await,
        }
    }

    async fn update_link(&self, link: &Link) -> Result<(), LinkWriteError> {
        match link.page() {
            Some(page) => self.around(page, self.links.update_link(link)).await,
            None => self.links.update_link(link).await,
        }
    }

    async fn link(&self, id: LinkId) -> Result<Option<Link>, InfraError> {
        self.links.link(id).await
    }

    async fn url_links(&self, project: ProjectId, archived: bool) -> Result<Vec<Link>, InfraError> {
        self.links.url_links(project, archived).await
    }

    async fn link_of_page(&self, page: PageId) -> Result<Option<Link>, InfraError> {
        self.links.link_of_page(page).await
    }

    async fn links_of_pages(&self, pages: &[PageId]) -> Result<Vec<Link>, InfraError> {
        self.links.links_of_pages(pages).await
    }

    async fn link_by_code(&self, code: &str) -> Result<Option<Link>, InfraError> {
        self.links.link_by_code(code).await
    }

    async fn lease_views(
        &self,
        link: LinkId,
        lease: LeaseId,
        first: bool,
        want: u64,
        until: OffsetDateTime,
    ) -> Result<Option<u64>, InfraError> {
        self.links
            .lease_views(link, lease, first, want, until)
            .await
    }

    async fn settle_lease(
        &self,
        link: LinkId,
        lease: LeaseId,
        used: u64,
        returned: u64,
        day: Date,
        until: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        let settled = self
            .links
            .settle_lease(link, lease, used, returned, day, until)
            .await;
        self.forget_link(link).await;
        settled
    }

    /// Any page's count may have changed: everything is dropped (a sweep is rare).
    async fn settle_lapsed_leases(&self, now: OffsetDateTime) -> Result<u64, InfraError> {
        let settled = self.links.settle_lapsed_leases(now).await;
        if settled.as_ref().is_ok_and(|n| *n > 0) {
            self.details.invalidate_all();
        }
        settled
    }

    async fn add_views(&self, counts: &[(LinkId, u64)], day: Date) -> Result<(), InfraError> {
        let added = self.links.add_views(counts, day).await;
        for (link, _) in counts {
            self.forget_link(*link).await;
        }
        added
    }

    async fn daily_views(&self, link: LinkId, since: Date) -> Result<Vec<(Date, u64)>, InfraError> {
        self.links.daily_views(link, since).await
    }

    async fn add_visit_notes(
        &self,
        notes: &[VisitNotes],
        day: Date,
        now: OffsetDateTime,
    ) -> Result<(), InfraError> {
        self.links.add_visit_notes(notes, day, now).await
    }

    async fn link_stats(
        &self,
        link: LinkId,
        from: Date,
        to: Date,
    ) -> Result<LinkStats, InfraError> {
        self.links.link_stats(link, from, to).await
    }

    async fn delete_link(&self, id: LinkId) -> Result<bool, InfraError> {
        self.links.delete_link(id).await
    }

    async fn delete_link_of_page(&self, page: PageId) -> Result<(), InfraError> {
        self.around(page, self.links.delete_link_of_page(page))
            .await
    }
}

/// A page's link, allow list or project changed (the services tell after each commit).
/// Links and projects are not keyed here, and change rarely: everything goes.
impl PageChanges for CachedPageStore {
    fn page_changed(&self, page: PageId) {
        // A predicate applies to every read from now on (the sweep behind it is lazy).
        if self
            .details
            .invalidate_entries_if(move |id, _| *id == page)
            .is_err()
        {
            self.details.invalidate_all();
        }
    }
    fn link_changed(&self, _: LinkId) {
        self.details.invalidate_all();
    }
    fn project_changed(&self, _: ProjectId) {
        self.details.invalidate_all();
    }
}
