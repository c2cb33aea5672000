//! The API's fetch of a page: the page, its project, its owner's handle and its link with
//! the allow list, in one query on both backends.
//!
//! The link and its allow entries are left-joined, so the query returns one row per allow
//! entry (one row when there are none); the page, project and link columns repeat on each.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{Handle, InfraError, PageId};
use quire_pages::{Page, PageDetails};
use quire_projects::Project;

use crate::db::{Database, with_conn};
use crate::error::{StoreError, infra};
use crate::leased::READY;
use crate::links::{AllowRow, LinkRow, assemble};
use crate::pages::PageRow;
use crate::platform::projects::ProjectRow;
use crate::schema::{accounts, link_allow, links, pages, projects};
use crate::types::DbId;

type DetailRow = (
    PageRow,
    ProjectRow,
    String,
    Option<LinkRow>,
    Option<AllowRow>,
);

pub(crate) async fn page_details(
    db: &Database,
    id: PageId,
) -> Result<Option<PageDetails>, InfraError> {
    let rows: Vec<DetailRow> = with_conn!(db, |conn| {
        Ok(pages::table
            .inner_join(projects::table.on(projects::id.eq(pages::project_id)))
            .inner_join(accounts::table.on(accounts::id.eq(pages::account_id)))
            .left_join(
                links::table.on(links::target_kind
                    .eq(crate::links::PAGE_KIND)
                    .and(links::target_id.eq(pages::id.nullable()))),
            )
            .left_join(link_allow::table.on(link_allow::link_id.eq(links::id)))
            .filter(pages::id.eq(DbId(id.0)))
            .filter(pages::state.eq(READY))
            .order(link_allow::created_at.asc())
            .select((
                PageRow::as_select(),
                ProjectRow::as_select(),
                accounts::handle,
                Option::<LinkRow>::as_select(),
                Option::<AllowRow>::as_select(),
            ))
            .load(conn)
            .await?)
    })
    .map_err(infra)?;
    assemble_details(id, rows).map_err(infra)
}

fn assemble_details(id: PageId, rows: Vec<DetailRow>) -> Result<Option<PageDetails>, StoreError> {
    let mut rows = rows.into_iter();
    let Some((page, project, handle, link, first_allow)) = rows.next() else {
        return Ok(None);
    };
    let allow: Vec<AllowRow> = first_allow
        .into_iter()
        .chain(rows.filter_map(|(.., allow)| allow))
        .collect();
    let owner = Handle::parse(&handle)
        .map_err(|_| StoreError::Corrupt(format!("owner of page {}: handle", id.0)))?;
    Ok(Some(PageDetails {
        link: link.map(|l| assemble(l, allow)).transpose()?,
        project: Project::try_from(project)?,
        page: Page::try_from(page)?,
        owner,
    }))
}
