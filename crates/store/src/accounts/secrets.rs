//! Secrets the service makes for itself and shares between replicas, sealed at rest under
//! the server's key (`QUIRE_SECRET_KEY_FILE`) like every stored key that signs; the start-up
//! step that seals values stored bare before sealing began; and the re-sealing of every
//! sealed value under a new key.

use base64::Engine;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_accounts::{SealedSecret, SealingKey};
use quire_kernel::{AccountId, InfraError};

use crate::db::{Database, with_conn, with_tx};
use crate::error::StoreError;
use crate::schema::{accounts, oauth_signing_keys, server_secrets, sessions};
use crate::types::DbId;

/// Every sealed value starts so; a bare value never does ('.' is in neither base64
/// alphabet of the values stored before sealing).
const SEALED: &str = "v1.%";

/// What a server secret is sealed for: it opens only in its own row.
fn secret_purpose(name: &str) -> String {
    format!("server secret {name}")
}

/// What an OAuth private key is sealed for: it opens only in its own row.
pub(crate) fn oauth_key_purpose(kid: &str) -> String {
    format!("oauth signing key {kid}")
}

/// The PKCS#8 document of an OAuth key as stored before sealing.
pub(crate) fn bare_oauth_key(kid: &str, stored: &str) -> Result<Vec<u8>, StoreError> {
    base64::engine::general_purpose::STANDARD
        .decode(stored)
        .map_err(|_| StoreError::Corrupt(format!("signing key {kid}: encoding")))
}

/// Opens a stored OAuth private key: sealed, or bare from before sealing (the start-up step
/// seals those).
pub(crate) fn open_oauth_key(
    key: &SealingKey,
    kid: &str,
    stored: String,
) -> Result<Vec<u8>, StoreError> {
    let stored = SealedSecret::stored(stored);
    if stored.is_legacy() {
        return bare_oauth_key(kid, stored.as_stored());
    }
    key.open(&oauth_key_purpose(kid), &stored)
        .map_err(|e| StoreError::Sealing(e.to_string()))
}

fn open_secret(key: &SealingKey, name: &str, stored: String) -> Result<Vec<u8>, StoreError> {
    let stored = SealedSecret::stored(stored);
    if stored.is_legacy() {
        return Ok(stored.as_stored().as_bytes().to_vec());
    }
    key.open(&secret_purpose(name), &stored)
        .map_err(|e| StoreError::Sealing(e.to_string()))
}

/// What the start-up step sealed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SealedAtStart {
    pub server_secrets: u64,
    pub oauth_keys: u64,
}

/// What a re-sealing under a new key re-sealed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resealed {
    pub totp_secrets: u64,
    pub pending_totp_secrets: u64,
    pub server_secrets: u64,
    pub oauth_keys: u64,
}

impl Database {
    /// The secret called `name`: the first caller (on any replica) stores a fresh random
    /// value (256 bits, base64url), sealed, and every caller afterwards reads that same
    /// value.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure, without a sealing key, or when the stored value
    /// does not open under it (the message names the secret, never its value).
    pub async fn server_secret(&self, name: &str) -> Result<String, InfraError> {
        let key = self.sealing_key()?;
        let row = name.to_owned();
        let fresh = key.seal(
            &secret_purpose(name),
            quire_kernel::secret::random_url_token().as_bytes(),
        );
        let stored = with_conn!(self, |conn| {
            diesel::insert_into(server_secrets::table)
                .values((
                    server_secrets::name.eq(&row),
                    server_secrets::value.eq(fresh.as_stored()),
                ))
                .on_conflict_do_nothing()
                .execute(conn)
                .await?;
            Ok(server_secrets::table
                .find(&row)
                .select(server_secrets::value)
                .first::<String>(conn)
                .await?)
        })?;
        let plain = open_secret(&key, name, stored)?;
        String::from_utf8(plain)
            .map_err(|_| StoreError::Corrupt(format!("server secret {name}: not text")).into())
    }

