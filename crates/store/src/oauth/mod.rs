//! OAuth: `ClientStore`, the client registry (here); `GrantStore`, authorizations and their
//! refresh tokens (`grants`); `SigningKeyStore` (`signing_keys`); and `DeviceGrantStore`,
//! the device authorization grant of the command line (`device`).

mod device;
mod grants;
mod signing_keys;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::InfraError;
use quire_oauth::{
    ClientId, ClientKey, ClientStore, ClientType, InsertClientError, OAuthClient, RedirectUri,
    Registration,
};
use time::OffsetDateTime;

use crate::db::{Database, with_conn, with_tx};
use crate::error::{StoreError, infra};
use crate::schema::{oauth_clients, oauth_grants, projects};
use crate::types::DbTs;

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_clients)]
struct ClientRow {
    id: String,
    name: String,
    client_type: String,
    redirect_uris: String,
    secret_hash: Option<String>,
    created_at: DbTs,
    deleted_at: Option<DbTs>,
    registration: String,
    last_used_at: Option<DbTs>,
}

impl From<&OAuthClient> for ClientRow {
    fn from(c: &OAuthClient) -> Self {
        let uris: Vec<&str> = c.redirect_uris.iter().map(RedirectUri::as_str).collect();
        Self {
            id: c.id.as_str().to_owned(),
            name: c.name.clone(),
            client_type: c.client_type.as_str().to_owned(),
            redirect_uris: uris.join("\n"),
            secret_hash: c.secret_hash.clone(),
            created_at: DbTs(c.created_at),
            deleted_at: c.deleted_at.map(DbTs),
            registration: c.registration.as_str().to_owned(),
            last_used_at: c.last_used_at.map(DbTs),
        }
    }
}

impl TryFrom<ClientRow> for OAuthClient {
    type Error = StoreError;
    fn try_from(r: ClientRow) -> Result<Self, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("oauth client {}: {what}", r.id));
        Ok(OAuthClient {
            id: ClientId::parse(&r.id).ok_or_else(|| corrupt("id"))?,
            client_type: ClientType::parse(&r.client_type).ok_or_else(|| corrupt("type"))?,
            registration: Registration::parse(&r.registration)
                .ok_or_else(|| corrupt("registration"))?,
            last_used_at: r.last_used_at.map(|t| t.0),
            redirect_uris: r.redirect_uris.lines().map(RedirectUri::stored).collect(),
            name: r.name,
            secret_hash: r.secret_hash,
            created_at: r.created_at.0,
            deleted_at: r.deleted_at.map(|t| t.0),
        })
    }
}

