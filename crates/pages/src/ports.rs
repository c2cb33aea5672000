//! Ports of the pages domain.

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use quire_kernel::{AccountId, Email, InfraError, PageId, ProjectId, TimeKey};
use time::OffsetDateTime;

use crate::model::{FileData, FileEntry, Limits, Page, PageDetails, PageStatus};
use crate::validate::LimitKind;

/// Kept beside the page ports they serve: the link's own crate owns them, since URL links
/// resolve allow lists and draw public ids too.
pub use quire_links::{AccountDirectory, PublicIds, RandomPublicIds};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InsertPageError {
    #[error("the owner already has a page with that slug")]
    SlugTaken,
    #[error("public id already in use")]
    PublicIdTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdatePageStoreError {
    #[error("the owner already has a page with that slug")]
    SlugTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Why [`PageStore::put_files`] stored nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PutFilesError {
    /// No ready page has the id: it was deleted (or never was).
    #[error("page not found")]
    NotFound,
    /// With the files in, the page would hold more than a limit allows: `files` files of
    /// `bytes` bytes in all, counted as the write would commit them.
    #[error("the page would pass its {} limit", limit.as_str())]
    TooLarge {
        limit: LimitKind,
        files: u64,
        bytes: u64,
    },
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// A page's file count and size, as its manifest holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageTotals {
    pub file_count: u64,
    pub size_bytes: u64,
}

/// What [`PageStore::replace_files`] committed: the new totals, and the objects the
/// replaced manifest named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplacedFiles {
    pub totals: PageTotals,
    /// SHA-256 of each file of the previous manifest (one per path, so possibly repeated).
    pub previous: Vec<String>,
}

/// Persistence of page records and their file manifests.
///
/// A page is inserted *pending* and becomes visible only once marked ready, so a publish
/// interrupted by a crash never shows. A pending page holds a lease that its publish renews
/// while it runs; once the lease has lapsed the publish is dead, and
/// [`PageStore::stale_pending`] and [`PageStore::lapsed_slug_holder`] find what it left.
#[async_trait]
pub trait PageStore: Send + Sync + std::fmt::Debug {
    /// Stores a pending page, leased until `lease_until`, and its manifest in one
    /// transaction.
    ///
    /// # Errors
    /// MUST return [`InsertPageError::SlugTaken`] when the owner has a page (pending or not)
    /// with the slug, [`InsertPageError::PublicIdTaken`] when the public id is used by any
    /// page or link code; nothing is stored on error.
    async fn insert_pending(
        &self,
        page: &Page,
        files: &[FileEntry],
        lease_until: OffsetDateTime,
    ) -> Result<(), InsertPageError>;

    /// Extends the lease of a pending page; `Ok(false)` when no pending page has the id
    /// (it was reclaimed after its lease lapsed, or is already ready).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn renew_lease(&self, id: PageId, until: OffsetDateTime) -> Result<bool, InfraError>;

    /// Makes a pending page visible and ends its lease.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure, and when no pending page has the id: a publish
    /// whose record was reclaimed MUST NOT go on as if it had succeeded.
    async fn mark_ready(&self, id: PageId) -> Result<(), InfraError>;

    /// Removes the record and its manifest (pending or ready); absent is not an error.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn delete_page(&self, id: PageId) -> Result<(), InfraError>;

    /// A ready page.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; unknown or pending is `Ok(None)`.
    async fn page(&self, id: PageId) -> Result<Option<Page>, InfraError>;

    /// A ready page with its project, its link (allow list in the order shared) and its
    /// owner's handle, read in one query: the API's fetch of a page.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; unknown or pending is `Ok(None)`.
    async fn page_details(&self, id: PageId) -> Result<Option<PageDetails>, InfraError>;

    /// The owner's ready page with this slug (any status).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; unknown or pending is `Ok(None)`.
    async fn page_by_slug(&self, owner: AccountId, slug: &str) -> Result<Option<Page>, InfraError>;

    /// Up to `limit` ready pages of a project with the status, in the list's order: newest
    /// first (`created_at` descending), then by id ascending; with `after`, only the pages
    /// that come strictly after that `(created_at, id)` in this order. Read by keyset
    /// (`WHERE` and `LIMIT` in the query), so a page costs the same wherever it starts.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn project_pages(
        &self,
        project: ProjectId,
        status: PageStatus,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<Page>, InfraError>;

    /// Up to `limit` ready, active pages whose link's allow list names `account` or
    /// `email`, each with when it was first shared with them (its earliest matching allow
    /// entry), most recently shared first, then by page id ascending; with `after`, only
    /// those strictly after that `(shared_at, page id)` in this order.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn shared_pages(
        &self,
        account: AccountId,
        email: Option<&Email>,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<(Page, OffsetDateTime)>, InfraError>;

    /// Replaces the record's fields (matched by id).
    ///
    /// # Errors
    /// MUST return [`UpdatePageStoreError::SlugTaken`] when another page of the owner has
    /// the slug; nothing changes on error.
    async fn update_page(&self, page: &Page) -> Result<(), UpdatePageStoreError>;

    /// The page's manifest, ordered by path.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn files(&self, id: PageId) -> Result<Vec<FileEntry>, InfraError>;

    /// Up to `limit` entries of the page's manifest ordered by path, after the path `after`
    /// when given.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn files_after(
        &self,
        id: PageId,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<FileEntry>, InfraError>;

    /// In one transaction, serialized with every other write to the page's files: upserts
    /// `files` by path into the manifest of the ready page, sets its `updated_at`, and sets
    /// its size and file count to what the manifest then holds, which it returns. The
    /// limits are checked against that manifest, so concurrent calls can never together
    /// pass `limits.max_files` or `limits.max_page_bytes`, and the counters always equal
    /// the files.
    ///
    /// # Errors
    /// MUST return [`PutFilesError::NotFound`] when no ready page has the id (deleted
    /// meanwhile), [`PutFilesError::TooLarge`] when the manifest would pass a limit (files
    /// first, then bytes); [`PutFilesError::Infra`] on storage failure. Nothing changes on
    /// error.
    async fn put_files(
        &self,
        id: PageId,
        files: &[FileEntry],
        limits: &Limits,
        updated_at: OffsetDateTime,
    ) -> Result<PageTotals, PutFilesError>;

    /// In one transaction, serialized with every other write to the page's files as
    /// [`PageStore::put_files`] is: replaces the ready page's whole manifest with `files`,
    /// sets its `updated_at`, size and file count, and returns the totals with the SHA-256
    /// of every file the replaced manifest named (the caller removes the objects no longer
    /// named). The limits are checked as for [`PageStore::put_files`].
    ///
    /// # Errors
    /// As [`PageStore::put_files`]; nothing changes on error.
    async fn replace_files(
        &self,
        id: PageId,
        files: &[FileEntry],
        limits: &Limits,
        updated_at: OffsetDateTime,
    ) -> Result<ReplacedFiles, PutFilesError>;

    /// Pending pages whose lease ended before `now` (dead publishes).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn stale_pending(&self, now: OffsetDateTime) -> Result<Vec<PageId>, InfraError>;

    /// The pending page of `owner` that holds `slug` with a lease that ended before `now`,
    /// if any: a dead publish whose slug a new one may reclaim.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn lapsed_slug_holder(
        &self,
        owner: AccountId,
        slug: &str,
        now: OffsetDateTime,
    ) -> Result<Option<PageId>, InfraError>;

    /// Whether any record (pending or ready) has this id.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn page_exists(&self, id: PageId) -> Result<bool, InfraError>;
}

