//! Changing a published page: its record and link (patch), or its files (add files,
//! replace files).

use std::collections::{HashMap, HashSet};

use quire_kernel::{InfraError, PageId, Principal};
use quire_projects::ProjectAccess;

use crate::batch;
use crate::model::{FileData, FileEntry, FileInput, PageStatus};
use crate::ports::{PutFilesError, Readers, UpdatePageStoreError};
use crate::validate::{self, LimitKind};

use super::{FilesAdded, PageError, PageService, PageView, PatchRequest, hash_page_password};

impl PageService {
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
        if let Some(database) = &req.database {
            page.database = self
                .check_database(page.account_id, page.project_id, database.as_deref())
                .await?;
        }
        let password = req
            .policy
            .apply(&mut link, now, self.accounts.as_ref())
            .await?;
        if let Some(p) = password {
            link.password_hash = Some(hash_page_password(self.offload.as_ref(), p).await?);
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

    /// Adds (or replaces, by path) files of a page.
    ///
    /// # Errors
    /// `NotFound` (also when the page is deleted meanwhile), `InsufficientScope`, `Invalid`,
    /// `TooLarge` (also when concurrent additions filled the page meanwhile), `Infra`; on any
    /// error the page's files are listed and stored exactly as before.
    pub async fn add_files(
        &self,
        principal: &Principal,
        id: PageId,
        inputs: Vec<FileInput>,
    ) -> Result<FilesAdded, PageError> {
        let (page, _) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let existing = self.pages.files(page.id).await?;
        let batch = self.check_batch(inputs, &existing).await?;
        let (new_entries, uploaded) = self.upload_new_objects(page.id, batch, &existing).await?;
        // The store checks the limits again against the manifest as it commits: requests
        // that validated against the same files must not pass them together.
        let totals = match self
            .pages
            .put_files(page.id, &new_entries, &self.config.limits, self.clock.now())
            .await
        {
            Ok(totals) => totals,
            Err(e) => {
                self.remove_objects(page.id, &uploaded).await;
                return Err(self.manifest_refusal(e));
            }
        };
        // Objects no path refers to any more (replaced content) go once a backup under way
        // has had time to copy them.
        let stored: HashSet<String> = existing.iter().map(|e| e.sha256.clone()).collect();
        let mut manifest: HashMap<String, FileEntry> =
            existing.into_iter().map(|e| (e.path.clone(), e)).collect();
        for e in &new_entries {
            manifest.insert(e.path.clone(), e.clone());
        }
        let referenced: HashSet<&str> = manifest.values().map(|e| e.sha256.as_str()).collect();
        let unreferenced: Vec<String> = stored
            .iter()
            .filter(|s| !referenced.contains(s.as_str()))
            .cloned()
            .collect();
        self.retire_objects(page.id, &unreferenced).await;
        self.changes.page_changed(page.id);
        Ok(FilesAdded {
            id: page.id,
            file_count: totals.file_count,
            size_bytes: totals.size_bytes,
        })
    }

    /// Replaces a page's whole file set: the new objects are stored first (the manifest
    /// names none of them yet, so visitors keep getting the old files), then one
    /// transaction swaps the manifest, then the objects only the old manifest named are
    /// retired (the janitor removes them later). The page keeps its id, slug, link, policy, counts and entrypoint, which
    /// must be among the new files; an archived page may be given new files and stays
    /// archived.
    ///
    /// # Errors
    /// `NotFound` (also when the page is deleted meanwhile), `InsufficientScope`, `Invalid`,
    /// `TooLarge`, `Infra`; on any error the page's files are listed, stored and served
    /// exactly as before, and the objects this call stored are removed.
    pub async fn replace_files(
        &self,
        principal: &Principal,
        id: PageId,
        inputs: Vec<FileInput>,
    ) -> Result<FilesAdded, PageError> {
        let (page, _) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let batch = self.check_batch(inputs, &[]).await?;
        if !batch.iter().any(|f| f.entry.path == page.entrypoint) {
            return Err(PageError::Invalid(format!(
                "entrypoint {} is not among the files; the page keeps its entrypoint",
                validate::quoted(&page.entrypoint)
            )));
        }
        let existing = self.pages.files(page.id).await?;
        let (new_entries, uploaded) = self.upload_new_objects(page.id, batch, &existing).await?;
        let replaced = match self
            .pages
            .replace_files(page.id, &new_entries, &self.config.limits, self.clock.now())
            .await
        {
            Ok(replaced) => replaced,
            Err(e) => {
                self.remove_objects(page.id, &uploaded).await;
                return Err(self.manifest_refusal(e));
            }
        };
        // Drop what the serving caches hold before the old objects go, so no visitor is
        // sent to an object that is being removed.
        self.changes.page_changed(page.id);
        let kept: HashSet<&str> = new_entries.iter().map(|e| e.sha256.as_str()).collect();
        let mut unreferenced: Vec<String> = replaced
            .previous
            .into_iter()
            .filter(|s| !kept.contains(s.as_str()))
            .collect();
        unreferenced.sort_unstable();
        unreferenced.dedup();
        self.retire_objects(page.id, &unreferenced).await;
        Ok(FilesAdded {
            id: page.id,
            file_count: replaced.totals.file_count,
            size_bytes: replaced.totals.size_bytes,
        })
    }

    /// The refusal of a manifest write the store turned down.
    fn manifest_refusal(&self, e: PutFilesError) -> PageError {
        match e {
            PutFilesError::NotFound => PageError::NotFound,
            PutFilesError::TooLarge {
                limit: LimitKind::Files,
                files,
                ..
            } => batch::too_many_files(&self.config.limits, files).into(),
            PutFilesError::TooLarge { .. } => batch::page_too_large(&self.config.limits).into(),
            PutFilesError::Infra(e) => PageError::Infra(e),
        }
    }

    /// Writes the objects of `batch` that `existing` does not already hold (objects are
    /// content-addressed), and answers the batch's entries with the objects it wrote. The
    /// manifest names none of these objects yet, and will only once every one is whole, so
    /// nobody reads them while they are written; on a failure the ones written are removed.
    async fn upload_new_objects(
        &self,
        page: PageId,
        batch: Vec<FileData>,
        existing: &[FileEntry],
    ) -> Result<(Vec<FileEntry>, Vec<String>), PageError> {
        let stored: HashSet<&str> = existing.iter().map(|e| e.sha256.as_str()).collect();
        let entries: Vec<FileEntry> = batch.iter().map(|f| f.entry.clone()).collect();
        let to_upload: Vec<FileData> = batch
            .into_iter()
            .filter(|f| !stored.contains(f.entry.sha256.as_str()))
            .collect();
        match self.upload(page, to_upload, Readers::NoneYet).await {
            Ok(written) => Ok((entries, written)),
            Err((e, written)) => {
                self.remove_objects(page, &written).await;
                Err(e.into())
            }
        }
    }

    pub(super) async fn remove_objects(&self, page: PageId, hashes: &[String]) {
        for h in hashes {
            let _ = self.bundles.delete(page, h).await;
        }
    }
}
