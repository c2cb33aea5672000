//! The lists: a project's pages, a page's files and the pages shared with the caller, each
//! whole or a page at a time (keyset paging, `quire_kernel::paging`). A whole list is read
//! from the store in pages of [`MAX_LIMIT`] too, so no read holds more than that many rows,
//! and a surface that writes each chunk out as it comes ([`PageLister`]) holds no more than
//! one chunk's pages at once.

use std::collections::HashMap;

use quire_kernel::paging::{MAX_LIMIT, encode_cursor};
use quire_kernel::{AccountId, Handle, NameKey, PageId, Paged, Paging, Principal, TimeKey};
use quire_projects::{Project, ProjectAccess, address_project};

use super::{PageError, PageService, PageView};
use crate::model::{FileEntry, PageStatus, SharedPage};

/// The list tag of a project's pages in cursors ([`PageService::list_page`]).
pub const PAGES_LIST: &str = "pages";
/// The list tag of the pages shared with the caller ([`PageService::shared_page`]).
pub const SHARED_LIST: &str = "shared";
/// The list tag of a page's files ([`PageService::files_page`]).
pub const FILES_LIST: &str = "files";

fn page_key(view: &PageView) -> TimeKey {
    TimeKey {
        at: view.page.created_at,
        id: view.page.id.0,
    }
}

/// A project's pages with one status, read a chunk at a time in the list's order (newest
/// first, then by id): what a surface uses to write a whole list out without holding it.
#[derive(Debug)]
pub struct PageLister {
    service: PageService,
    project: Project,
    status: PageStatus,
    handle: Handle,
    next: Option<Paging<TimeKey>>,
}

impl PageLister {
    /// The addressed project.
    #[must_use]
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// The next chunk of at most `MAX_LIMIT` pages; `None` once the list is done.
    ///
    /// # Errors
    /// `Infra`.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<PageView>>, PageError> {
        let Some(paging) = self.next.take() else {
            return Ok(None);
        };
        let mut chunk = self
            .service
            .read_pages(&self.project, self.status, &self.handle, &paging)
            .await?;
        if chunk.len() > paging.limit as usize {
            chunk.truncate(paging.limit as usize);
            self.next = Some(Paging {
                limit: paging.limit,
                after: chunk.last().map(page_key),
            });
        }
        Ok(Some(chunk))
    }
}

impl PageService {
    async fn page_scope(
        &self,
        principal: &Principal,
        project: Option<&str>,
        status: Option<&str>,
    ) -> Result<(Project, PageStatus, Handle), PageError> {
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
        let (handle, _) = self.owner(project.account_id).await?;
        Ok((project, status, handle))
    }

    /// Up to `paging.fetch()` pages after `paging.after`, with their links.
    async fn read_pages(
        &self,
        project: &Project,
        status: PageStatus,
        handle: &Handle,
        paging: &Paging<TimeKey>,
    ) -> Result<Vec<PageView>, PageError> {
        let pages = self
            .pages
            .project_pages(project.id, status, paging.after.as_ref(), paging.fetch())
            .await?;
        let ids: Vec<PageId> = pages.iter().map(|p| p.id).collect();
        let mut links = self.links_by_page(&ids).await?;
        Ok(pages
            .into_iter()
            .map(|p| {
                let link = links.remove(&p.id);
                self.view(p, link, handle, project.slug.clone())
            })
            .collect())
    }

    /// The pages of the addressed project with the status (default `active`), a chunk at a
    /// time: see [`PageLister`].
    ///
    /// # Errors
    /// `InsufficientScope`, `Invalid` (status filter), `Infra`.
    pub async fn page_lister(
        &self,
        principal: &Principal,
        project: Option<&str>,
        status: Option<&str>,
    ) -> Result<PageLister, PageError> {
        let (project, status, handle) = self.page_scope(principal, project, status).await?;
        Ok(PageLister {
            service: self.clone(),
            project,
            status,
            handle,
            next: Some(Paging::first(MAX_LIMIT)),
        })
    }

    /// Ready pages of the addressed project with the status (default `active`), newest
    /// first: the whole list.
    ///
    /// # Errors
    /// `InsufficientScope`, `Invalid` (status filter), `Infra`.
    pub async fn list(
        &self,
        principal: &Principal,
        project: Option<&str>,
        status: Option<&str>,
    ) -> Result<(quire_kernel::ProjectSlug, Vec<PageView>), PageError> {
        let mut lister = self.page_lister(principal, project, status).await?;
        let mut all = Vec::new();
        while let Some(chunk) = lister.next_chunk().await? {
            all.extend(chunk);
        }
        Ok((lister.project.slug, all))
    }

