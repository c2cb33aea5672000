//! Publishing: record (pending, leased) → bundle → link → ready, all or nothing, with a
//! lease renewed while the publish runs.

use std::collections::HashSet;

use quire_kernel::{InfraError, PageId, Principal, offloaded};
use quire_links::{Access, AllowOrder, Link};
use quire_projects::{ProjectAccess, address_project};
use time::OffsetDateTime;

use crate::batch;
use crate::model::{FileData, FileEntry, FileInput, Page, PageStatus};
use crate::ports::{InsertPageError, Readers};
use crate::validate;

use super::{PageError, PageService, PageView, PublishRequest, hash_page_password};

impl PageService {
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
        let valid = req
            .policy
            .validate(
                now,
                self.accounts.as_ref(),
                Access::Private,
                AllowOrder::AfterPassword,
            )
            .await?;
        let database = self
            .check_database(project.account_id, project.id, req.database.as_deref())
            .await?;
        let files = self.check_batch(req.files, &[]).await?;
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
            database,
        };
        self.insert_with_fresh_ids(&mut page, explicit_slug.as_deref(), &manifest)
            .await?;
        let password_hash = match valid.password {
            Some(p) => Some(hash_page_password(self.offload.as_ref(), p).await?),
            None => None,
        };
        let new_link = Link {
            alias: valid.alias,
            password_hash,
            ..Link::of_page(
                page.id,
                page.account_id,
                page.project_id,
                page.public_id.clone(),
                valid.policy,
                now,
            )
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
        if let Err((e, _)) = self.upload(id, files, Readers::NoneYet).await {
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
    pub(super) async fn reclaim(&self, id: PageId) -> bool {
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

    /// `inputs` checked as a batch by [`validate::files`], next to the page's `existing` files.
    /// A large batch is checked on the offload: hashing megabytes would hold the async worker,
    /// and every request it serves, for milliseconds. A small one is checked here, where the
    /// hand-over would cost more than the work.
    pub(super) async fn check_batch(
        &self,
        inputs: Vec<FileInput>,
        existing: &[FileEntry],
    ) -> Result<Vec<FileData>, PageError> {
        let limits = self.config.limits;
        if !batch::is_long_work(&inputs) {
            return Ok(validate::files(inputs, existing, &limits)?);
        }
        let existing = existing.to_vec();
        let checked = offloaded(self.offload.as_ref(), move || {
            validate::files(inputs, &existing, &limits)
        })
        .await?;
        Ok(checked?)
    }

    /// Stores each distinct object of `files` (see [`crate::BundleStore::put_files`]); returns the
    /// hashes written, or the first error with every hash that was written (for undo).
    pub(super) async fn upload(
        &self,
        page: PageId,
        files: Vec<FileData>,
        readers: Readers,
    ) -> Result<Vec<String>, (InfraError, Vec<String>)> {
        let mut seen = HashSet::new();
        let distinct: Vec<FileData> = files
            .into_iter()
            .filter(|f| seen.insert(f.entry.sha256.clone()))
            .collect();
        self.bundles.put_files(page, distinct, readers).await
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
}