/// Storage of page files, content-addressed per page: one object per `(page, sha256)`.
#[async_trait]
pub trait BundleStore: Send + Sync + std::fmt::Debug {
    /// Stores `bytes` under `(page, sha256)`; writing the same object twice is harmless.
    ///
    /// # Errors
    /// [`InfraError`] when the object cannot be written (nothing is left half-written under
    /// its name: readers see the old object or the new one).
    async fn put(&self, page: PageId, sha256: &str, bytes: Bytes) -> Result<(), InfraError>;

    /// Stores each of `files` (distinct hashes) under `(page, its SHA-256)`; returns the
    /// hashes written. This default puts [`UPLOAD_CONCURRENCY`](crate::UPLOAD_CONCURRENCY)
    /// at a time with [`BundleStore::put`], whoever may read them.
    ///
    /// # Errors
    /// The first failure, with every hash that was written all the same (for undo). With
    /// [`Readers::Possible`] each object is whole or absent, as with [`BundleStore::put`];
    /// with [`Readers::NoneYet`] an object cut short may stay, partial, under its name until
    /// the page's objects are removed.
    async fn put_files(
        &self,
        page: PageId,
        files: Vec<FileData>,
        _readers: Readers,
    ) -> Result<Vec<String>, (InfraError, Vec<String>)> {
        put_concurrently(self, page, files).await
    }

    /// # Errors
    /// [`InfraError`] on storage failure; a missing object is `Ok(None)`.
    async fn get(&self, page: PageId, sha256: &str) -> Result<Option<Vec<u8>>, InfraError>;

    /// Bytes `range` of one object, which the caller knows to lie within it (a byte-range
    /// answer reads only what it sends). This default reads the whole object.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure, or when the object is shorter than `range`; a
    /// missing object is `Ok(None)`.
    async fn get_range(
        &self,
        page: PageId,
        sha256: &str,
        range: std::ops::Range<u64>,
    ) -> Result<Option<Vec<u8>>, InfraError> {
        let Some(bytes) = self.get(page, sha256).await? else {
            return Ok(None);
        };
        let within = usize::try_from(range.start)
            .ok()
            .zip(usize::try_from(range.end).ok())
            .filter(|(start, end)| start <= end && *end <= bytes.len());
        match within {
            Some((start, end)) => Ok(Some(bytes[start..end].to_vec())),
            None => Err(InfraError::new(format!(
                "page {page}: stored file {sha256} is shorter than the range asked for"
            ))),
        }
    }

    /// Whether the object exists.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn exists(&self, page: PageId, sha256: &str) -> Result<bool, InfraError>;

