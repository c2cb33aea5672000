//! `AccountDirectory` on both backends: accounts by handle, and an account's handle and email.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{AccountId, Email, Handle, InfraError};
use quire_pages::AccountDirectory;

use crate::db::{Database, with_conn};
use crate::error::infra;
use crate::schema::accounts;
use crate::types::DbId;

#[async_trait]
impl AccountDirectory for Database {
    async fn account_by_handle(&self, handle: &Handle) -> Result<Option<AccountId>, InfraError> {
        let handle = handle.as_str().to_owned();
        let id: Option<DbId> = with_conn!(self, |conn| {
            Ok(accounts::table
                .filter(accounts::handle.eq(&handle))
                .select(accounts::id)
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        Ok(id.map(|i| AccountId(i.0)))
    }

    async fn accounts_by_handles(
        &self,
        handles: &[Handle],
    ) -> Result<std::collections::HashMap<Handle, AccountId>, InfraError> {
        let wanted: Vec<String> = handles.iter().map(|h| h.as_str().to_owned()).collect();
        let rows: Vec<(String, DbId)> = with_conn!(self, |conn| {
            Ok(accounts::table
                .filter(accounts::handle.eq_any(&wanted))
                .select((accounts::handle, accounts::id))
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        Ok(rows
            .into_iter()
            .filter_map(|(h, id)| Handle::parse(&h).ok().map(|h| (h, AccountId(id.0))))
            .collect())
    }

    async fn handle_and_email(
        &self,
        account: AccountId,
    ) -> Result<Option<(Handle, Email)>, InfraError> {
        let row: Option<(String, String)> = with_conn!(self, |conn| {
            Ok(accounts::table
                .find(DbId(account.0))
                .select((accounts::handle, accounts::email))
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        row.map(|(h, e)| {
            Ok((
                Handle::parse(&h).map_err(|_| InfraError::new("stored handle is invalid"))?,
                Email::stored(&e),
            ))
        })
        .transpose()
    }
}