#[async_trait]
impl ClientStore for Database {
    async fn insert_client(&self, client: &OAuthClient) -> Result<(), InsertClientError> {
        let row = ClientRow::from(client);
        with_conn!(self, |conn| {
            diesel::insert_into(oauth_clients::table)
                .values(&row)
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(|e| {
            if e.is_unique_violation("oauth_clients_pkey", "oauth_clients.id") {
                InsertClientError::IdTaken
            } else {
                InsertClientError::Infra(e.into())
            }
        })
    }

    async fn client(&self, id: &ClientId) -> Result<Option<OAuthClient>, InfraError> {
        let id = id.as_str().to_owned();
        let row: Option<ClientRow> = with_conn!(self, |conn| {
            Ok(oauth_clients::table
                .find(id)
                .select(ClientRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        row.map(OAuthClient::try_from).transpose().map_err(infra)
    }

    async fn live_clients(&self) -> Result<Vec<OAuthClient>, InfraError> {
        let rows: Vec<ClientRow> = with_conn!(self, |conn| {
            Ok(oauth_clients::table
                .filter(oauth_clients::deleted_at.is_null())
                .order((oauth_clients::created_at.asc(), oauth_clients::id.asc()))
                .select(ClientRow::as_select())
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        rows.into_iter()
            .map(OAuthClient::try_from)
            .collect::<Result<_, _>>()
            .map_err(infra)
    }

    async fn live_clients_after(
        &self,
        after: Option<&ClientKey>,
        limit: u32,
    ) -> Result<Vec<OAuthClient>, InfraError> {
        let after = after.map(|k| (DbTs(k.at), k.id.clone()));
        let rows: Vec<ClientRow> = with_conn!(self, |conn| {
            let listed = oauth_clients::table
                .filter(oauth_clients::deleted_at.is_null())
                .order((oauth_clients::created_at.asc(), oauth_clients::id.asc()))
                .limit(i64::from(limit))
                .select(ClientRow::as_select());
            Ok(match after {
                None => listed.load(conn).await?,
                Some((at, id)) => {
                    listed
                        .filter(
                            oauth_clients::created_at
                                .gt(at)
                                .or(oauth_clients::created_at
                                    .eq(at)
                                    .and(oauth_clients::id.gt(id))),
                        )
                        .load(conn)
                        .await?
                }
            })
        })
        .map_err(infra)?;
        rows.into_iter()
            .map(OAuthClient::try_from)
            .collect::<Result<_, _>>()
            .map_err(infra)
    }

    async fn set_client_secret(&self, id: &ClientId, hash: &str) -> Result<bool, InfraError> {
        let (id, hash) = (id.as_str().to_owned(), hash.to_owned());
        let changed = with_conn!(self, |conn| {
            Ok(diesel::update(
                oauth_clients::table
                    .find(id)
                    .filter(oauth_clients::deleted_at.is_null()),
            )
            .set(oauth_clients::secret_hash.eq(Some(hash)))
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(changed == 1)
    }

    async fn delete_client(&self, id: &ClientId, at: OffsetDateTime) -> Result<bool, InfraError> {
        let id = id.as_str().to_owned();
        with_tx!(self, |db, conn| {
            let deleted = diesel::update(
                oauth_clients::table
                    .find(id.clone())
                    .filter(oauth_clients::deleted_at.is_null()),
            )
            .set(oauth_clients::deleted_at.eq(Some(DbTs(at))))
            .execute(conn)
            .await?;
            if deleted == 1 {
                db.checkpoint("delete_client:tombstone")?;
                diesel::update(
                    projects::table.filter(projects::oauth_client_id.eq(Some(id.clone()))),
                )
                .set(projects::oauth_client_id.eq(None::<String>))
                .execute(conn)
                .await?;
                diesel::update(
                    oauth_grants::table
                        .filter(oauth_grants::client_id.eq(id))
                        .filter(oauth_grants::revoked_at.is_null()),
                )
                .set(oauth_grants::revoked_at.eq(Some(DbTs(at))))
                .execute(conn)
                .await?;
            }
            Ok(deleted == 1)
        })
        .map_err(infra)
    }

    async fn touch_client(&self, id: &ClientId, at: OffsetDateTime) -> Result<(), InfraError> {
        let id = id.as_str().to_owned();
        with_conn!(self, |conn| {
            diesel::update(oauth_clients::table.find(id))
                .set(oauth_clients::last_used_at.eq(Some(DbTs(at))))
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn idle_dynamic_clients(
        &self,
        before: OffsetDateTime,
    ) -> Result<Vec<ClientId>, InfraError> {
        let ids: Vec<String> = with_conn!(self, |conn| {
            Ok(oauth_clients::table
                .filter(oauth_clients::deleted_at.is_null())
                .filter(oauth_clients::registration.eq(Registration::Dynamic.as_str()))
                .filter(
                    oauth_clients::last_used_at
                        .lt(DbTs(before))
                        .or(oauth_clients::last_used_at
                            .is_null()
                            .and(oauth_clients::created_at.lt(DbTs(before)))),
                )
                .select(oauth_clients::id)
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        ids.iter()
            .map(|id| {
                ClientId::parse(id)
                    .ok_or_else(|| infra(StoreError::Corrupt(format!("oauth client id {id}"))))
            })
            .collect()
    }
}
