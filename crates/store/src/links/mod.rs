//! Links: `LinkStore` (here) with links of every kind, their codes and allow lists; the
//! counts (`counts`) and the view leases of budgeted links (`view_leases`).

mod counts;
mod view_leases;

use std::collections::HashMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{AccountId, Email, InfraError, LeaseId, LinkId, ObjectId, PageId, ProjectId};
use quire_links::{
    Access, AllowEntry, Link, LinkStats, LinkStore, LinkWriteError, Policy, RedirectStatus, Target,
    VisitNotes,
};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::db::{Database, with_conn, with_tx};
use crate::error::{StoreError, infra};
use crate::schema::{link_allow, link_codes, links};
use crate::types::{DbId, DbTs};

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = links)]
pub(crate) struct LinkRow {
    id: DbId,
    target_kind: String,
    target_id: Option<DbId>,
    target_url: Option<String>,
    account_id: DbId,
    project_id: DbId,
    public_id: String,
    alias: Option<String>,
    title: Option<String>,
    access: String,
    password_hash: Option<String>,
    expires_at: Option<DbTs>,
    max_views: Option<i64>,
    view_count: i64,
    archived_at: Option<DbTs>,
    expired_url: Option<String>,
    redirect_status: i32,
    last_viewed_at: Option<DbTs>,
    created_at: DbTs,
    updated_at: DbTs,
}

/// The stored kind of a page's link.
pub(crate) const PAGE_KIND: &str = "page";
/// The stored kind of a URL link.
pub(crate) const URL_KIND: &str = "url";
/// The stored kind of an object's link.
pub(crate) const OBJECT_KIND: &str = "object";

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = link_allow)]
pub(crate) struct AllowRow {
    id: DbId,
    link_id: DbId,
    account_id: Option<DbId>,
    email: Option<String>,
    created_at: DbTs,
}

pub(crate) fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl LinkRow {
    fn from_link(l: &Link) -> Self {
        let (target_id, target_url) = match &l.target {
            Target::Page(page) => (Some(DbId(page.0)), None),
            Target::Object(object) => (Some(DbId(object.0)), None),
            Target::Url(url) => (None, Some(url.clone())),
        };
        Self {
            id: DbId(l.id.0),
            target_kind: l.target.kind().to_owned(),
            target_id,
            target_url,
            account_id: DbId(l.account_id.0),
            project_id: DbId(l.project_id.0),
            public_id: l.public_id.clone(),
            alias: l.alias.clone(),
            title: l.title.clone(),
            access: l.policy.access.as_str().to_owned(),
            password_hash: l.password_hash.clone(),
            expires_at: l.policy.expires_at.map(DbTs),
            max_views: l.policy.max_views.map(to_i64),
            view_count: to_i64(l.view_count),
            archived_at: l.archived_at.map(DbTs),
            expired_url: l.expired_url.clone(),
            redirect_status: i32::from(l.redirect.code()),
            last_viewed_at: l.last_viewed_at.map(DbTs),
            created_at: DbTs(l.created_at),
            updated_at: DbTs(l.updated_at),
        }
    }
}

/// The allow rows of a link: an entry in `shared_since` keeps that time, any other is
/// shared as of `now`.
fn allow_rows(
    l: &Link,
    shared_since: &HashMap<(Option<DbId>, Option<String>), DbTs>,
    now: OffsetDateTime,
) -> Vec<AllowRow> {
    l.policy
        .allow
        .iter()
        .map(|entry| {
            let (account_id, email) = match entry {
                AllowEntry::Account(a) => (Some(DbId(a.0)), None),
                AllowEntry::Email(e) => (None, Some(e.as_str().to_owned())),
            };
            let created_at = shared_since
                .get(&(account_id, email.clone()))
                .copied()
                .unwrap_or(DbTs(now));
            AllowRow {
                id: DbId(Uuid::new_v4()),
                link_id: DbId(l.id.0),
                account_id,
                email,
                created_at,
            }
        })
        .collect()
}

