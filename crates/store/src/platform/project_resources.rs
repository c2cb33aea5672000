//! A page of one kind of a project's resources, read by keyset on both backends (the
//! `ProjectStore::resources_after` port method).

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{InfraError, ProjectId, TimeKey};
use quire_projects::{ResourceEntry, ResourceType};

use crate::db::{Database, with_conn};
use crate::error::infra;
use crate::links::URL_KIND;
use crate::platform::databases::READY as DATABASE_READY;
use crate::schema::{api_keys, databases, links, objects, pages};
use crate::types::{DbId, DbTs};

/// A resource row: id, name, creation time.
type Row = (DbId, String, DbTs);

fn entry((id, name, created): Row) -> ResourceEntry {
    ResourceEntry {
        id: id.0,
        name,
        created_at: created.0,
    }
}

impl Database {
    /// Up to `limit` resources of `kind` in `project`, oldest first with ties by id,
    /// strictly after `after`.
    pub(crate) async fn resources_of_kind_after(
        &self,
        project: ProjectId,
        kind: ResourceType,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<ResourceEntry>, InfraError> {
        let after = after.map(|k| (DbTs(k.at), DbId(k.id)));
        let limit = i64::from(limit);
        let p = DbId(project.0);
        let rows: Vec<Row> = match kind {
            ResourceType::Page => with_conn!(self, |conn| {
                let listed = pages::table
                    .filter(pages::project_id.eq(p))
                    .filter(pages::state.eq("ready"))
                    .order((pages::created_at.asc(), pages::id.asc()))
                    .limit(limit)
                    .select((pages::id, pages::title, pages::created_at));
                Ok(match after {
                    None => listed.load(conn).await?,
                    Some((at, id)) => {
                        listed
                            .filter(
                                pages::created_at
                                    .gt(at)
                                    .or(pages::created_at.eq(at).and(pages::id.gt(id))),
                            )
                            .load(conn)
                            .await?
                    }
                })
            }),
            ResourceType::Link => with_conn!(self, |conn| {
                let listed = links::table
                    .filter(links::project_id.eq(p))
                    .filter(links::target_kind.eq(URL_KIND))
                    .order((links::created_at.asc(), links::id.asc()))
                    .limit(limit)
                    .select((links::id, links::public_id, links::alias, links::created_at));
                let rows: Vec<(DbId, String, Option<String>, DbTs)> = match after {
                    None => listed.load(conn).await?,
                    Some((at, id)) => {
                        listed
                            .filter(
                                links::created_at
                                    .gt(at)
                                    .or(links::created_at.eq(at).and(links::id.gt(id))),
                            )
                            .load(conn)
                            .await?
                    }
                };
                Ok(rows
                    .into_iter()
                    .map(|(id, public_id, alias, at)| (id, alias.unwrap_or(public_id), at))
                    .collect())
            }),
            ResourceType::Key => with_conn!(self, |conn| {
                let listed = api_keys::table
                    .filter(api_keys::project_id.eq(p))
                    .filter(api_keys::revoked_at.is_null())
                    .order((api_keys::created_at.asc(), api_keys::id.asc()))
                    .limit(limit)
                    .select((api_keys::id, api_keys::name, api_keys::created_at));
                Ok(match after {
                    None => listed.load(conn).await?,
                    Some((at, id)) => {
                        listed
                            .filter(
                                api_keys::created_at
                                    .gt(at)
                                    .or(api_keys::created_at.eq(at).and(api_keys::id.gt(id))),
                            )
                            .load(conn)
                            .await?
                    }
                })
            }),
            ResourceType::Object => with_conn!(self, |conn| {
                let listed = objects::table
                    .filter(objects::project_id.eq(p))
                    .filter(objects::state.eq("ready"))
                    .order((objects::created_at.asc(), objects::id.asc()))
                    .limit(limit)
                    .select((objects::id, objects::title, objects::created_at));
                Ok(match after {
                    None => listed.load(conn).await?,
                    Some((at, id)) => {
                        listed
                            .filter(
                                objects::created_at
                                    .gt(at)
                                    .or(objects::created_at.eq(at).and(objects::id.gt(id))),
                            )
                            .load(conn)
                            .await?
                    }
                })
            }),
            ResourceType::Database => with_conn!(self, |conn| {
                let listed = databases::table
                    .filter(databases::project_id.eq(p))
                    .filter(databases::status.eq(DATABASE_READY))
                    .order((databases::created_at.asc(), databases::id.asc()))
                    .limit(limit)
                    .select((databases::id, databases::name, databases::created_at));
                Ok(match after {
                    None => listed.load(conn).await?,
                    Some((at, id)) => {
                        listed
                            .filter(
                                databases::created_at
                                    .gt(at)
                                    .or(databases::created_at.eq(at).and(databases::id.gt(id))),
                            )
                            .load(conn)
                            .await?
                    }
                })
            }),
        }
        .map_err(infra)?;
        Ok(rows.into_iter().map(entry).collect())
    }
}
