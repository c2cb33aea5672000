//! `DatabaseRecords` on both backends. Each state change is one conditional update on the
//! state it starts from, so a creating request and the janitor that took it for dead (or
//! two deletes) cannot both win: the loser's update touches no row and answers `false`.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_accounts::SealedSecret;
use quire_databases::{
    DataApiSettings, Database as DatabaseRecord, DatabaseRecords, DatabaseStatus,
    InsertDatabaseError,
};
use quire_kernel::{AccountId, DatabaseId, InfraError, ProjectId, ProjectSlug};
use time::OffsetDateTime;

use crate::db::{Database, with_conn};
use crate::error::{StoreError, infra};
use crate::schema::databases;
use crate::types::{DbId, DbTs};

const PROVISIONING: &str = "provisioning";
pub(crate) const READY: &str = "ready";
const DELETING: &str = "deleting";

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = databases)]
#[diesel(treat_none_as_null = true)]
struct DatabaseRow {
    id: DbId,
    account_id: DbId,
    project_id: DbId,
    slug: String,
    name: String,
    status: String,
    lease_until: Option<DbTs>,
    expires_at: Option<DbTs>,
    owner_secret: String,
    authenticator_secret: String,
    jwt_secret: Option<String>,
    data_api_enabled: bool,
    data_api_schemas: String,
    data_api_max_rows: Option<i64>,
    data_api_aggregates: bool,
    data_api_explain: bool,
    data_api_tx_rollback: bool,
    created_at: DbTs,
    updated_at: DbTs,
}

impl From<&DatabaseRecord> for DatabaseRow {
    fn from(d: &DatabaseRecord) -> Self {
        Self {
            id: DbId(d.id.0),
            account_id: DbId(d.account_id.0),
            project_id: DbId(d.project_id.0),
            slug: d.slug.as_str().to_owned(),
            name: d.name.clone(),
            status: d.status.as_str().to_owned(),
            lease_until: d.lease_until.map(DbTs),
            expires_at: d.expires_at.map(DbTs),
            owner_secret: d.owner_secret.as_stored().to_owned(),
            authenticator_secret: d.authenticator_secret.as_stored().to_owned(),
            jwt_secret: d.jwt_secret.as_ref().map(|s| s.as_stored().to_owned()),
            data_api_enabled: d.data_api_enabled,
            data_api_schemas: d.data_api_settings.schemas_text(),
            data_api_max_rows: stored_max_rows(&d.data_api_settings),
            data_api_aggregates: d.data_api_settings.aggregates,
            data_api_explain: d.data_api_settings.explain,
            data_api_tx_rollback: d.data_api_settings.tx_rollback,
            created_at: DbTs(d.created_at),
            updated_at: DbTs(d.updated_at),
        }
    }
}

impl TryFrom<DatabaseRow> for DatabaseRecord {
    type Error = StoreError;
    fn try_from(r: DatabaseRow) -> Result<Self, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("database {}: {what}", r.id.0));
        Ok(DatabaseRecord {
            id: DatabaseId(r.id.0),
            account_id: AccountId(r.account_id.0),
            project_id: ProjectId(r.project_id.0),
            slug: ProjectSlug::parse(&r.slug).map_err(|_| corrupt("slug"))?,
            status: DatabaseStatus::parse(&r.status).ok_or_else(|| corrupt("status"))?,
            name: r.name,
            lease_until: r.lease_until.map(|t| t.0),
            expires_at: r.expires_at.map(|t| t.0),
            owner_secret: SealedSecret::stored(r.owner_secret),
            authenticator_secret: SealedSecret::stored(r.authenticator_secret),
            jwt_secret: r.jwt_secret.map(SealedSecret::stored),
            data_api_enabled: r.data_api_enabled,
            data_api_settings: DataApiSettings {
                exposed_schemas: DataApiSettings::schemas_of(&r.data_api_schemas)
                    .map_err(|_| corrupt("data API schemas"))?,
                max_rows: r
                    .data_api_max_rows
                    .map(u64::try_from)
                    .transpose()
                    .map_err(|_| corrupt("data API max rows"))?,
                aggregates: r.data_api_aggregates,
                explain: r.data_api_explain,
                tx_rollback: r.data_api_tx_rollback,
            },
            created_at: r.created_at.0,
            updated_at: r.updated_at.0,
        })
    }
}

