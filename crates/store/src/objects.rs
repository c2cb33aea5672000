//! `ObjectRecords` on both backends; its leased two-phase write and the slug namespace it
//! shares with pages are in `leased`.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{AccountId, InfraError, ObjectId, ProjectId};
use quire_objects::{Contents, InsertObjectError, Object, ObjectRecords, ObjectStatus};
use time::OffsetDateTime;

use crate::db::{Database, with_conn, with_tx};
use crate::error::{StoreError, infra};
use crate::leased::{Leased, PENDING, READY, Refusal, claim_names, claim_slug, leased_table};
use crate::pages::to_u64;
use crate::schema::objects;
use crate::types::{DbId, DbTs};

leased_table!(objects, row: ObjectRow, record: Object, ready_also_sets: ReadyContents);

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = objects)]
#[diesel(treat_none_as_null = true)]
pub(crate) struct ObjectRow {
    id: DbId,
    public_id: String,
    account_id: DbId,
    project_id: DbId,
    slug: String,
    title: String,
    filename: String,
    content_type: String,
    size_bytes: i64,
    sha256: String,
    blob: String,
    status: String,
    state: String,
    created_at: DbTs,
    updated_at: DbTs,
    archived_at: Option<DbTs>,
    lease_until: Option<DbTs>,
}

impl ObjectRow {
    fn new(o: &Object, state: &str, lease_until: Option<OffsetDateTime>) -> Self {
        Self {
            id: DbId(o.id.0),
            public_id: o.public_id.clone(),
            account_id: DbId(o.account_id.0),
            project_id: DbId(o.project_id.0),
            slug: o.slug.clone(),
            title: o.title.clone(),
            filename: o.filename.clone(),
            content_type: o.content_type.clone(),
            size_bytes: i64::try_from(o.size_bytes).unwrap_or(i64::MAX),
            sha256: o.sha256.clone(),
            blob: o.blob.clone(),
            status: o.status.as_str().to_owned(),
            state: state.to_owned(),
            created_at: DbTs(o.created_at),
            updated_at: DbTs(o.updated_at),
            archived_at: o.archived_at.map(DbTs),
            lease_until: lease_until.map(DbTs),
        }
    }
}

/// What [`ObjectRecords::mark_ready`] writes besides the state: the contents as uploaded.
#[derive(AsChangeset)]
#[diesel(table_name = objects)]
pub(crate) struct ReadyContents {
    size_bytes: i64,
    sha256: String,
    updated_at: DbTs,
}

/// What [`ObjectRecords::swap_contents`] writes: a field left `None` stays as it is.
#[derive(AsChangeset)]
#[diesel(table_name = objects)]
struct ContentsChange {
    blob: String,
    size_bytes: i64,
    sha256: String,
    filename: Option<String>,
    content_type: Option<String>,
    updated_at: Option<DbTs>,
}

impl TryFrom<ObjectRow> for Object {
    type Error = StoreError;
    fn try_from(r: ObjectRow) -> Result<Self, StoreError> {
        Ok(Object {
            id: ObjectId(r.id.0),
            status: ObjectStatus::parse(&r.status)
                .ok_or_else(|| StoreError::Corrupt(format!("object {}: status", r.id.0)))?,
            public_id: r.public_id,
            account_id: AccountId(r.account_id.0),
            project_id: ProjectId(r.project_id.0),
            slug: r.slug,
            title: r.title,
            filename: r.filename,
            content_type: r.content_type,
            size_bytes: to_u64(r.size_bytes),
            sha256: r.sha256,
            blob: r.blob,
            created_at: r.created_at.0,
            updated_at: r.updated_at.0,
            archived_at: r.archived_at.map(|t| t.0),
        })
    }
}

#[async_trait]
impl ObjectRecords for Database {
    async fn insert_pending(
        &self,
        object: &Object,
        lease_until: OffsetDateTime,
    ) -> Result<(), InsertObjectError> {
        let row = ObjectRow::new(object, PENDING, Some(lease_until));
        let result = with_tx!(self, |conn| {
            claim_names!(conn, row.account_id, &row.slug, &row.public_id, pages);
            diesel::insert_into(objects::table)
                .values(&row)
                .execute(conn)
                .await?;
            Ok(())
        });
        result.map_err(insert_error)
    }

    async fn renew_lease(&self, id: ObjectId, until: OffsetDateTime) -> Result<bool, InfraError> {
        objects::table::renew_lease(self, DbId(id.0), until).await
    }

    async fn mark_ready(&self, object: &Object) -> Result<(), InfraError> {
        let row = ObjectRow::new(object, READY, None);
        let contents = ReadyContents {
            size_bytes: row.size_bytes,
            sha256: row.sha256,
            updated_at: row.updated_at,
        };
        if !objects::table::mark_ready(self, row.id, contents).await? {
            return Err(InfraError::new(
                "the upload lost its pending record: its lease lapsed",
            ));
        }
        Ok(())
    }

    async fn pending_object(
        &self,
        id: ObjectId,
    ) -> Result<Option<(Object, OffsetDateTime)>, InfraError> {
        let row = objects::table::row(self, DbId(id.0), PENDING).await?;
        let Some(row) = row else {
            return Ok(None);
        };
        // A pending record always has a lease; one without is past due.
        let lease = row.lease_until.map_or(OffsetDateTime::UNIX_EPOCH, |t| t.0);
        Ok(Some((Object::try_from(row).map_err(infra)?, lease)))
    }

