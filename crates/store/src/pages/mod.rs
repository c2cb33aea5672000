//! Pages: `PageStore` (here) with its leased write (`crate::leased`), a page's details in
//! one query (`details`), its manifest rows (`files`), the keyset lists (`lists`) and the
//! `PublishRequests` ledger (`publish_requests`).

mod details;
mod files;
mod lists;
mod publish_requests;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{AccountId, Email, InfraError, PageId, ProjectId, TimeKey};
use quire_pages::validate::LimitKind;
use quire_pages::{
    FileEntry, InsertPageError, Limits, Page, PageDetails, PageStatus, PageStore, PageTotals,
    PutFilesError, ReplacedFiles, UpdatePageStoreError,
};
use time::OffsetDateTime;

use crate::db::{Database, with_conn, with_tx};
use crate::error::{Outcome, StoreError, infra};
use crate::leased::{Leased, PENDING, READY, Refusal, claim_names, claim_slug, leased_table};
use crate::pages::files::{FILE_ROWS_PER_INSERT, FileRow, InsertFileRows};
use crate::schema::{page_files, pages};
use crate::types::{DbId, DbTs};

leased_table!(pages, row: PageRow, record: Page);

#[derive(Debug, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = pages)]
#[diesel(treat_none_as_null = true)]
pub(crate) struct PageRow {
    id: DbId,
    public_id: String,
    account_id: DbId,
    project_id: DbId,
    slug: String,
    title: String,
    entrypoint: String,
    status: String,
    state: String,
    size_bytes: i64,
    file_count: i64,
    created_at: DbTs,
    updated_at: DbTs,
    archived_at: Option<DbTs>,
    lease_until: Option<DbTs>,
    database_slug: Option<String>,
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(crate) fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl PageRow {
    fn from_page(p: &Page, state: &str, lease_until: Option<OffsetDateTime>) -> Self {
        Self {
            id: DbId(p.id.0),
            public_id: p.public_id.clone(),
            account_id: DbId(p.account_id.0),
            project_id: DbId(p.project_id.0),
            slug: p.slug.clone(),
            title: p.title.clone(),
            entrypoint: p.entrypoint.clone(),
            status: p.status.as_str().to_owned(),
            state: state.to_owned(),
            size_bytes: to_i64(p.size_bytes),
            file_count: to_i64(p.file_count),
            created_at: DbTs(p.created_at),
            updated_at: DbTs(p.updated_at),
            archived_at: p.archived_at.map(DbTs),
            lease_until: lease_until.map(DbTs),
            database_slug: p.database.clone(),
        }
    }
}

impl TryFrom<PageRow> for Page {
    type Error = StoreError;
    fn try_from(r: PageRow) -> Result<Self, StoreError> {
        Ok(Page {
            id: PageId(r.id.0),
            status: PageStatus::parse(&r.status)
                .ok_or_else(|| StoreError::Corrupt(format!("page {}: status", r.id.0)))?,
            public_id: r.public_id,
            account_id: AccountId(r.account_id.0),
            project_id: ProjectId(r.project_id.0),
            slug: r.slug,
            title: r.title,
            entrypoint: r.entrypoint,
            size_bytes: to_u64(r.size_bytes),
            file_count: to_u64(r.file_count),
            created_at: r.created_at.0,
            updated_at: r.updated_at.0,
            archived_at: r.archived_at.map(|t| t.0),
            database: r.database_slug,
        })
    }
}

#[async_trait]
impl PageStore for Database {
    async fn insert_pending(
        &self,
        page: &Page,
        files: &[FileEntry],
        lease_until: OffsetDateTime,
    ) -> Result<(), InsertPageError> {
        let row = PageRow::from_page(page, PENDING, Some(lease_until));
        let file_rows: Vec<FileRow> = files.iter().map(|f| FileRow::new(page.id, f)).collect();
        let result = with_tx!(self, |conn| {
            claim_names!(conn, row.account_id, &row.slug, &row.public_id, objects);
            diesel::insert_into(pages::table)
                .values(&row)
                .execute(conn)
                .await?;
            conn.insert_file_rows(&file_rows).await?;
            Ok(())
        });
        result.map_err(|e| match pages::table::refusal(&e) {
            Some(Refusal::PublicIdTaken) => InsertPageError::PublicIdTaken,
            Some(Refusal::SlugTaken) => InsertPageError::SlugTaken,
            None => InsertPageError::Infra(e.into()),
        })
    }