/// `max_rows` as its column holds it (the domain caps it far below `i64::MAX`).
fn stored_max_rows(settings: &DataApiSettings) -> Option<i64> {
    settings
        .max_rows
        .map(|n| i64::try_from(n).unwrap_or(i64::MAX))
}

fn records(rows: Vec<DatabaseRow>) -> Result<Vec<DatabaseRecord>, InfraError> {
    rows.into_iter()
        .map(DatabaseRecord::try_from)
        .collect::<Result<_, _>>()
        .map_err(infra)
}

fn record(row: Option<DatabaseRow>) -> Result<Option<DatabaseRecord>, InfraError> {
    row.map(DatabaseRecord::try_from).transpose().map_err(infra)
}

#[async_trait]
impl DatabaseRecords for Database {
    async fn insert_database(&self, database: &DatabaseRecord) -> Result<(), InsertDatabaseError> {
        let row = DatabaseRow::from(database);
        // The unique constraint decides between racing creates of one slug, not a read
        // before the write.
        with_conn!(self, |conn| {
            diesel::insert_into(databases::table)
                .values(&row)
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(|e| {
            if e.is_unique_violation("databases_slug_key", "databases.slug") {
                InsertDatabaseError::SlugTaken
            } else {
                InsertDatabaseError::Infra(e.into())
            }
        })
    }

    async fn mark_ready(&self, id: DatabaseId, at: OffsetDateTime) -> Result<bool, InfraError> {
        let marked = with_conn!(self, |conn| {
            Ok(diesel::update(
                databases::table
                    .find(DbId(id.0))
                    .filter(databases::status.eq(PROVISIONING)),
            )
            .set((
                databases::status.eq(READY),
                databases::lease_until.eq(None::<DbTs>),
                databases::updated_at.eq(DbTs(at)),
            ))
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(marked > 0)
    }

    async fn database(&self, id: DatabaseId) -> Result<Option<DatabaseRecord>, InfraError> {
        let row: Option<DatabaseRow> = with_conn!(self, |conn| {
            Ok(databases::table
                .find(DbId(id.0))
                .select(DatabaseRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        record(row)
    }

    async fn database_by_slug(&self, slug: &str) -> Result<Option<DatabaseRecord>, InfraError> {
        let slug = slug.to_owned();
        let row: Option<DatabaseRow> = with_conn!(self, |conn| {
            Ok(databases::table
                .filter(databases::slug.eq(&slug))
                .select(DatabaseRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        record(row)
    }

    async fn project_databases(
        &self,
        project: ProjectId,
    ) -> Result<Vec<DatabaseRecord>, InfraError> {
        let rows: Vec<DatabaseRow> = with_conn!(self, |conn| {
            Ok(databases::table
                .filter(databases::project_id.eq(DbId(project.0)))
                .filter(databases::status.eq(READY))
                .order((databases::created_at.desc(), databases::id.desc()))
                .select(DatabaseRow::as_select())
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        records(rows)
    }

    async fn set_data_api(
        &self,
        id: DatabaseId,
        enabled: bool,
        jwt_secret: Option<&SealedSecret>,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        let jwt_secret = jwt_secret.map(|s| s.as_stored().to_owned());
        let set = with_conn!(self, |conn| {
            let ready = databases::table
                .find(DbId(id.0))
                .filter(databases::status.eq(READY));
            let switched = (
                databases::data_api_enabled.eq(enabled),
                databases::updated_at.eq(DbTs(at)),
            );
            Ok(match &jwt_secret {
                Some(secret) => {
                    diesel::update(ready)
                        .set((switched, databases::jwt_secret.eq(secret)))
                        .execute(conn)
                        .await?
                }
                None => diesel::update(ready).set(switched).execute(conn).await?,
            })
        })
        .map_err(infra)?;
        Ok(set > 0)
    }

    async fn rotate_jwt_secret(
        &self,
        id: DatabaseId,
        from: &SealedSecret,
        to: &SealedSecret,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        let (from, to) = (from.as_stored().to_owned(), to.as_stored().to_owned());
        // Conditional on the secret read before, so of two racing rotations one wins.
        let set = with_conn!(self, |conn| {
            Ok(diesel::update(
                databases::table
                    .find(DbId(id.0))
                    .filter(databases::status.eq(READY))
                    .filter(databases::jwt_secret.eq(&from)),
            )
            .set((
                databases::jwt_secret.eq(&to),
                databases::updated_at.eq(DbTs(at)),
            ))
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(set > 0)
    }

    async fn set_data_api_settings(
        &self,
        id: DatabaseId,
        from: &DataApiSettings,
        to: &DataApiSettings,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        let (from_schemas, to_schemas) = (from.schemas_text(), to.schemas_text());
        let (from_rows, to_rows) = (stored_max_rows(from), stored_max_rows(to));
        let (from, to) = (from.clone(), to.clone());
        // Conditional on every setting read before, so a racing change is never undone
        // unseen: the loser reads again and applies its patch to what is there.
        let set = with_conn!(self, |conn| {
            let read = databases::table
                .find(DbId(id.0))
                .filter(databases::status.eq(READY))
                .filter(databases::data_api_schemas.eq(&from_schemas))
                .filter(databases::data_api_aggregates.eq(from.aggregates))
                .filter(databases::data_api_explain.eq(from.explain))
                .filter(databases::data_api_tx_rollback.eq(from.tx_rollback));
            let change = (
                databases::data_api_schemas.eq(&to_schemas),
                databases::data_api_max_rows.eq(to_rows),
                databases::data_api_aggregates.eq(to.aggregates),
                databases::data_api_explain.eq(to.explain),
                databases::data_api_tx_rollback.eq(to.tx_rollback),
                databases::updated_at.eq(DbTs(at)),
            );
            Ok(match from_rows {
                Some(n) => {
                    diesel::update(read.filter(databases::data_api_max_rows.eq(n)))
                        .set(change)
                        .execute(conn)
                        .await?
                }
                None => {
                    diesel::update(read.filter(databases::data_api_max_rows.is_null()))
                        .set(change)
                        .execute(conn)
                        .await?
                }
            })
        })
        .map_err(infra)?;
        Ok(set > 0)
    }

    async fn mark_deleting(&self, id: DatabaseId, at: OffsetDateTime) -> Result<bool, InfraError> {
        let marked = with_conn!(self, |conn| {
            Ok(diesel::update(
                databases::table
                    .find(DbId(id.0))
                    .filter(databases::status.eq(READY)),
            )
            .set((
                databases::status.eq(DELETING),
                databases::updated_at.eq(DbTs(at)),
            ))
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(marked > 0)
    }

    async fn delete_database(&self, id: DatabaseId) -> Result<(), InfraError> {
        with_conn!(self, |conn| {
            diesel::delete(databases::table.find(DbId(id.0)))
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn live_databases(
        &self,
        account: Option<AccountId>,
    ) -> Result<Vec<DatabaseRecord>, InfraError> {
        let rows: Vec<DatabaseRow> = with_conn!(self, |conn| {
            let mut live = databases::table
                .filter(databases::status.eq_any([PROVISIONING, READY]))
                .into_boxed();
            if let Some(a) = account {
                live = live.filter(databases::account_id.eq(DbId(a.0)));
            }
            Ok(live
                .order((databases::created_at.asc(), databases::id.asc()))
                .select(DatabaseRow::as_select())
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        records(rows)
    }

    async fn janitor_due(&self, now: OffsetDateTime) -> Result<Vec<DatabaseRecord>, InfraError> {
        let now = DbTs(now);
        let rows: Vec<DatabaseRow> = with_conn!(self, |conn| {
            Ok(databases::table
                .filter(
                    databases::status
                        .eq(PROVISIONING)
                        // A provisioning record always has a lease; one without is past due.
                        .and(
                            databases::lease_until
                                .lt(now)
                                .or(databases::lease_until.is_null()),
                        )
                        .or(databases::status.eq(DELETING))
                        .or(databases::status
                            .eq(READY)
                            .and(databases::expires_at.le(now))),
                )
                .order((databases::created_at.asc(), databases::id.asc()))
                .select(DatabaseRow::as_select())
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        records(rows)
    }
}
