//! `KeyStore` on both backends.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{AccountId, Apps, InfraError, KeyId, ProjectId, Tier, TimeKey};
use quire_keys::{CredentialOwner, KeyHash, KeyRecord, KeyStore};
use time::OffsetDateTime;

use crate::db::{Database, with_conn};
use crate::error::{StoreError, infra};
use crate::schema::{accounts, api_keys};
use crate::types::{DbId, DbTs};

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys)]
pub(crate) struct KeyRow {
    id: DbId,
    account_id: DbId,
    name: String,
    tier: String,
    apps: String,
    project_id: Option<DbId>,
    key_prefix: String,
    key_hash: String,
    created_at: DbTs,
    revoked_at: Option<DbTs>,
    last_used_at: Option<DbTs>,
}

impl From<&KeyRecord> for KeyRow {
    fn from(k: &KeyRecord) -> Self {
        let (tier, apps) = match &k.tier {
            Tier::Master => ("master", String::new()),
            Tier::App(apps) => ("app", apps.to_csv()),
        };
        Self {
            id: DbId(k.id.0),
            account_id: DbId(k.account_id.0),
            name: k.name.clone(),
            tier: tier.to_owned(),
            apps,
            project_id: k.project_id.map(|p| DbId(p.0)),
            key_prefix: k.key_prefix.clone(),
            key_hash: k.key_hash.0.clone(),
            created_at: DbTs(k.created_at),
            revoked_at: k.revoked_at.map(DbTs),
            last_used_at: k.last_used_at.map(DbTs),
        }
    }
}

impl TryFrom<KeyRow> for KeyRecord {
    type Error = StoreError;
    fn try_from(r: KeyRow) -> Result<Self, StoreError> {
        let tier = match r.tier.as_str() {
            "master" => Tier::Master,
            "app" => Tier::App(Apps::from_csv(&r.apps).ok_or_else(|| {
                StoreError::Corrupt(format!("key {}: apps {:?}", r.id.0, r.apps))
            })?),
            other => {
                return Err(StoreError::Corrupt(format!(
                    "key {}: tier {other:?}",
                    r.id.0
                )));
            }
        };
        Ok(KeyRecord {
            id: KeyId(r.id.0),
            account_id: AccountId(r.account_id.0),
            name: r.name,
            tier,
            project_id: r.project_id.map(|p| ProjectId(p.0)),
            key_prefix: r.key_prefix,
            key_hash: KeyHash(r.key_hash),
            created_at: r.created_at.0,
            revoked_at: r.revoked_at.map(|t| t.0),
            last_used_at: r.last_used_at.map(|t| t.0),
        })
    }
}

pub(crate) fn insert_key_row(
    row: &KeyRow,
) -> diesel::query_builder::InsertStatement<
    api_keys::table,
    <&KeyRow as Insertable<api_keys::table>>::Values,
> {
    diesel::insert_into(api_keys::table).values(row)
}

#[async_trait]
impl KeyStore for Database {
    async fn insert_key(&self, key: &KeyRecord) -> Result<(), InfraError> {
        let row = KeyRow::from(key);
        with_conn!(self, |conn| {
            insert_key_row(&row).execute(conn).await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn touch_key(
        &self,
        id: KeyId,
        at: OffsetDateTime,
        unless_since: OffsetDateTime,
    ) -> Result<(), InfraError> {
        with_conn!(self, |conn| {
            diesel::update(
                api_keys::table.find(DbId(id.0)).filter(
                    api_keys::last_used_at
                        .is_null()
                        .or(api_keys::last_used_at.lt(DbTs(unless_since))),
                ),
            )
            .set(api_keys::last_used_at.eq(Some(DbTs(at))))
            .execute(conn)
            .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn find_by_hash(&self, hash: &KeyHash) -> Result<Option<CredentialOwner>, InfraError> {
        let hash = hash.0.clone();
        let found: Option<(KeyRow, (Option<DbTs>, bool, DbId))> = with_conn!(self, |conn| {
            Ok(api_keys::table
                .inner_join(accounts::table)
                .filter(api_keys::key_hash.eq(hash))
                .select((
                    KeyRow::as_select(),
                    (
                        accounts::activated_at,
                        accounts::is_platform_admin,
                        accounts::default_project_id,
                    ),
                ))
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        found
            .map(|(row, (activated, admin, default))| {
                Ok(CredentialOwner {
                    key: KeyRecord::try_from(row)?,
                    account_activated: activated.is_some(),
                    is_platform_admin: admin,
                    default_project_id: ProjectId(default.0),
                })
            })
            .transpose()
            .map_err(infra)
    }

    async fn keys_of_account(&self, account: AccountId) -> Result<Vec<KeyRecord>, InfraError> {
        let rows: Vec<KeyRow> = with_conn!(self, |conn| {
            Ok(api_keys::table
                .filter(api_keys::account_id.eq(DbId(account.0)))
                .order((api_keys::created_at.asc(), api_keys::id.asc()))
                .select(KeyRow::as_select())
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        rows.into_iter()
            .map(KeyRecord::try_from)
            .collect::<Result<_, _>>()
            .map_err(infra)
    }

    async fn keys_after(
        &self,
        account: AccountId,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<KeyRecord>, InfraError> {
        let after = after.map(|k| (DbTs(k.at), DbId(k.id)));
        let rows: Vec<KeyRow> = with_conn!(self, |conn| {
            let listed = api_keys::table
                .filter(api_keys::account_id.eq(DbId(account.0)))
                .order((api_keys::created_at.asc(), api_keys::id.asc()))
                .limit(i64::from(limit))
                .select(KeyRow::as_select());
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
        })
        .map_err(infra)?;
        rows.into_iter()
            .map(KeyRecord::try_from)
            .collect::<Result<_, _>>()
            .map_err(infra)
    }

    async fn key_by_id(&self, id: KeyId) -> Result<Option<KeyRecord>, InfraError> {
        let row: Option<KeyRow> = with_conn!(self, |conn| {
            Ok(api_keys::table
                .find(DbId(id.0))
                .select(KeyRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        row.map(KeyRecord::try_from).transpose().map_err(infra)
    }

    async fn revoke_key(&self, id: KeyId, at: OffsetDateTime) -> Result<(), InfraError> {
        with_conn!(self, |conn| {
            diesel::update(
                api_keys::table
                    .find(DbId(id.0))
                    .filter(api_keys::revoked_at.is_null()),
            )
            .set(api_keys::revoked_at.eq(Some(DbTs(at))))
            .execute(conn)
            .await?;
            Ok(())
        })
        .map_err(infra)
    }
}