pub(crate) fn assemble(row: LinkRow, allow: Vec<AllowRow>) -> Result<Link, StoreError> {
    let corrupt = |what: &str| StoreError::Corrupt(format!("link {}: {what}", row.id.0));
    let allow = allow
        .into_iter()
        .map(|a| {
            let entry = match (a.account_id, a.email) {
                (Some(id), _) => AllowEntry::Account(AccountId(id.0)),
                (None, Some(e)) => AllowEntry::Email(Email::stored(&e)),
                (None, None) => return Err(corrupt("empty allow entry")),
            };
            Ok(entry)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let target = match (row.target_kind.as_str(), row.target_id, row.target_url) {
        (PAGE_KIND, Some(page), None) => Target::Page(PageId(page.0)),
        (OBJECT_KIND, Some(object), None) => Target::Object(ObjectId(object.0)),
        (URL_KIND, None, Some(url)) => Target::Url(url),
        _ => return Err(corrupt("target")),
    };
    Ok(Link {
        id: LinkId(row.id.0),
        target,
        account_id: AccountId(row.account_id.0),
        project_id: ProjectId(row.project_id.0),
        policy: Policy {
            access: Access::parse(&row.access).ok_or_else(|| corrupt("access"))?,
            expires_at: row.expires_at.map(|t| t.0),
            max_views: row.max_views.and_then(|n| u64::try_from(n).ok()),
            allow,
        },
        public_id: row.public_id,
        alias: row.alias,
        title: row.title,
        password_hash: row.password_hash,
        view_count: u64::try_from(row.view_count).unwrap_or(0),
        expired_url: row.expired_url,
        redirect: RedirectStatus::from_code(i128::from(row.redirect_status))
            .ok_or_else(|| corrupt("redirect status"))?,
        archived_at: row.archived_at.map(|t| t.0),
        last_viewed_at: row.last_viewed_at.map(|t| t.0),
        created_at: row.created_at.0,
        updated_at: row.updated_at.0,
    })
}

fn write_error(e: StoreError) -> LinkWriteError {
    if e.is_unique_violation("link_codes_pkey", "link_codes.code") {
        LinkWriteError::CodeTaken
    } else {
        LinkWriteError::Infra(e.into())
    }
}

/// Which links to load.
enum Pick {
    /// The links of these pages.
    Pages(Vec<DbId>),
    Ids(Vec<DbId>),
    /// A project's URL links, archived or not, newest first.
    Urls {
        project: DbId,
        archived: bool,
    },
}

impl Database {
    async fn load_links(&self, pick: Pick) -> Result<Vec<Link>, InfraError> {
        if matches!(&pick, Pick::Pages(ids) | Pick::Ids(ids) if ids.is_empty()) {
            return Ok(Vec::new());
        }
        let (rows, allow): (Vec<LinkRow>, Vec<AllowRow>) = with_conn!(self, |conn| {
            let rows: Vec<LinkRow> = match &pick {
                Pick::Pages(pages) => {
                    links::table
                        .filter(links::target_kind.eq(PAGE_KIND))
                        .filter(links::target_id.eq_any(pages))
                        .select(LinkRow::as_select())
                        .load(conn)
                        .await?
                }
                Pick::Ids(ids) => {
                    links::table
                        .filter(links::id.eq_any(ids))
                        .select(LinkRow::as_select())
                        .load(conn)
                        .await?
                }
                Pick::Urls { project, archived } => {
                    let listed = links::table
                        .filter(links::project_id.eq(*project))
                        .filter(links::target_kind.eq(URL_KIND))
                        .order((links::created_at.desc(), links::id.desc()))
                        .select(LinkRow::as_select());
                    if *archived {
                        listed
                            .filter(links::archived_at.is_not_null())
                            .load(conn)
                            .await?
                    } else {
                        listed
                            .filter(links::archived_at.is_null())
                            .load(conn)
                            .await?
                    }
                }
            };
            let ids: Vec<DbId> = rows.iter().map(|r| r.id).collect();
            let allow: Vec<AllowRow> = link_allow::table
                .filter(link_allow::link_id.eq_any(&ids))
                .order(link_allow::created_at.asc())
                .select(AllowRow::as_select())
                .load(conn)
                .await?;
            Ok((rows, allow))
        })
        .map_err(infra)?;
        let mut by_link: HashMap<DbId, Vec<AllowRow>> = HashMap::new();
        for a in allow {
            by_link.entry(a.link_id).or_default().push(a);
        }
        rows.into_iter()
            .map(|r| {
                let allow = by_link.remove(&r.id).unwrap_or_default();
                assemble(r, allow)
            })
            .collect::<Result<_, _>>()
            .map_err(infra)
    }
}

#[async_trait]
impl LinkStore for Database {
    async fn insert_link(&self, link: &Link) -> Result<(), LinkWriteError> {
        let row = LinkRow::from_link(link);
        let allow = allow_rows(link, &HashMap::new(), link.created_at);
        let mut codes = vec![link.public_id.clone()];
        codes.extend(link.alias.clone());
        with_tx!(self, |conn| {
            diesel::insert_into(links::table)
                .values(&row)
                .execute(conn)
                .await?;
            for code in &codes {
                diesel::insert_into(link_codes::table)
                    .values((link_codes::code.eq(code), link_codes::link_id.eq(row.id)))
                    .execute(conn)
                    .await?;
            }
            for a in &allow {
                diesel::insert_into(link_allow::table)
                    .values(a)
                    .execute(conn)
                    .await?;
            }
            Ok(())
        })
        .map_err(write_error)
    }

    async fn update_link(&self, link: &Link) -> Result<(), LinkWriteError> {
        let row = LinkRow::from_link(link);
        let link = link.clone();
        with_tx!(self, |conn| {
            diesel::update(links::table.find(row.id))
                .set((
                    links::target_url.eq(&row.target_url),
                    links::title.eq(&row.title),
                    links::expired_url.eq(&row.expired_url),
                    links::redirect_status.eq(row.redirect_status),
                    links::archived_at.eq(row.archived_at),
                    links::alias.eq(&row.alias),
                    links::access.eq(&row.access),
                    links::password_hash.eq(&row.password_hash),
                    links::expires_at.eq(row.expires_at),
                    links::max_views.eq(row.max_views),
                    links::updated_at.eq(row.updated_at),
                ))
                .execute(conn)
                .await?;
            // The public id stays a code; the alias code is replaced.
            diesel::delete(
                link_codes::table
                    .filter(link_codes::link_id.eq(row.id))
                    .filter(link_codes::code.ne(&row.public_id)),
            )
            .execute(conn)
            .await?;
            if let Some(alias) = &row.alias {
                diesel::insert_into(link_codes::table)
                    .values((link_codes::code.eq(alias), link_codes::link_id.eq(row.id)))
                    .execute(conn)
                    .await?;
            }
            let shared_since: HashMap<(Option<DbId>, Option<String>), DbTs> = link_allow::table
                .filter(link_allow::link_id.eq(row.id))
                .select((
                    link_allow::account_id,
                    link_allow::email,
                    link_allow::created_at,
                ))
                .load::<(Option<DbId>, Option<String>, DbTs)>(conn)
                .await?
                .into_iter()
                .map(|(account, email, at)| ((account, email), at))
                .collect();
            let allow = allow_rows(&link, &shared_since, link.updated_at);
            diesel::delete(link_allow::table.filter(link_allow::link_id.eq(row.id)))
                .execute(conn)
                .await?;
            for a in &allow {
                diesel::insert_into(link_allow::table)
                    .values(a)
                    .execute(conn)
                    .await?;
            }
            Ok(())
        })
        .map_err(write_error)
    }

    async fn link(&self, id: LinkId) -> Result<Option<Link>, InfraError> {
        Ok(self.load_links(Pick::Ids(vec![DbId(id.0)])).await?.pop())
    }

    async fn url_links(&self, project: ProjectId, archived: bool) -> Result<Vec<Link>, InfraError> {
        self.load_links(Pick::Urls {
            project: DbId(project.0),
            archived,
        })
        .await
    }

    async fn link_of_page(&self, page: PageId) -> Result<Option<Link>, InfraError> {
        Ok(self
            .load_links(Pick::Pages(vec![DbId(page.0)]))
            .await?
            .pop())
    }

    async fn links_of_pages(&self, pages: &[PageId]) -> Result<Vec<Link>, InfraError> {
        self.load_links(Pick::Pages(pages.iter().map(|p| DbId(p.0)).collect()))
            .await
    }

    async fn link_by_code(&self, code: &str) -> Result<Option<Link>, InfraError> {
        let code = code.to_owned();
        let link: Option<DbId> = with_conn!(self, |conn| {
            Ok(link_codes::table
                .filter(link_codes::code.eq(&code))
                .select(link_codes::link_id)
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        match link {
            Some(link) => Ok(self.load_links(Pick::Ids(vec![link])).await?.pop()),
            None => Ok(None),
        }
    }

    async fn lease_views(
        &self,
        link: LinkId,
        lease: LeaseId,
        first: bool,
        want: u64,
        until: OffsetDateTime,
    ) -> Result<Option<u64>, InfraError> {
        self.take_view_lease(link, lease, first, want, until).await
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
        self.settle_view_lease(link, lease, used, returned, day, until)
            .await
    }

    async fn settle_lapsed_leases(&self, now: OffsetDateTime) -> Result<u64, InfraError> {
        self.settle_lapsed_view_leases(now).await
    }

    async fn add_views(&self, counts: &[(LinkId, u64)], day: Date) -> Result<(), InfraError> {
        self.add_link_views(counts, day).await
    }

    async fn daily_views(&self, link: LinkId, since: Date) -> Result<Vec<(Date, u64)>, InfraError> {
        self.link_daily_views(link, since).await
    }

    async fn add_visit_notes(
        &self,
        notes: &[VisitNotes],
        day: Date,
        now: OffsetDateTime,
    ) -> Result<(), InfraError> {
        self.add_link_visit_notes(notes, day, now).await
    }

    async fn link_stats(
        &self,
        link: LinkId,
        from: Date,
        to: Date,
    ) -> Result<LinkStats, InfraError> {
        self.read_link_stats(link, from, to).await
    }

    async fn delete_link(&self, id: LinkId) -> Result<bool, InfraError> {
        with_conn!(self, |conn| {
            let gone = diesel::delete(links::table.find(DbId(id.0)))
                .execute(conn)
                .await?;
            Ok(gone == 1)
        })
        .map_err(infra)
    }

    async fn delete_link_of_page(&self, page: PageId) -> Result<(), InfraError> {
        with_conn!(self, |conn| {
            diesel::delete(
                links::table
                    .filter(links::target_kind.eq(PAGE_KIND))
                    .filter(links::target_id.eq(DbId(page.0))),
            )
            .execute(conn)
            .await?;
            Ok(())
        })
        .map_err(infra)
    }
}
