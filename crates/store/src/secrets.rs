//! Secrets the service makes for itself and shares between replicas.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::InfraError;

use crate::db::{Database, with_conn};
use crate::schema::server_secrets;

impl Database {
    /// The secret called `name`: the first caller (on any replica) stores a fresh random
    /// value (256 bits, base64url), and every caller afterwards reads that same value.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn server_secret(&self, name: &str) -> Result<String, InfraError> {
        let name = name.to_owned();
        let fresh = quire_kernel::secret::random_url_token();
        with_conn!(self, |conn| {
            diesel::insert_into(server_secrets::table)
                .values((
                    server_secrets::name.eq(&name),
                    server_secrets::value.eq(&fresh),
                ))
                .on_conflict_do_nothing()
                .execute(conn)
                .await?;
            Ok(server_secrets::table
                .find(&name)
                .select(server_secrets::value)
                .first::<String>(conn)
                .await?)
        })
        .map_err(InfraError::from)
    }
}