    /// Seals the server secrets and OAuth private keys stored bare before sealing began
    /// (run at start-up, before anything reads them). All or nothing, in one transaction;
    /// a sealed value is left as it is, so running it again changes nothing, and replicas
    /// racing each seal a value once.
    ///
    /// # Errors
    /// [`StoreError`] on storage failure, without a sealing key, or for a bare OAuth key
    /// that is not base64 (nothing is changed then).
    pub async fn seal_stored_secrets(&self) -> Result<SealedAtStart, StoreError> {
        let key = self.sealing_key()?;
        with_tx!(self, |db, conn| {
            let mut done = SealedAtStart::default();
            let bare: Vec<(String, String)> = server_secrets::table
                .filter(server_secrets::value.not_like(SEALED))
                .select((server_secrets::name, server_secrets::value))
                .load(conn)
                .await?;
            for (name, value) in &bare {
                let sealed = key.seal(&secret_purpose(name), value.as_bytes());
                done.server_secrets += diesel::update(
                    server_secrets::table
                        .find(name)
                        .filter(server_secrets::value.eq(value)),
                )
                .set(server_secrets::value.eq(sealed.as_stored()))
                .execute(conn)
                .await? as u64;
            }
            db.checkpoint("seal_stored_secrets:server_secrets")?;
            let bare: Vec<(String, String)> = oauth_signing_keys::table
                .filter(oauth_signing_keys::private_key.not_like(SEALED))
                .select((oauth_signing_keys::kid, oauth_signing_keys::private_key))
                .load(conn)
                .await?;
            for (kid, value) in &bare {
                let der = bare_oauth_key(kid, value)?;
                let sealed = key.seal(&oauth_key_purpose(kid), &der);
                done.oauth_keys += diesel::update(
                    oauth_signing_keys::table
                        .find(kid)
                        .filter(oauth_signing_keys::private_key.eq(value)),
                )
                .set(oauth_signing_keys::private_key.eq(sealed.as_stored()))
                .execute(conn)
                .await? as u64;
            }
            Ok(done)
        })
    }

    /// Re-seals every sealed value (second-factor secrets, pending ones, server secrets,
    /// OAuth private keys) from `old` to `new`, in one transaction: a value that does not
    /// open under `old` fails it and leaves every row as it was. Values still bare are
    /// sealed under `new` on the way.
    ///
    /// # Errors
    /// [`StoreError::Sealing`] naming the first value that does not open under `old`;
    /// [`StoreError`] on storage failure.
    pub async fn reseal_all(
        &self,
        old: &SealingKey,
        new: &SealingKey,
    ) -> Result<Resealed, StoreError> {
        let (old, new) = (old.clone(), new.clone());
        let unsealed = |e: &dyn std::fmt::Display| StoreError::Sealing(e.to_string());
        with_tx!(self, |db, conn| {
            let mut done = Resealed::default();
            let totp: Vec<(DbId, Option<String>)> = accounts::table
                .filter(accounts::totp_secret.is_not_null())
                .select((accounts::id, accounts::totp_secret))
                .load(conn)
                .await?;
            for (id, stored) in totp {
                let Some(stored) = stored else { continue };
                let account = AccountId(id.0);
                let secret = old
                    .open_totp(account, &SealedSecret::stored(stored))
                    .map_err(|e| unsealed(&e))?;
                let sealed = new.seal_totp(account, &secret);
                done.totp_secrets += diesel::update(accounts::table.find(id))
                    .set(accounts::totp_secret.eq(Some(sealed.as_stored())))
                    .execute(conn)
                    .await? as u64;
            }
            let pending: Vec<(String, DbId, Option<String>)> = sessions::table
                .filter(sessions::pending_totp_secret.is_not_null())
                .select((
                    sessions::id_hash,
                    sessions::account_id,
                    sessions::pending_totp_secret,
                ))
                .load(conn)
                .await?;
            for (id_hash, account, stored) in pending {
                let Some(stored) = stored else { continue };
                let account = AccountId(account.0);
                let secret = old
                    .open_totp(account, &SealedSecret::stored(stored))
                    .map_err(|e| unsealed(&e))?;
                let sealed = new.seal_totp(account, &secret);
                done.pending_totp_secrets += diesel::update(sessions::table.find(&id_hash))
                    .set(sessions::pending_totp_secret.eq(Some(sealed.as_stored())))
                    .execute(conn)
                    .await? as u64;
            }
            db.checkpoint("reseal_all:totp")?;
            let secrets: Vec<(String, String)> = server_secrets::table
                .select((server_secrets::name, server_secrets::value))
                .load(conn)
                .await?;
            for (name, stored) in secrets {
                let plain = open_secret(&old, &name, stored)?;
                let sealed = new.seal(&secret_purpose(&name), &plain);
                done.server_secrets += diesel::update(server_secrets::table.find(&name))
                    .set(server_secrets::value.eq(sealed.as_stored()))
                    .execute(conn)
                    .await? as u64;
            }
            let keys: Vec<(String, String)> = oauth_signing_keys::table
                .select((oauth_signing_keys::kid, oauth_signing_keys::private_key))
                .load(conn)
                .await?;
            for (kid, stored) in keys {
                let der = open_oauth_key(&old, &kid, stored)?;
                let sealed = new.seal(&oauth_key_purpose(&kid), &der);
                done.oauth_keys += diesel::update(oauth_signing_keys::table.find(&kid))
                    .set(oauth_signing_keys::private_key.eq(sealed.as_stored()))
                    .execute(conn)
                    .await? as u64;
            }
            Ok(done)
        })
    }
}
