//! `DeviceGrantStore` on both backends.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_device_auth::ports::InsertGrantError;
use quire_device_auth::{DeviceGrant, DeviceGrantStore, GrantState};
use quire_kernel::{AccountId, InfraError, KeyId};
use quire_keys::KeyRecord;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::db::{Database, with_conn, with_tx};
use crate::error::{StoreError, infra};
use crate::platform::keys::{KeyRow, insert_key_row};
use crate::schema::device_grants;
use crate::types::{DbId, DbTs};

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = device_grants)]
struct GrantRow {
    id: DbId,
    device_code_hash: String,
    user_code: String,
    client_name: String,
    state: String,
    account_id: Option<DbId>,
    key_id: Option<DbId>,
    created_at: DbTs,
    expires_at: DbTs,
    interval_secs: i64,
    last_polled_at: Option<DbTs>,
    decided_at: Option<DbTs>,
}

fn state_columns(state: GrantState) -> (&'static str, Option<DbId>, Option<DbId>) {
    match state {
        GrantState::Pending => ("pending", None, None),
        GrantState::Approved { account } => ("approved", Some(DbId(account.0)), None),
        GrantState::Denied => ("denied", None, None),
        GrantState::Claimed { key } => ("claimed", None, Some(DbId(key.0))),
    }
}

impl TryFrom<GrantRow> for DeviceGrant {
    type Error = StoreError;
    fn try_from(r: GrantRow) -> Result<Self, StoreError> {
        let corrupt = || StoreError::Corrupt(format!("device grant {}: state", r.id.0));
        let state = match (r.state.as_str(), r.account_id, r.key_id) {
            ("pending", _, _) => GrantState::Pending,
            ("approved", Some(a), _) => GrantState::Approved {
                account: AccountId(a.0),
            },
            ("denied", _, _) => GrantState::Denied,
            ("claimed", _, Some(k)) => GrantState::Claimed { key: KeyId(k.0) },
            _ => return Err(corrupt()),
        };
        Ok(DeviceGrant {
            id: r.id.0,
            device_code_hash: r.device_code_hash,
            user_code: r.user_code,
            client_name: r.client_name,
            state,
            created_at: r.created_at.0,
            expires_at: r.expires_at.0,
            interval_secs: u32::try_from(r.interval_secs).unwrap_or(u32::MAX),
            last_polled_at: r.last_polled_at.map(|t| t.0),
            decided_at: r.decided_at.map(|t| t.0),
        })
    }
}

impl Database {
    async fn grant_where_text(
        &self,
        column_is_device: bool,
        value: String,
    ) -> Result<Option<DeviceGrant>, InfraError> {
        let row: Option<GrantRow> = with_conn!(self, |conn| {
            let query = device_grants::table.select(GrantRow::as_select());
            Ok(if column_is_device {
                query
                    .filter(device_grants::device_code_hash.eq(&value))
                    .first(conn)
                    .await
                    .optional()?
            } else {
                query
                    .filter(device_grants::user_code.eq(&value))
                    .first(conn)
                    .await
                    .optional()?
            })
        })
        .map_err(infra)?;
        row.map(DeviceGrant::try_from).transpose().map_err(infra)
    }
}

#[async_trait]
impl DeviceGrantStore for Database {
    async fn insert_grant(&self, grant: &DeviceGrant) -> Result<(), InsertGrantError> {
        let (state, account, key) = state_columns(grant.state);
        let row = GrantRow {
            id: DbId(grant.id),
            device_code_hash: grant.device_code_hash.clone(),
            user_code: grant.user_code.clone(),
            client_name: grant.client_name.clone(),
            state: state.to_owned(),
            account_id: account,
            key_id: key,
            created_at: DbTs(grant.created_at),
            expires_at: DbTs(grant.expires_at),
            interval_secs: i64::from(grant.interval_secs),
            last_polled_at: grant.last_polled_at.map(DbTs),
            decided_at: grant.decided_at.map(DbTs),
        };
        with_conn!(self, |conn| {
            diesel::insert_into(device_grants::table)
                .values(&row)
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(|e| {
            if e.is_unique_violation("device_grants_user_code_key", "device_grants.user_code") {
                InsertGrantError::UserCodeTaken
            } else {
                InsertGrantError::Infra(e.into())
            }
        })
    }

    async fn grant_by_device_hash(&self, hash: &str) -> Result<Option<DeviceGrant>, InfraError> {
        self.grant_where_text(true, hash.to_owned()).await
    }

    async fn grant_by_user_code(&self, code: &str) -> Result<Option<DeviceGrant>, InfraError> {
        self.grant_where_text(false, code.to_owned()).await
    }

    async fn record_poll(
        &self,
        id: Uuid,
        at: OffsetDateTime,
        interval_secs: u32,
    ) -> Result<(), InfraError> {
        with_conn!(self, |conn| {
            diesel::update(device_grants::table.find(DbId(id)))
                .set((
                    device_grants::last_polled_at.eq(Some(DbTs(at))),
                    device_grants::interval_secs.eq(i64::from(interval_secs)),
                ))
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn decide(
        &self,
        id: Uuid,
        state: GrantState,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        let (state, account, _) = state_columns(state);
        let n = with_conn!(self, |conn| {
            Ok(diesel::update(
                device_grants::table
                    .find(DbId(id))
                    .filter(device_grants::state.eq("pending")),
            )
            .set((
                device_grants::state.eq(state),
                device_grants::account_id.eq(account),
                device_grants::decided_at.eq(Some(DbTs(at))),
            ))
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(n == 1)
    }

    async fn claim(&self, id: Uuid, key: &KeyRecord) -> Result<bool, InfraError> {
        let key_row = KeyRow::from(key);
        let key_id = DbId(key.id.0);
        with_tx!(self, |conn| {
            let n = diesel::update(
                device_grants::table
                    .find(DbId(id))
                    .filter(device_grants::state.eq("approved")),
            )
            .set((
                device_grants::state.eq("claimed"),
                device_grants::key_id.eq(Some(key_id)),
            ))
            .execute(conn)
            .await?;
            if n == 0 {
                return Ok(false);
            }
            insert_key_row(&key_row).execute(conn).await?;
            Ok(true)
        })
        .map_err(infra)
    }

    async fn delete_grants_expired_before(
        &self,
        cutoff: OffsetDateTime,
    ) -> Result<u64, InfraError> {
        let n = with_conn!(self, |conn| {
            Ok(diesel::delete(
                device_grants::table.filter(device_grants::expires_at.lt(DbTs(cutoff))),
            )
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(n as u64)
    }
}
