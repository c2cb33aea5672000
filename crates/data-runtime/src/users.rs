//! A database's end users in its `auth` schema, the `TenantUsers` adapter: statements run
//! as the database's owner role on a small pool of its own, since the owner owns the
//! schema (as `postgres` owns Supabase's) and no role a token can name may read it. The
//! users' rows here; their sessions and refresh tokens in `sessions.rs`; their one-time
//! links and codes in `one_time.rs`; the schema made at start and a user's row as read in
//! `schema.rs`.

mod one_time;
mod schema;
mod sessions;

use std::time::Duration;

use async_trait::async_trait;
use quire_databases::{
    AuthSettings, CodeTry, ConfirmationTry, EndUser, NewEndUser, OneTimeHashes, Rotation,
    SignOutScope, TenantUsers, UserChange, UserWriteError,
};
use quire_kernel::InfraError;
use serde_json::{Map, Value};
use time::OffsetDateTime;
use tokio_postgres::Client;
use uuid::Uuid;

use self::schema::{USER_COLUMNS, user_of};
use crate::pool::{Acquire, Lent, Pool};

/// PostgreSQL's `unique_violation`.
const UNIQUE_VIOLATION: &str = "23505";

pub(crate) struct Users {
    pool: Pool<Client>,
}

impl std::fmt::Debug for Users {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Users")
    }
}

/// A failure, with PostgreSQL's own message when it sent one (the error's `Display` says
/// only "db error"). Messages name objects, never values.
fn infra<E: std::fmt::Display + AsDbError>(what: &str, e: &E) -> InfraError {
    match e.db_message() {
        Some(message) => InfraError::new(format!("{what}: {message}")),
        None => InfraError::new(format!("{what}: {e}")),
    }
}

trait AsDbError {
    fn db_message(&self) -> Option<String>;
}

impl AsDbError for tokio_postgres::Error {
    fn db_message(&self) -> Option<String> {
        self.as_db_error()
            .map(|db| format!("{} ({})", db.message(), db.code().code()))
    }
}

fn acquired(e: Acquire<tokio_postgres::Error>) -> InfraError {
    match e {
        Acquire::Saturated => {
            InfraError::unavailable("no connection as the database owner came free")
        }
        Acquire::Connect(e) => infra("connecting as the database owner", &e),
    }
}

fn write_error(e: &tokio_postgres::Error) -> UserWriteError {
    // Another user's id (the admin API may name one) is no address taken.
    let on_id = e
        .as_db_error()
        .and_then(|db| db.constraint())
        .is_some_and(|c| c == "users_pkey");
    if e.code().is_some_and(|c| c.code() == UNIQUE_VIOLATION) && !on_id {
        UserWriteError::EmailTaken
    } else {
        UserWriteError::Infra(infra("writing a user", e))
    }
}

impl Users {
    pub fn new(pool: Pool<Client>) -> Self {
        Self { pool }
    }

    async fn conn(&self) -> Result<Lent<'_, Client>, InfraError> {
        self.pool.get().await.map_err(acquired)
    }
}

#[async_trait]
impl TenantUsers for Users {
    async fn settings(&self) -> Result<AuthSettings, InfraError> {
        let mut conn = self.conn().await?;
        let row = conn
            .query_opt(
                "SELECT disable_signup, confirm_email, nullif(trim(site_url), ''), \
                 array_remove(coalesce(uri_allow_list, '{}'), NULL) FROM auth.settings LIMIT 1",
                &[],
            )
            .await
            .map_err(|e| infra("reading the auth settings", &e))?;
        conn.clean();
        let Some(row) = row else {
            return Ok(AuthSettings::default());
        };
        let read = |e: tokio_postgres::Error| infra("auth settings", &e);
        Ok(AuthSettings {
            disable_signup: row.try_get(0).map_err(read)?,
            confirm_email: row.try_get(1).map_err(read)?,
            site_url: row.try_get(2).map_err(read)?,
            uri_allow_list: row.try_get(3).map_err(read)?,
        })
    }

