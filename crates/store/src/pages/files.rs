//! A page's manifest rows, and inserting many of them in a few statements on each backend.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::PageId;
use quire_pages::FileEntry;

use crate::schema::page_files;
use crate::types::DbId;

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = page_files)]
pub(crate) struct FileRow {
    pub(crate) page_id: DbId,
    pub(crate) path: String,
    pub(crate) size_bytes: i64,
    pub(crate) content_type: String,
    pub(crate) sha256: String,
}

impl FileRow {
    pub(crate) fn new(page: PageId, f: &FileEntry) -> Self {
        Self {
            page_id: DbId(page.0),
            path: f.path.clone(),
            size_bytes: i64::try_from(f.size_bytes).unwrap_or(i64::MAX),
            content_type: f.content_type.clone(),
            sha256: f.sha256.clone(),
        }
    }
}

/// Slices of path lists, so no statement exceeds a backend's bind-parameter limit.
pub(crate) const FILE_ROWS_PER_INSERT: usize = 2_000;

/// Manifest rows per multi-row `INSERT` on SQLite: five bound values each, far below the
/// 32,766 variables the bundled SQLite allows in one statement.
const SQLITE_FILE_ROWS_PER_INSERT: usize = 1_000;

/// Inserting many manifest rows in a few statements, inside the caller's transaction: on
/// PostgreSQL diesel's batch insert, one per slice; on SQLite, where diesel-async cannot
/// express a batch insert, a multi-row `INSERT` written here with bound values, one per
/// [`SQLITE_FILE_ROWS_PER_INSERT`] rows.
#[async_trait]
pub(crate) trait InsertFileRows {
    async fn insert_file_rows(&mut self, rows: &[FileRow]) -> diesel::QueryResult<()>;
}

#[async_trait]
impl InsertFileRows for diesel_async::AsyncPgConnection {
    async fn insert_file_rows(&mut self, rows: &[FileRow]) -> diesel::QueryResult<()> {
        for chunk in rows.chunks(FILE_ROWS_PER_INSERT) {
            diesel::insert_into(page_files::table)
                .values(chunk)
                .execute(self)
                .await?;
        }
        Ok(())
    }
}

#[async_trait]
impl InsertFileRows for crate::db::SqliteConn {
    async fn insert_file_rows(&mut self, rows: &[FileRow]) -> diesel::QueryResult<()> {
        use diesel::sql_types::{BigInt, Text};
        for chunk in rows.chunks(SQLITE_FILE_ROWS_PER_INSERT) {
            let values = vec!["(?, ?, ?, ?, ?)"; chunk.len()].join(", ");
            let mut insert = diesel::sql_query(format!(
                "INSERT INTO page_files (page_id, path, size_bytes, content_type, sha256) \
                 VALUES {values}"
            ))
            .into_boxed::<diesel::sqlite::Sqlite>();
            for row in chunk {
                insert = insert
                    .bind::<crate::types::sql::DbUuid, _>(row.page_id)
                    .bind::<Text, _>(&row.path)
                    .bind::<BigInt, _>(row.size_bytes)
                    .bind::<Text, _>(&row.content_type)
                    .bind::<Text, _>(&row.sha256);
            }
            insert.execute(self).await?;
        }
        Ok(())
    }
}
