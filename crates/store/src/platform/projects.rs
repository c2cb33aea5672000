//! `ProjectStore` on both backends.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{AccountId, InfraError, KeyId, ProjectId, ProjectSlug, TimeKey};
use quire_projects::{
    AssignStoreError, DeleteProjectStoreError, Grant, GrantLevel, Project, ProjectStore,
    ProjectWriteError, ResourceEntry, ResourceType, Resources,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::db::{Database, with_conn, with_tx};
use crate::error::{Outcome, StoreError, infra};
use crate::links::URL_KIND;
use crate::platform::databases::READY as DATABASE_READY;
use crate::schema::{
    accounts, api_keys, databases, links, oauth_clients, objects, pages, project_grants, projects,
};
use crate::types::{DbId, DbTs};

pub(crate) use crate::platform::project_rows::ProjectRow;

/// Ends the transaction with [`Outcome::UnknownClient`] unless a live OAuth client has the
/// id; read in the same transaction as the write, so a delete that commits first is seen.
macro_rules! require_live_client {
    ($conn:expr, $client:expr) => {
        let live: i64 = oauth_clients::table
            .filter(oauth_clients::id.eq($client))
            .filter(oauth_clients::deleted_at.is_null())
            .count()
            .get_result($conn)
            .await?;
        if live == 0 {
            return Err(StoreError::Outcome(Outcome::UnknownClient));
        }
    };
}

fn write_error(e: StoreError) -> ProjectWriteError {
    if e.is_unique_violation("projects_slug_key", "projects.slug") {
        ProjectWriteError::SlugTaken
    } else if e.is_outcome(Outcome::UnknownClient) {
        ProjectWriteError::UnknownClient
    } else if e.is_unique_violation("projects_account_client_key", "projects.oauth_client_id") {
        ProjectWriteError::ClientAlreadyAttached
    } else {
        ProjectWriteError::Infra(e.into())
    }
}

#[async_trait]
impl ProjectStore for Database {
    async fn insert_project(&self, project: &Project) -> Result<(), ProjectWriteError> {
        let row = ProjectRow::from(project);
        with_tx!(self, |conn| {
            if let Some(client) = &row.oauth_client_id {
                require_live_client!(conn, client);
            }
            diesel::insert_into(projects::table)
                .values(&row)
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(write_error)
    }

    async fn update_project(&self, project: &Project) -> Result<(), ProjectWriteError> {
        let row = ProjectRow::from(project);
        with_tx!(self, |conn| {
            if let Some(client) = &row.oauth_client_id {
                require_live_client!(conn, client);
            }
            diesel::update(projects::table.find(row.id))
                .set(&row)
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(write_error)
    }

    async fn project_by_id(&self, id: ProjectId) -> Result<Option<Project>, InfraError> {
        let row: Option<ProjectRow> = with_conn!(self, |conn| {
            Ok(projects::table
                .find(DbId(id.0))
                .select(ProjectRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        row.map(Project::try_from).transpose().map_err(infra)
    }

    async fn project_by_slug(&self, slug: &ProjectSlug) -> Result<Option<Project>, InfraError> {
        let slug = slug.as_str().to_owned();
        let row: Option<ProjectRow> = with_conn!(self, |conn| {
            Ok(projects::table
                .filter(projects::slug.eq(slug))
                .select(ProjectRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        row.map(Project::try_from).transpose().map_err(infra)
    }

    async fn projects_of_account(&self, account: AccountId) -> Result<Vec<Project>, InfraError> {
        let rows: Vec<ProjectRow> = with_conn!(self, |conn| {
            Ok(projects::table
                .filter(projects::account_id.eq(DbId(account.0)))
                .order((projects::created_at.asc(), projects::id.asc()))
                .select(ProjectRow::as_select())
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        rows.into_iter()
            .map(Project::try_from)
            .collect::<Result<_, _>>()
            .map_err(infra)
    }

    async fn projects_after(
        &self,
        account: AccountId,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<Project>, InfraError> {
        let after = after.map(|k| (DbTs(k.at), DbId(k.id)));
        let rows: Vec<ProjectRow> = with_conn!(self, |conn| {
            let listed = projects::table
                .filter(projects::account_id.eq(DbId(account.0)))
                .order((projects::created_at.asc(), projects::id.asc()))
                .limit(i64::from(limit))
                .select(ProjectRow::as_select());
            Ok(match after {
                None => listed.load(conn).await?,
                Some((at, id)) => {
                    listed
                        .filter(
                            projects::created_at
                                .gt(at)
                                .or(projects::created_at.eq(at).and(projects::id.gt(id))),
                        )
                        .load(conn)
                        .await?
                }
            })
        })
        .map_err(infra)?;
        rows.into_iter()
            .map(Project::try_from)
            .collect::<Result<_, _>>()
            .map_err(infra)
    }

    async fn default_project_of(
        &self,
        account: AccountId,
    ) -> Result<Option<ProjectId>, InfraError> {
        let id: Option<DbId> = with_conn!(self, |conn| {
            Ok(accounts::table
                .find(DbId(account.0))
                .select(accounts::default_project_id)
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        Ok(id.map(|i| ProjectId(i.0)))
    }

    async fn resources(&self, project: ProjectId) -> Result<Resources, InfraError> {
        let entries = |rows: Vec<(DbId, String, DbTs)>| -> Vec<ResourceEntry> {
            rows.into_iter()
                .map(|(id, name, created)| ResourceEntry {
                    id: id.0,
                    name,
                    created_at: created.0,
                })
                .collect()
        };
        let (keys, page_rows, link_rows, object_rows, database_rows) = with_conn!(self, |conn| {
            let p = DbId(project.0);
            let keys: Vec<(DbId, String, DbTs)> = api_keys::table
                .filter(api_keys::project_id.eq(p))
                .filter(api_keys::revoked_at.is_null())
                .order(api_keys::created_at.asc())
                .select((api_keys::id, api_keys::name, api_keys::created_at))
                .load(conn)
                .await?;
            let page_rows: Vec<(DbId, String, DbTs)> = pages::table
                .filter(pages::project_id.eq(p))
                .filter(pages::state.eq("ready"))
                .order(pages::created_at.asc())
                .select((pages::id, pages::title, pages::created_at))
                .load(conn)
                .await?;
            let link_rows: Vec<(DbId, String, Option<String>, DbTs)> = links::table
                .filter(links::project_id.eq(p))
                .filter(links::target_kind.eq(URL_KIND))
                .order(links::created_at.asc())
                .select((links::id, links::public_id, links::alias, links::created_at))
                .load(conn)
                .await?;
            let object_rows: Vec<(DbId, String, DbTs)> = objects::table
                .filter(objects::project_id.eq(p))
                .filter(objects::state.eq("ready"))
                .order(objects::created_at.asc())
                .select((objects::id, objects::title, objects::created_at))
                .load(conn)
                .await?;
            let database_rows: Vec<(DbId, String, DbTs)> = databases::table
                .filter(databases::project_id.eq(p))
                .filter(databases::status.eq(DATABASE_READY))
                .order(databases::created_at.asc())
                .select((databases::id, databases::name, databases::created_at))
                .load(conn)
                .await?;
            Ok((keys, page_rows, link_rows, object_rows, database_rows))
        })
        .map_err(infra)?;
        Ok(Resources {
            keys: entries(keys),
            pages: entries(page_rows),
            objects: entries(object_rows),
            databases: entries(database_rows),
            links: link_rows
                .into_iter()
                .map(|(id, public_id, alias, created)| ResourceEntry {
                    id: id.0,
                    name: alias.unwrap_or(public_id),
                    created_at: created.0,
                })
                .collect(),
        })
    }

    async fn resources_after(
        &self,
        project: ProjectId,
        kind: ResourceType,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<ResourceEntry>, InfraError> {
        self.resources_of_kind_after(project, kind, after, limit)
            .await
    }

    async fn delete_project(
        &self,
        project: &Project,
        move_to: Option<ProjectId>,
    ) -> Result<(), DeleteProjectStoreError> {
        let id = DbId(project.id.0);
        let account = DbId(project.account_id.0);
        let result = with_tx!(self, |db, conn| {
            let live_keys = api_keys::table
                .filter(api_keys::project_id.eq(id))
                .filter(api_keys::revoked_at.is_null());
            match move_to {
                Some(dest) => {
                    let dest = DbId(dest.0);
                    diesel::update(live_keys)
                        .set(api_keys::project_id.eq(dest))
                        .execute(conn)
                        .await?;
                    diesel::update(pages::table.filter(pages::project_id.eq(id)))
                        .set(pages::project_id.eq(dest))
                        .execute(conn)
                        .await?;
                    diesel::update(links::table.filter(links::project_id.eq(id)))
                        .set(links::project_id.eq(dest))
                        .execute(conn)
                        .await?;
                    diesel::update(objects::table.filter(objects::project_id.eq(id)))
                        .set(objects::project_id.eq(dest))
                        .execute(conn)
                        .await?;
                    diesel::update(databases::table.filter(databases::project_id.eq(id)))
                        .set(databases::project_id.eq(dest))
                        .execute(conn)
                        .await?;
                }
                None => {
                    let keys: i64 = live_keys.count().get_result(conn).await?;
                    let page_count: i64 = pages::table
                        .filter(pages::project_id.eq(id))
                        .count()
                        .get_result(conn)
                        .await?;
                    let link_count: i64 = links::table
                        .filter(links::project_id.eq(id))
                        .count()
                        .get_result(conn)
                        .await?;
                    let object_count: i64 = objects::table
                        .filter(objects::project_id.eq(id))
                        .count()
                        .get_result(conn)
                        .await?;
                    // Any state: a database being created or dropped still holds its project.
                    let database_count: i64 = databases::table
                        .filter(databases::project_id.eq(id))
                        .count()
                        .get_result(conn)
                        .await?;
                    if keys + page_count + link_count + object_count + database_count > 0 {
                        return Err(StoreError::Outcome(Outcome::ProjectNotEmpty));
                    }
                }
            }
            db.checkpoint("delete_project:moved")?;
            diesel::delete(projects::table.find(id))
                .execute(conn)
                .await?;
            let oldest: DbId = projects::table
                .filter(projects::account_id.eq(account))
                .order((projects::created_at.asc(), projects::id.asc()))
                .select(projects::id)
                .first(conn)
                .await?;
            db.checkpoint("delete_project:deleted")?;
            diesel::update(
                accounts::table
                    .find(account)
                    .filter(accounts::default_project_id.eq(id)),
            )
            .set(accounts::default_project_id.eq(oldest))
            .execute(conn)
            .await?;
            Ok(())
        });
        result.map_err(|e| {
            if e.is_outcome(Outcome::ProjectNotEmpty) {
                DeleteProjectStoreError::NotEmpty
            } else {
                DeleteProjectStoreError::Infra(e.into())
            }
        })
    }

    async fn assign_resource(
        &self,
        account: AccountId,
        resource_type: ResourceType,
        resource_id: Uuid,
        dest: ProjectId,
        _now: OffsetDateTime,
    ) -> Result<(), AssignStoreError> {
        crate::platform::project_assign::assign_resource(
            self,
            account,
            resource_type,
            resource_id,
            dest,
        )
        .await
    }

    async fn key_account(&self, key: KeyId) -> Result<Option<AccountId>, InfraError> {
        let owner: Option<DbId> = with_conn!(self, |conn| {
            Ok(api_keys::table
                .find(DbId(key.0))
                .select(api_keys::account_id)
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        Ok(owner.map(|o| AccountId(o.0)))
    }

    async fn grant_level(
        &self,
        key: KeyId,
        project: ProjectId,
    ) -> Result<Option<GrantLevel>, InfraError> {
        let level: Option<String> = with_conn!(self, |conn| {
            Ok(project_grants::table
                .find((DbId(key.0), DbId(project.0)))
                .select(project_grants::level)
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        level
            .map(|l| {
                GrantLevel::parse(&l)
                    .ok_or_else(|| InfraError::new(format!("stored grant level {l:?} is invalid")))
            })
            .transpose()
    }

    async fn put_grant(&self, grant: &Grant) -> Result<Grant, InfraError> {
        let key = DbId(grant.key_id.0);
        let project = DbId(grant.project_id.0);
        let level = grant.level.as_str();
        let created = DbTs(grant.created_at);
        let stored: DbTs = with_tx!(self, |conn| {
            let existing: Option<DbTs> = project_grants::table
                .find((key, project))
                .select(project_grants::created_at)
                .first(conn)
                .await
                .optional()?;
            match existing {
                Some(created_at) => {
                    diesel::update(project_grants::table.find((key, project)))
                        .set(project_grants::level.eq(level))
                        .execute(conn)
                        .await?;
                    Ok(created_at)
                }
                None => {
                    diesel::insert_into(project_grants::table)
                        .values((
                            project_grants::key_id.eq(key),
                            project_grants::project_id.eq(project),
                            project_grants::level.eq(level),
                            project_grants::created_at.eq(created),
                        ))
                        .execute(conn)
                        .await?;
                    Ok(created)
                }
            }
        })
        .map_err(infra)?;
        Ok(Grant {
            created_at: stored.0,
            ..grant.clone()
        })
    }

    async fn delete_grant(&self, key: KeyId, project: ProjectId) -> Result<bool, InfraError> {
        let n = with_conn!(self, |conn| {
            Ok(
                diesel::delete(project_grants::table.find((DbId(key.0), DbId(project.0))))
                    .execute(conn)
                    .await?,
            )
        })
        .map_err(infra)?;
        Ok(n > 0)
    }
}