    async fn sign_up_user(&self, user: &NewEndUser) -> Result<EndUser, UserWriteError> {
        let mut conn = self.conn().await?;
        // One statement: the insert, or the replacement of an unconfirmed user of the
        // address (the unique index on `lower(email)` decides, so racing sign-ups leave one
        // user), with that user's sessions ended and its mailed code and link dead. A confirmed user is left as it is, and no
        // row comes back.
        let sql = format!(
            "WITH u AS (INSERT INTO auth.users (id, email, encrypted_password, \
             email_confirmed_at, raw_user_meta_data, created_at, updated_at, \
             confirmation_token_hash, confirmation_sent_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $6, $7::text, CASE WHEN $7::text IS NULL THEN NULL ELSE $6::timestamptz END) \
             ON CONFLICT ((lower(email))) DO UPDATE SET email = EXCLUDED.email, \
             encrypted_password = EXCLUDED.encrypted_password, \
             email_confirmed_at = EXCLUDED.email_confirmed_at, \
             raw_user_meta_data = EXCLUDED.raw_user_meta_data, \
             created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, \
             last_sign_in_at = NULL, \
             confirmation_token_hash = EXCLUDED.confirmation_token_hash, \
             confirmation_sent_at = EXCLUDED.confirmation_sent_at, confirmation_tries = 0, \
             recovery_token_hash = NULL, recovery_code_hash = NULL, recovery_sent_at = NULL, \
             recovery_tries = 0 \
             WHERE auth.users.email_confirmed_at IS NULL \
             RETURNING {USER_COLUMNS}), \
             ended AS (DELETE FROM auth.sessions WHERE user_id IN (SELECT id FROM u)) \
             SELECT {USER_COLUMNS} FROM u"
        );
        let row = conn
            .query_opt(
                &sql,
                &[
                    &user.id,
                    &user.email,
                    &user.password_hash,
                    &user.email_confirmed_at,
                    &user.user_metadata,
                    &user.now,
                    &user.confirmation_hash,
                ],
            )
            .await
            .map_err(|e| write_error(&e));
        conn.clean();
        match row? {
            Some(row) => Ok(user_of(&row)?),
            None => Err(UserWriteError::EmailTaken),
        }
    }

    async fn user_by_email(&self, email: &str) -> Result<Option<(EndUser, String)>, InfraError> {
        let mut conn = self.conn().await?;
        let sql = format!(
            "SELECT {USER_COLUMNS}, encrypted_password FROM auth.users WHERE lower(email) = lower($1)"
        );
        let row = conn
            .query_opt(&sql, &[&email])
            .await
            .map_err(|e| infra("reading a user", &e))?;
        conn.clean();
        row.map(|row| {
            let hash = row
                .try_get(8)
                .map_err(|e| infra("reading a password hash", &e))?;
            Ok((user_of(&row)?, hash))
        })
        .transpose()
    }

    async fn user(&self, id: Uuid) -> Result<Option<EndUser>, InfraError> {
        let mut conn = self.conn().await?;
        let sql = format!("SELECT {USER_COLUMNS} FROM auth.users WHERE id = $1");
        let row = conn
            .query_opt(&sql, &[&id])
            .await
            .map_err(|e| infra("reading a user", &e))?;
        conn.clean();
        row.as_ref().map(user_of).transpose()
    }