    async fn object(&self, id: ObjectId) -> Result<Option<Object>, InfraError> {
        objects::table::ready(self, DbId(id.0)).await
    }

    async fn object_by_slug(
        &self,
        owner: AccountId,
        slug: &str,
    ) -> Result<Option<Object>, InfraError> {
        objects::table::ready_by_slug(self, DbId(owner.0), slug).await
    }

    async fn project_objects(
        &self,
        project: ProjectId,
        status: Option<ObjectStatus>,
    ) -> Result<Vec<Object>, InfraError> {
        let status = status.map(|s| s.as_str().to_owned());
        let rows: Vec<ObjectRow> = with_conn!(self, |conn| {
            let mut query = objects::table
                .filter(objects::project_id.eq(DbId(project.0)))
                .filter(objects::state.eq(READY))
                .into_boxed();
            if let Some(s) = &status {
                query = query.filter(objects::status.eq(s.clone()));
            }
            Ok(query
                .order((objects::created_at.desc(), objects::id.desc()))
                .select(ObjectRow::as_select())
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        objects::table::records(rows)
    }

    async fn update_object(&self, object: &Object) -> Result<(), InsertObjectError> {
        let row = ObjectRow::new(object, READY, None);
        let result = with_tx!(self, |conn| {
            claim_slug!(conn, row.account_id, &row.slug, pages);
            diesel::update(objects::table.find(row.id))
                .set((
                    objects::slug.eq(&row.slug),
                    objects::title.eq(&row.title),
                    objects::filename.eq(&row.filename),
                    objects::content_type.eq(&row.content_type),
                    objects::status.eq(&row.status),
                    objects::updated_at.eq(row.updated_at),
                    objects::archived_at.eq(row.archived_at),
                ))
                .execute(conn)
                .await?;
            Ok(())
        });
        result.map_err(insert_error)
    }

    async fn swap_contents(
        &self,
        id: ObjectId,
        from: &str,
        to: &Contents,
    ) -> Result<bool, InfraError> {
        let change = ContentsChange {
            blob: to.blob.clone(),
            size_bytes: i64::try_from(to.size_bytes).unwrap_or(i64::MAX),
            sha256: to.sha256.clone(),
            filename: to.filename.clone(),
            content_type: to.content_type.clone(),
            updated_at: to.updated_at.map(DbTs),
        };
        let (id, from) = (DbId(id.0), from.to_owned());
        let swapped = with_conn!(self, |conn| {
            Ok(diesel::update(
                objects::table
                    .find(id)
                    .filter(objects::state.eq(READY))
                    .filter(objects::blob.eq(&from)),
            )
            .set(&change)
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(swapped > 0)
    }

    async fn delete_object(&self, id: ObjectId) -> Result<(), InfraError> {
        objects::table::delete(self, DbId(id.0)).await
    }

    async fn stale_pending(&self, now: OffsetDateTime) -> Result<Vec<ObjectId>, InfraError> {
        let ids = objects::table::stale_pending(self, now).await?;
        Ok(ids.into_iter().map(|i| ObjectId(i.0)).collect())
    }

    async fn object_exists(&self, id: ObjectId) -> Result<bool, InfraError> {
        objects::table::exists(self, DbId(id.0)).await
    }

    async fn stored_bytes(
        &self,
        account: Option<AccountId>,
    ) -> Result<Vec<(AccountId, u64)>, InfraError> {
        // An index of (account_id, state, size_bytes) answers the sum without the rows.
        let sum = || {
            diesel::dsl::sql::<diesel::sql_types::BigInt>("CAST(SUM(objects.size_bytes) AS BIGINT)")
        };
        let sums: Vec<(DbId, i64)> = with_conn!(self, |conn| {
            let ready = objects::table.filter(objects::state.eq(READY));
            Ok(match account {
                Some(a) => {
                    ready
                        .filter(objects::account_id.eq(DbId(a.0)))
                        .group_by(objects::account_id)
                        .select((objects::account_id, sum()))
                        .load(conn)
                        .await?
                }
                None => {
                    ready
                        .group_by(objects::account_id)
                        .select((objects::account_id, sum()))
                        .load(conn)
                        .await?
                }
            })
        })
        .map_err(infra)?;
        Ok(sums
            .into_iter()
            .map(|(id, bytes)| (AccountId(id.0), to_u64(bytes)))
            .collect())
    }

    async fn lapsed_slug_holder(
        &self,
        owner: AccountId,
        slug: &str,
        now: OffsetDateTime,
    ) -> Result<Option<ObjectId>, InfraError> {
        let id = objects::table::lapsed_slug_holder(self, DbId(owner.0), slug, now).await?;
        Ok(id.map(|i| ObjectId(i.0)))
    }
}

fn insert_error(e: StoreError) -> InsertObjectError {
    match objects::table::refusal(&e) {
        Some(Refusal::PublicIdTaken) => InsertObjectError::PublicIdTaken,
        Some(Refusal::SlugTaken) => InsertObjectError::SlugTaken,
        None => InsertObjectError::Infra(e.into()),
    }
}