    /// One page of [`PageService::list`]: at most `paging.limit` pages after the cursor's
    /// position, and the cursor of the next page when more remain (list tag
    /// [`PAGES_LIST`]). Pages published while a client pages through come before the first
    /// page (newest first), so they never push others across a page boundary.
    ///
    /// # Errors
    /// `InsufficientScope`, `Invalid` (status filter), `Infra`.
    pub async fn list_page(
        &self,
        principal: &Principal,
        project: Option<&str>,
        status: Option<&str>,
        paging: &Paging<TimeKey>,
    ) -> Result<(quire_kernel::ProjectSlug, Paged<PageView>), PageError> {
        let (project, status, handle) = self.page_scope(principal, project, status).await?;
        let views = self.read_pages(&project, status, &handle, paging).await?;
        Ok((
            project.slug,
            Paged::from_fetched(PAGES_LIST, paging, views, page_key),
        ))
    }

    /// The page's manifest, ordered by path.
    ///
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

    /// One page of [`PageService::files`] (list tag [`FILES_LIST`]).
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Infra`.
    pub async fn files_page(
        &self,
        principal: &Principal,
        id: PageId,
        paging: &Paging<NameKey>,
    ) -> Result<Paged<FileEntry>, PageError> {
        let (page, _) = self.reachable(principal, id, ProjectAccess::Read).await?;
        let files = self
            .pages
            .files_after(
                page.id,
                paging.after.as_ref().map(|k| k.0.as_str()),
                paging.fetch(),
            )
            .await?;
        Ok(Paged::from_fetched(FILES_LIST, paging, files, |f| {
            NameKey(f.path.clone())
        }))
    }

    /// At most `paging.limit` pages shared with the principal after `paging.after`, and the
    /// position the next page starts after when more remain.
    async fn read_shared(
        &self,
        principal: &Principal,
        paging: &Paging<TimeKey>,
        handles: &mut HashMap<AccountId, Handle>,
    ) -> Result<(Vec<SharedPage>, Option<TimeKey>), PageError> {
        let email = self
            .accounts
            .handle_and_email(principal.account_id)
            .await?
            .map(|(_, e)| e);
        let mut shared = self
            .pages
            .shared_pages(
                principal.account_id,
                email.as_ref(),
                paging.after.as_ref(),
                paging.fetch(),
            )
            .await?;
        let next = if shared.len() > paging.limit as usize {
            shared.truncate(paging.limit as usize);
            shared.last().map(|(p, at)| TimeKey {
                at: *at,
                id: p.id.0,
            })
        } else {
            None
        };
        let ids: Vec<PageId> = shared.iter().map(|(p, _)| p.id).collect();
        let mut links = self.links_by_page(&ids).await?;
        let mut out = Vec::with_capacity(shared.len());
        for (page, shared_at) in shared {
            // A page is shared through its link's allow list, so it has one; a page deleted
            // between the two reads is left out.
            let Some(link) = links.remove(&page.id) else {
                continue;
            };
            let owner = match handles.get(&page.account_id) {
                Some(h) => h.clone(),
                None => {
                    let h = self.owner(page.account_id).await?.0;
                    handles.insert(page.account_id, h.clone());
                    h
                }
            };
            out.push(SharedPage {
                owner_handle: owner.to_string(),
                shared_at,
                link,
                page,
            });
        }
        Ok((out, next))
    }

    /// Pages whose allow list names the caller's account or email (archived pages
    /// excluded), most recently shared first: the whole list.
    ///
    /// # Errors
    /// `Infra`.
    pub async fn shared_with(&self, principal: &Principal) -> Result<Vec<SharedPage>, PageError> {
        let mut handles = HashMap::new();
        let mut all = Vec::new();
        let mut paging = Paging::first(MAX_LIMIT);
        loop {
            let (chunk, next) = self.read_shared(principal, &paging, &mut handles).await?;
            all.extend(chunk);
            match next {
                Some(after) => paging.after = Some(after),
                None => return Ok(all),
            }
        }
    }

    /// One page of [`PageService::shared_with`] (list tag [`SHARED_LIST`]).
    ///
    /// # Errors
    /// `Infra`.
    pub async fn shared_page(
        &self,
        principal: &Principal,
        paging: &Paging<TimeKey>,
    ) -> Result<Paged<SharedPage>, PageError> {
        let (items, next) = self
            .read_shared(principal, paging, &mut HashMap::new())
            .await?;
        Ok(Paged {
            items,
            next_cursor: next.map(|k| encode_cursor(SHARED_LIST, &k)),
        })
    }
}
