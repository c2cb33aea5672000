//! `SigningKeyStore` on both backends: the OAuth signing keys, each private key sealed under
//! the server's key at rest and its public half in base64.

use async_trait::async_trait;
use base64::Engine;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::InfraError;
use quire_oauth::{SigningKey, SigningKeyStore};

use crate::accounts::secrets::{oauth_key_purpose, open_oauth_key};
use crate::db::{Database, with_conn};
use crate::error::infra;
use crate::schema::oauth_signing_keys;
use crate::types::DbTs;

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = oauth_signing_keys)]
struct KeyRow {
    kid: String,
    private_key: String,
    public_key: String,
    created_at: DbTs,
    activates_at: DbTs,
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

#[async_trait]
impl SigningKeyStore for Database {
    async fn signing_keys(&self) -> Result<Vec<SigningKey>, InfraError> {
        let sealing = self.sealing_key().map_err(infra)?;
        let rows: Vec<KeyRow> = with_conn!(self, |conn| {
            Ok(oauth_signing_keys::table
                .order(oauth_signing_keys::activates_at.asc())
                .select(KeyRow::as_select())
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        rows.into_iter()
            .map(|r| {
                let corrupt = || InfraError::new(format!("signing key {}: encoding", r.kid));
                Ok(SigningKey {
                    private_pkcs8: open_oauth_key(&sealing, &r.kid, r.private_key)
                        .map_err(infra)?,
                    public: b64().decode(&r.public_key).map_err(|_| corrupt())?,
                    kid: r.kid,
                    created_at: r.created_at.0,
                    activates_at: r.activates_at.0,
                })
            })
            .collect()
    }

    async fn insert_signing_key(&self, key: &SigningKey) -> Result<(), InfraError> {
        let sealing = self.sealing_key().map_err(infra)?;
        let row = KeyRow {
            kid: key.kid.clone(),
            private_key: sealing
                .seal(&oauth_key_purpose(&key.kid), &key.private_pkcs8)
                .as_stored()
                .to_owned(),
            public_key: b64().encode(&key.public),
            created_at: DbTs(key.created_at),
            activates_at: DbTs(key.activates_at),
        };
        with_conn!(self, |conn| {
            diesel::insert_into(oauth_signing_keys::table)
                .values(&row)
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn delete_signing_keys(&self, kids: &[String]) -> Result<(), InfraError> {
        let kids = kids.to_vec();
        with_conn!(self, |conn| {
            diesel::delete(oauth_signing_keys::table.filter(oauth_signing_keys::kid.eq_any(kids)))
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }
}
