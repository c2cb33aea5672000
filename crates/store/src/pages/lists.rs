//! The page lists read by keyset on both backends: a project's pages (newest first, then by
//! id), the pages shared with an account (most recently shared first, then by page id) and
//! a page's files (by path). Each query resumes strictly after the last key of the previous
//! page (`WHERE`) and reads at most `limit` rows (`LIMIT`), so a page of a long list costs
//! what the first page does and nothing is sliced in memory.
//!
//! Ids compare the same on both backends: PostgreSQL's `uuid` by its bytes, SQLite's
//! lowercase hyphenated text by its characters, which is the same order.

use diesel::dsl::min;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{AccountId, Email, InfraError, PageId, ProjectId, TimeKey};
use quire_pages::{FileEntry, Page, PageStatus};
use time::OffsetDateTime;

use crate::db::{Database, with_conn};
use crate::error::infra;
use crate::leased::{Leased, READY};
use crate::pages::files::FileRow;
use crate::pages::{PageRow, to_u64};
use crate::schema::{link_allow, links, page_files, pages};
use crate::types::{DbId, DbTs};

fn limit_of(limit: u32) -> i64 {
    i64::from(limit)
}

pub(crate) async fn project_pages(
    db: &Database,
    project: ProjectId,
    status: PageStatus,
    after: Option<&TimeKey>,
    limit: u32,
) -> Result<Vec<Page>, InfraError> {
    let status = status.as_str();
    let after = after.map(|k| (DbTs(k.at), DbId(k.id)));
    let rows: Vec<PageRow> = with_conn!(db, |conn| {
        let listed = pages::table
            .filter(pages::project_id.eq(DbId(project.0)))
            .filter(pages::state.eq(READY))
            .filter(pages::status.eq(status))
            .order((pages::created_at.desc(), pages::id.asc()))
            .limit(limit_of(limit))
            .select(PageRow::as_select());
        Ok(match after {
            None => listed.load(conn).await?,
            Some((at, id)) => {
                listed
                    .filter(
                        pages::created_at
                            .lt(at)
                            .or(pages::created_at.eq(at).and(pages::id.gt(id))),
                    )
                    .load(conn)
                    .await?
            }
        })
    })
    .map_err(infra)?;
    pages::table::records(rows)
}

pub(crate) async fn shared_pages(
    db: &Database,
    account: AccountId,
    email: Option<&Email>,
    after: Option<&TimeKey>,
    limit: u32,
) -> Result<Vec<(Page, OffsetDateTime)>, InfraError> {
    // No stored email is empty, so without an email only the account matches.
    let email = email.map_or_else(String::new, |e| e.as_str().to_owned());
    let after = after.map(|k| (DbTs(k.at), DbId(k.id)));
    let rows: Vec<(PageRow, Option<DbTs>)> = with_conn!(db, |conn| {
        let shared_at = min(link_allow::created_at);
        let listed = pages::table
            .inner_join(
                links::table.on(links::target_kind
                    .eq(crate::links::PAGE_KIND)
                    .and(links::target_id.eq(pages::id.nullable()))),
            )
            .inner_join(link_allow::table.on(link_allow::link_id.eq(links::id)))
            .filter(pages::state.eq(READY))
            .filter(pages::status.eq(PageStatus::Active.as_str()))
            .filter(
                link_allow::account_id
                    .eq(DbId(account.0))
                    .or(link_allow::email.eq(&email)),
            )
            .group_by(pages::id)
            .order((shared_at.desc(), pages::id.asc()))
            .limit(limit_of(limit))
            .select((PageRow::as_select(), shared_at));
        Ok(match after {
            None => listed.load(conn).await?,
            Some((at, id)) => {
                listed
                    .having(shared_at.lt(at).or(shared_at.eq(at).and(pages::id.gt(id))))
                    .load(conn)
                    .await?
            }
        })
    })
    .map_err(infra)?;
    let (rows, times): (Vec<PageRow>, Vec<Option<DbTs>>) = rows.into_iter().unzip();
    Ok(pages::table::records(rows)?
        .into_iter()
        .zip(times)
        .filter_map(|(page, at)| at.map(|at| (page, at.0)))
        .collect())
}

pub(crate) async fn files_after(
    db: &Database,
    id: PageId,
    after: Option<&str>,
    limit: u32,
) -> Result<Vec<FileEntry>, InfraError> {
    let after = after.map(str::to_owned);
    let rows: Vec<FileRow> = with_conn!(db, |conn| {
        let listed = page_files::table
            .filter(page_files::page_id.eq(DbId(id.0)))
            .order(page_files::path.asc())
            .limit(limit_of(limit))
            .select(FileRow::as_select());
        Ok(match &after {
            None => listed.load(conn).await?,
            Some(path) => listed.filter(page_files::path.gt(path)).load(conn).await?,
        })
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