    /// Removes one object; absent is not an error.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn delete(&self, page: PageId, sha256: &str) -> Result<(), InfraError>;

    /// Removes every object of the page; absent is not an error.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure (some objects may remain).
    async fn delete_page(&self, page: PageId) -> Result<(), InfraError>;

    /// Pages that have at least one object (for sweeping orphans).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn pages(&self) -> Result<Vec<PageId>, InfraError>;

    /// Removes what interrupted writes left behind and no listing shows (temporary objects
    /// last written more than `older_than` ago, emptied page folders); returns how many
    /// entries went. A backend without such leftovers returns `Ok(0)`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn sweep_leftovers(&self, older_than: Duration) -> Result<usize, InfraError>;

    /// Marks objects of `page` that its manifest stopped naming at `at` (a replace, or an
    /// add-files that gave a path new content). They stay readable until the janitor
    /// removes them ([`BundleStore::retired`]): a backup that read the manifest before the
    /// change still finds them. Marking an object twice is harmless.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; some objects may be marked.
    async fn retire(
        &self,
        page: PageId,
        hashes: &[String],
        at: OffsetDateTime,
    ) -> Result<(), InfraError>;

    /// The marks [`BundleStore::retire`] made before `before`, one per mark.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn retired(&self, before: OffsetDateTime) -> Result<Vec<Retired>, InfraError>;

    /// Removes a mark, and first its object when `remove_object` (the janitor found no
    /// manifest naming it again); a missing object or mark is not an error.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; the mark stays when the object could not go.
    async fn forget_retired(&self, mark: &Retired, remove_object: bool) -> Result<(), InfraError>;
}

/// An object of a page that its manifest stopped naming, and when ([`BundleStore::retire`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retired {
    pub page: PageId,
    pub sha256: String,
    pub at: OffsetDateTime,
}

/// Whether anyone may read the objects [`BundleStore::put_files`] writes while it writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readers {
    /// No visitor and no API call asks for these objects until they are all written: the
    /// page is pending (a publish), or its manifest does not name them yet (add-files, which
    /// names them only afterwards). Each may be written in place. A name that already exists
    /// is replaced whole, so a reader of an object by that name, or a partial object a crash
    /// left there, never meets a half-written one. A write cut short by a crash leaves a
    /// partial object no manifest names: removed with the page (a publish's undo, the
    /// janitor once its lease lapses, or the page's deletion).
    NoneYet,
    /// Readers may ask for the objects while they are written: each must appear whole or not
    /// at all.
    Possible,
}

/// [`BundleStore::put_files`] by [`BundleStore::put`], [`UPLOAD_CONCURRENCY`](crate::UPLOAD_CONCURRENCY)
/// files at a time.
///
/// # Errors
/// As [`BundleStore::put_files`].
pub async fn put_concurrently<S: BundleStore + ?Sized>(
    store: &S,
    page: PageId,
    files: Vec<FileData>,
) -> Result<Vec<String>, (InfraError, Vec<String>)> {
    use futures_util::StreamExt;
    let results: Vec<(String, Result<(), InfraError>)> =
        futures_util::stream::iter(files.into_iter().map(|f| async move {
            let r = store.put(page, &f.entry.sha256, f.bytes().clone()).await;
            (f.entry.sha256, r)
        }))
        .buffer_unordered(crate::UPLOAD_CONCURRENCY)
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

/// Publishes remembered by the request id their caller gave, for a day
/// ([`REQUEST_MEMORY`](crate::REQUEST_MEMORY)), so a retried publish (an agent whose answer
/// was lost) is answered with the page the first one made instead of a slug conflict. Kept
/// in the database: a retry may reach another replica.
#[async_trait]
pub trait PublishRequests: Send + Sync + std::fmt::Debug {
    /// The page `caller`'s publish `request_id` made at or after `since`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn recall(
        &self,
        caller: &str,
        request_id: &str,
        since: OffsetDateTime,
    ) -> Result<Option<PageId>, InfraError>;

    /// Remembers that `caller`'s publish `request_id` made `page`; an id already remembered
    /// keeps the page it named first (whose publish committed first).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn remember(
        &self,
        caller: &str,
        request_id: &str,
        page: PageId,
        at: OffsetDateTime,
    ) -> Result<(), InfraError>;

    /// Forgets what was remembered before `before`; how many went.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn forget_before(&self, before: OffsetDateTime) -> Result<u64, InfraError>;
}

/// The databases a page may name (`database` at publish and patch).
#[async_trait]
pub trait PageDatabases: Send + Sync + std::fmt::Debug {
    /// Whether `slug` names a ready database of `account` in `project`.
    ///
    /// # Errors
    /// Storage failures.
    async fn may_name(
        &self,
        account: AccountId,
        project: ProjectId,
        slug: &str,
    ) -> Result<bool, InfraError>;
}

/// No database service: a page can name no database.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoDatabases;

#[async_trait]
impl PageDatabases for NoDatabases {
    async fn may_name(&self, _: AccountId, _: ProjectId, _: &str) -> Result<bool, InfraError> {
        Ok(false)
    }
}