    async fn renew_lease(&self, id: PageId, until: OffsetDateTime) -> Result<bool, InfraError> {
        pages::table::renew_lease(self, DbId(id.0), until).await
    }

    async fn mark_ready(&self, id: PageId) -> Result<(), InfraError> {
        if !pages::table::mark_ready(self, DbId(id.0), ()).await? {
            return Err(InfraError::new(format!(
                "page {}: no pending record to mark ready (its lease lapsed)",
                id.0
            )));
        }
        Ok(())
    }

    async fn delete_page(&self, id: PageId) -> Result<(), InfraError> {
        pages::table::delete(self, DbId(id.0)).await
    }

    async fn page(&self, id: PageId) -> Result<Option<Page>, InfraError> {
        pages::table::ready(self, DbId(id.0)).await
    }

    async fn page_details(&self, id: PageId) -> Result<Option<PageDetails>, InfraError> {
        crate::pages::details::page_details(self, id).await
    }

    async fn page_by_slug(&self, owner: AccountId, slug: &str) -> Result<Option<Page>, InfraError> {
        pages::table::ready_by_slug(self, DbId(owner.0), slug).await
    }

    async fn project_pages(
        &self,
        project: ProjectId,
        status: PageStatus,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<Page>, InfraError> {
        crate::pages::lists::project_pages(self, project, status, after, limit).await
    }

    async fn shared_pages(
        &self,
        account: AccountId,
        email: Option<&Email>,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<(Page, OffsetDateTime)>, InfraError> {
        crate::pages::lists::shared_pages(self, account, email, after, limit).await
    }

    async fn update_page(&self, page: &Page) -> Result<(), UpdatePageStoreError> {
        let row = PageRow::from_page(page, READY, None);
        with_tx!(self, |conn| {
            claim_slug!(conn, row.account_id, &row.slug, objects);
            diesel::update(pages::table.find(row.id))
                .set((
                    pages::slug.eq(&row.slug),
                    pages::title.eq(&row.title),
                    pages::status.eq(&row.status),
                    pages::updated_at.eq(row.updated_at),
                    pages::archived_at.eq(row.archived_at),
                    pages::database_slug.eq(&row.database_slug),
                ))
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(|e| match pages::table::refusal(&e) {
            Some(Refusal::SlugTaken) => UpdatePageStoreError::SlugTaken,
            _ => UpdatePageStoreError::Infra(e.into()),
        })
    }

    async fn files(&self, id: PageId) -> Result<Vec<FileEntry>, InfraError> {
        let rows: Vec<FileRow> = with_conn!(self, |conn| {
            Ok(page_files::table
                .filter(page_files::page_id.eq(DbId(id.0)))
                .order(page_files::path.asc())
                .select(FileRow::as_select())
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        Ok(rows
            .into_iter()
            .map(|r| FileEntry {
                path: r.path,
                size_bytes: to_u64(r.size_bytes),
                content_type: r.content_type,
                sha256: r.sha256,
            })
            .collect())
    }

    async fn files_after(
        &self,
        id: PageId,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<FileEntry>, InfraError> {
        crate::pages::lists::files_after(self, id, after, limit).await
    }

    async fn put_files(
        &self,
        id: PageId,
        files: &[FileEntry],
        limits: &Limits,
        updated_at: OffsetDateTime,
    ) -> Result<PageTotals, PutFilesError> {
        self.write_manifest(id, files, ManifestWrite::Upsert, limits, updated_at)
            .await
            .map(|(totals, _)| totals)
    }

    async fn replace_files(
        &self,
        id: PageId,
        files: &[FileEntry],
        limits: &Limits,
        updated_at: OffsetDateTime,
    ) -> Result<ReplacedFiles, PutFilesError> {
        self.write_manifest(id, files, ManifestWrite::Replace, limits, updated_at)
            .await
            .map(|(totals, previous)| ReplacedFiles { totals, previous })
    }

    async fn stale_pending(&self, now: OffsetDateTime) -> Result<Vec<PageId>, InfraError> {
        let ids = pages::table::stale_pending(self, now).await?;
        Ok(ids.into_iter().map(|i| PageId(i.0)).collect())
    }

    async fn lapsed_slug_holder(
        &self,
        owner: AccountId,
        slug: &str,
        now: OffsetDateTime,
    ) -> Result<Option<PageId>, InfraError> {
        let id = pages::table::lapsed_slug_holder(self, DbId(owner.0), slug, now).await?;
        Ok(id.map(|i| PageId(i.0)))
    }

    async fn page_exists(&self, id: PageId) -> Result<bool, InfraError> {
        pages::table::exists(self, DbId(id.0)).await
    }
}

/// How a manifest write treats the files already listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ManifestWrite {
    /// Files are upserted by path; the others stay.
    Upsert,
    /// The whole manifest is swapped for the files.
    Replace,
}

impl Database {
    /// `put_files` and `replace_files`: one transaction that holds the page row, changes the
    /// manifest, checks the limits against what it then holds and sets the totals. Returns
    /// the totals and, for a replace, the SHA-256 of each file it replaced.
    async fn write_manifest(
        &self,
        id: PageId,
        files: &[FileEntry],
        mode: ManifestWrite,
        limits: &Limits,
        updated_at: OffsetDateTime,
    ) -> Result<(PageTotals, Vec<String>), PutFilesError> {
        let rows: Vec<FileRow> = files.iter().map(|f| FileRow::new(id, f)).collect();
        let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
        let (max_files, max_bytes) = (
            to_i64(limits.max_files as u64),
            to_i64(limits.max_page_bytes),
        );
        let result = with_tx!(self, |db, conn| {
            // First write the page row: it holds every other write to the page's files back
            // until this one commits (a row lock on PostgreSQL; SQLite's transaction is
            // immediate), so the manifest counted below is the one that commits. No row:
            // the page was deleted.
            let found =
                diesel::update(pages::table.find(DbId(id.0)).filter(pages::state.eq(READY)))
                    .set(pages::updated_at.eq(DbTs(updated_at)))
                    .execute(conn)
                    .await?;
            if found == 0 {
                return Err(StoreError::Outcome(Outcome::PageGone));
            }
            let mut previous = Vec::new();
            match mode {
                ManifestWrite::Upsert => {
                    for chunk in paths.chunks(FILE_ROWS_PER_INSERT) {
                        diesel::delete(
                            page_files::table
                                .filter(page_files::page_id.eq(DbId(id.0)))
                                .filter(page_files::path.eq_any(chunk)),
                        )
                        .execute(conn)
                        .await?;
                    }
                    db.checkpoint("put_files:replaced")?;
                }
                ManifestWrite::Replace => {
                    previous = page_files::table
                        .filter(page_files::page_id.eq(DbId(id.0)))
                        .select(page_files::sha256)
                        .load::<String>(conn)
                        .await?;
                    diesel::delete(page_files::table.filter(page_files::page_id.eq(DbId(id.0))))
                        .execute(conn)
                        .await?;
                    db.checkpoint("replace_files:cleared")?;
                }
            }
            conn.insert_file_rows(&rows).await?;
            db.checkpoint("write_manifest:inserted")?;
            let (count, bytes): (i64, i64) = page_files::table
                .filter(page_files::page_id.eq(DbId(id.0)))
                .select((
                    diesel::dsl::count_star(),
                    diesel::dsl::sql::<diesel::sql_types::BigInt>(
                        "CAST(COALESCE(SUM(size_bytes), 0) AS BIGINT)",
                    ),
                ))
                .first(conn)
                .await?;
            if count > max_files {
                return Err(StoreError::Outcome(Outcome::TooManyFiles(count, bytes)));
            }
            if bytes > max_bytes {
                return Err(StoreError::Outcome(Outcome::PageTooLarge(count, bytes)));
            }
            diesel::update(pages::table.find(DbId(id.0)))
                .set((pages::size_bytes.eq(bytes), pages::file_count.eq(count)))
                .execute(conn)
                .await?;
            Ok((
                PageTotals {
                    file_count: to_u64(count),
                    size_bytes: to_u64(bytes),
                },
                previous,
            ))
        });
        result.map_err(|e| match e {
            StoreError::Outcome(Outcome::PageGone) => PutFilesError::NotFound,
            StoreError::Outcome(Outcome::TooManyFiles(files, bytes)) => PutFilesError::TooLarge {
                limit: LimitKind::Files,
                files: to_u64(files),
                bytes: to_u64(bytes),
            },
            StoreError::Outcome(Outcome::PageTooLarge(files, bytes)) => PutFilesError::TooLarge {
                limit: LimitKind::PageSize,
                files: to_u64(files),
                bytes: to_u64(bytes),
            },
            e => PutFilesError::Infra(e.into()),
        })
    }
}