    async fn confirmation_pending(
        &self,
        token_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<bool, InfraError> {
        let mut conn = self.conn().await?;
        let row = conn
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM auth.users WHERE confirmation_token_hash = $1 \
                 AND email_confirmed_at IS NULL AND confirmation_sent_at > $2 \
                 AND confirmation_tries < $3::bigint)",
                &[&token_hash, &(now - within), &i64::from(tries)],
            )
            .await
            .map_err(|e| infra("reading a confirmation", &e))?;
        conn.clean();
        row.try_get(0)
            .map_err(|e| infra("reading a confirmation", &e))
    }

    async fn try_confirmation(
        &self,
        token_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<Option<ConfirmationTry>, InfraError> {
        let mut conn = self.conn().await?;
        // Counted before the password is checked, in the statement that reads the hash:
        // racing tries take turns on the row, and never more than `tries` get a hash.
        let row = conn
            .query_opt(
                "UPDATE auth.users SET confirmation_tries = confirmation_tries + 1 \
                 WHERE confirmation_token_hash = $1 AND email_confirmed_at IS NULL \
                 AND confirmation_sent_at > $2 AND confirmation_tries < $3::bigint \
                 RETURNING encrypted_password, $3::bigint - confirmation_tries",
                &[&token_hash, &(now - within), &i64::from(tries)],
            )
            .await
            .map_err(|e| infra("counting a confirmation try", &e))?;
        conn.clean();
        row.map(|row| {
            let read = |e: tokio_postgres::Error| infra("reading a confirmation try", &e);
            let left: i64 = row.try_get(1).map_err(read)?;
            Ok(ConfirmationTry {
                password_hash: row.try_get(0).map_err(read)?,
                tries_left: u32::try_from(left).unwrap_or(0),
            })
        })
        .transpose()
    }

    async fn confirm_email(
        &self,
        token_hash: &str,
        password_hash: &str,
        now: OffsetDateTime,
        within: Duration,
    ) -> Result<Option<EndUser>, InfraError> {
        let mut conn = self.conn().await?;
        let sql = format!(
            "UPDATE auth.users SET email_confirmed_at = $2, updated_at = $2, \
             confirmation_token_hash = NULL \
             WHERE confirmation_token_hash = $1 AND email_confirmed_at IS NULL \
             AND confirmation_sent_at > $3 AND encrypted_password = $4 \
             RETURNING {USER_COLUMNS}"
        );
        let row = conn
            .query_opt(&sql, &[&token_hash, &now, &(now - within), &password_hash])
            .await
            .map_err(|e| infra("confirming an address", &e))?;
        conn.clean();
        row.as_ref().map(user_of).transpose()
    }

    async fn update_user(
        &self,
        id: Uuid,
        change: &UserChange,
        now: OffsetDateTime,
    ) -> Result<Option<EndUser>, UserWriteError> {
        let mut conn = self.conn().await?;
        let metadata = change.user_metadata.clone().map(Value::Object);
        let app_metadata = change.app_metadata.clone().map(Value::Object);
        // A new password spends the links and codes mailed before it.
        let sql = format!(
            "UPDATE auth.users SET email = coalesce($2, email), \
             encrypted_password = coalesce($3, encrypted_password), \
             raw_user_meta_data = raw_user_meta_data || coalesce($4, '{{}}'::jsonb), \
             raw_app_meta_data = raw_app_meta_data || coalesce($6, '{{}}'::jsonb), \
             email_confirmed_at = coalesce(email_confirmed_at, $7), \
             recovery_token_hash = CASE WHEN $3::text IS NULL THEN recovery_token_hash END, \
             recovery_code_hash = CASE WHEN $3::text IS NULL THEN recovery_code_hash END, \
             confirmation_token_hash = CASE WHEN $3::text IS NULL \
                 THEN confirmation_token_hash END, \
             updated_at = $5 WHERE id = $1 RETURNING {USER_COLUMNS}"
        );
        let row = conn
            .query_opt(
                &sql,
                &[
                    &id,
                    &change.email,
                    &change.password_hash,
                    &metadata,
                    &now,
                    &app_metadata,
                    &change.confirmed_at,
                ],
            )
            .await
            .map_err(|e| write_error(&e));
        conn.clean();
        Ok(row?.as_ref().map(user_of).transpose()?)
    }

    async fn insert_user(
        &self,
        user: &NewEndUser,
        app_metadata: Option<&Map<String, Value>>,
    ) -> Result<EndUser, UserWriteError> {
        let mut conn = self.conn().await?;
        let app_metadata = app_metadata.cloned().map(Value::Object);
        let sql = format!(
            "INSERT INTO auth.users (id, email, encrypted_password, email_confirmed_at, \
             raw_user_meta_data, raw_app_meta_data, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, \
             '{{\"provider\": \"email\", \"providers\": [\"email\"]}}'::jsonb \
             || coalesce($6, '{{}}'::jsonb), $7, $7) RETURNING {USER_COLUMNS}"
        );
        let row = conn
            .query_one(
                &sql,
                &[
                    &user.id,
                    &user.email,
                    &user.password_hash,
                    &user.email_confirmed_at,
                    &user.user_metadata,
                    &app_metadata,
                    &user.now,
                ],
            )
            .await
            .map_err(|e| write_error(&e));
        conn.clean();
        Ok(user_of(&row?)?)
    }

    async fn set_one_time(
        &self,
        user: Uuid,
        hashes: &OneTimeHashes,
        now: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        one_time::set(self, user, hashes, now).await
    }

    async fn try_code(
        &self,
        email: &str,
        code_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<CodeTry, InfraError> {
        one_time::try_code(self, email, code_hash, now, within, tries).await
    }

    async fn spend_link(
        &self,
        token_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<Option<EndUser>, InfraError> {
        one_time::spend_link(self, token_hash, now, within, tries).await
    }

    async fn renew_confirmation(
        &self,
        email: &str,
        token_hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<EndUser>, InfraError> {
        one_time::renew_confirmation(self, email, token_hash, now).await
    }

    async fn start_session(
        &self,
        user: Uuid,
        session: Uuid,
        token_hash: &str,
        now: OffsetDateTime,
    ) -> Result<EndUser, InfraError> {
        sessions::start(self, user, session, token_hash, now).await
    }

    async fn rotate(
        &self,
        presented: &str,
        successor: &str,
        now: OffsetDateTime,
        grace: Duration,
    ) -> Result<Rotation, InfraError> {
        sessions::rotate(self, presented, successor, now, grace).await
    }

    async fn session_open(&self, session: Uuid) -> Result<bool, InfraError> {
        sessions::open(self, session).await
    }

    async fn end_sessions(
        &self,
        user: Uuid,
        session: Uuid,
        scope: SignOutScope,
    ) -> Result<(), InfraError> {
        sessions::end(self, user, session, scope).await
    }

    async fn list_users(&self, offset: u64, limit: u32) -> Result<(Vec<EndUser>, u64), InfraError> {
        let mut conn = self.conn().await?;
        let sql = format!(
            "SELECT {USER_COLUMNS} FROM auth.users ORDER BY created_at DESC, id LIMIT $1 OFFSET $2"
        );
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        let rows = conn
            .query(&sql, &[&i64::from(limit), &offset])
            .await
            .map_err(|e| infra("listing users", &e))?;
        let count = conn
            .query_one("SELECT count(*) FROM auth.users", &[])
            .await
            .map_err(|e| infra("counting users", &e))?;
        conn.clean();
        let total: i64 = count.try_get(0).map_err(|e| infra("counting users", &e))?;
        let users = rows.iter().map(user_of).collect::<Result<_, _>>()?;
        Ok((users, u64::try_from(total).unwrap_or(0)))
    }

    async fn delete_user(&self, id: Uuid) -> Result<bool, InfraError> {
        let mut conn = self.conn().await?;
        let deleted = conn
            .execute("DELETE FROM auth.users WHERE id = $1", &[&id])
            .await
            .map_err(|e| infra("deleting a user", &e))?;
        conn.clean();
        Ok(deleted > 0)
    }
}
