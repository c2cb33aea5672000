//! A database's end users in its `auth` schema, the `TenantUsers` adapter: statements run
//! as the database's owner role on a small pool of its own, since the owner owns the
//! schema (as `postgres` owns Supabase's) and no role a token can name may read it.

use std::time::Duration;

use async_trait::async_trait;
use quire_databases::{
    AUTH_SCHEMA_SQL, AuthSettings, ConfirmationTry, EndUser, NewEndUser, Rotation, SignOutScope,
    TenantUsers, UserChange, UserWriteError,
};
use quire_kernel::InfraError;
use time::OffsetDateTime;
use tokio_postgres::{Client, Row};
use uuid::Uuid;

use crate::pool::{Acquire, Lent, Pool};

const USER_COLUMNS: &str = "id, email, email_confirmed_at, raw_user_meta_data, \
    raw_app_meta_data, created_at, updated_at, last_sign_in_at";

/// PostgreSQL's `unique_violation`.
const UNIQUE_VIOLATION: &str = "23505";

/// What a rotation's transaction decided (read into a [`Rotation`] once it committed).
enum Turn {
    Unknown,
    Reused,
    Rotated(Row, Uuid),
}

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

fn user_of(row: &Row) -> Result<EndUser, InfraError> {
    let read = |e: tokio_postgres::Error| infra("reading a user", &e);
    Ok(EndUser {
        id: row.try_get(0).map_err(read)?,
        email: row.try_get(1).map_err(read)?,
        email_confirmed_at: row.try_get(2).map_err(read)?,
        user_metadata: row.try_get(3).map_err(read)?,
        app_metadata: row.try_get(4).map_err(read)?,
        created_at: row.try_get(5).map_err(read)?,
        updated_at: row.try_get(6).map_err(read)?,
        last_sign_in_at: row.try_get(7).map_err(read)?,
    })
}

fn write_error(e: &tokio_postgres::Error) -> UserWriteError {
    if e.code().is_some_and(|c| c.code() == UNIQUE_VIOLATION) {
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

    /// Makes the `auth` schema if the database lacks any of it.
    pub async fn ensure_schema(&self) -> Result<(), InfraError> {
        let mut conn = self.conn().await?;
        let sql = format!("BEGIN;\n{AUTH_SCHEMA_SQL}\nCOMMIT;");
        conn.batch_execute(&sql)
            .await
            .map_err(|e| infra("making the auth schema", &e))?;
        conn.clean();
        Ok(())
    }

    /// Runs `work` in a transaction on one connection: committed when it returns `Ok`,
    /// rolled back otherwise (a connection whose rollback fails is not reused).
    async fn in_transaction<T>(
        &self,
        work: impl AsyncFnOnce(&Lent<'_, Client>) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, InfraError> {
        let mut conn = self.conn().await?;
        conn.batch_execute("BEGIN")
            .await
            .map_err(|e| infra("beginning an auth transaction", &e))?;
        match work(&conn).await {
            Ok(value) => {
                conn.batch_execute("COMMIT")
                    .await
                    .map_err(|e| infra("committing an auth transaction", &e))?;
                conn.clean();
                Ok(value)
            }
            Err(e) => {
                if conn.batch_execute("ROLLBACK").await.is_ok() {
                    conn.clean();
                }
                Err(infra("an auth transaction", &e))
            }
        }
    }
}

#[async_trait]
impl TenantUsers for Users {
    async fn settings(&self) -> Result<AuthSettings, InfraError> {
        let mut conn = self.conn().await?;
        let row = conn
            .query_opt(
                "SELECT disable_signup, confirm_email FROM auth.settings LIMIT 1",
                &[],
            )
            .await
            .map_err(|e| infra("reading the auth settings", &e))?;
        conn.clean();
        let Some(row) = row else {
            return Ok(AuthSettings::default());
        };
        Ok(AuthSettings {
            disable_signup: row.try_get(0).map_err(|e| infra("auth settings", &e))?,
            confirm_email: row.try_get(1).map_err(|e| infra("auth settings", &e))?,
        })
    }

    async fn sign_up_user(&self, user: &NewEndUser) -> Result<EndUser, UserWriteError> {
        let mut conn = self.conn().await?;
        // One statement: the insert, or the replacement of an unconfirmed user of the
        // address (the unique index on `lower(email)` decides, so racing sign-ups leave one
        // user), with that user's sessions ended. A confirmed user is left as it is, and no
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
             confirmation_sent_at = EXCLUDED.confirmation_sent_at, confirmation_tries = 0 \
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
        let metadata = change.user_metadata.clone().map(serde_json::Value::Object);
        let sql = format!(
            "UPDATE auth.users SET email = coalesce($2, email), \
             encrypted_password = coalesce($3, encrypted_password), \
             raw_user_meta_data = raw_user_meta_data || coalesce($4, '{{}}'::jsonb), \
             updated_at = $5 WHERE id = $1 RETURNING {USER_COLUMNS}"
        );
        let row = conn
            .query_opt(
                &sql,
                &[&id, &change.email, &change.password_hash, &metadata, &now],
            )
            .await
            .map_err(|e| write_error(&e));
        conn.clean();
        Ok(row?.as_ref().map(user_of).transpose()?)
    }

    async fn start_session(
        &self,
        user: Uuid,
        session: Uuid,
        token_hash: &str,
        now: OffsetDateTime,
    ) -> Result<EndUser, InfraError> {
        let mut conn = self.conn().await?;
        // One statement, so one transaction: the session, its first token, the sign-in.
        let sql = format!(
            "WITH s AS (INSERT INTO auth.sessions (id, user_id, created_at) \
                 VALUES ($2, $1, $4) RETURNING id), \
             t AS (INSERT INTO auth.refresh_tokens (token_hash, session_id, created_at) \
                 SELECT $3, id, $4 FROM s) \
             UPDATE auth.users SET last_sign_in_at = $4 WHERE id = $1 RETURNING {USER_COLUMNS}"
        );
        let row = conn
            .query_one(&sql, &[&user, &session, &token_hash, &now])
            .await
            .map_err(|e| infra("starting a session", &e))?;
        conn.clean();
        user_of(&row)
    }

    async fn rotate(
        &self,
        presented: &str,
        successor: &str,
        now: OffsetDateTime,
        grace: Duration,
    ) -> Result<Rotation, InfraError> {
        let grace_start = now - grace;
        let outcome = self
            .in_transaction(async |conn| {
                // The token and its session locked: presentations of one session take
                // turns, and each sees what the one before it did.
                let Some(found) = conn
                    .query_opt(
                        "SELECT t.session_id, t.revoked_at, s.user_id \
                         FROM auth.refresh_tokens t JOIN auth.sessions s ON s.id = t.session_id \
                         WHERE t.token_hash = $1 FOR UPDATE OF t, s",
                        &[&presented],
                    )
                    .await?
                else {
                    return Ok(Turn::Unknown);
                };
                let session: Uuid = found.try_get(0)?;
                let revoked_at: Option<OffsetDateTime> = found.try_get(1)?;
                let user: Uuid = found.try_get(2)?;
                if let Some(at) = revoked_at {
                    let current = conn
                        .query_opt(
                            "SELECT token_hash FROM auth.refresh_tokens \
                             WHERE parent_hash = $1 AND revoked_at IS NULL",
                            &[&presented],
                        )
                        .await?;
                    match current {
                        // Just rotated, its successor unused: that successor, again.
                        Some(row) if at > grace_start => {
                            if row.try_get::<_, String>(0)? != successor {
                                return Ok(Turn::Unknown);
                            }
                        }
                        _ => {
                            conn.execute("DELETE FROM auth.sessions WHERE id = $1", &[&session])
                                .await?;
                            return Ok(Turn::Reused);
                        }
                    }
                } else {
                    conn.execute(
                        "UPDATE auth.refresh_tokens SET revoked_at = $2 WHERE token_hash = $1",
                        &[&presented, &now],
                    )
                    .await?;
                    conn.execute(
                        "INSERT INTO auth.refresh_tokens (token_hash, session_id, parent_hash, created_at) \
                         VALUES ($1, $2, $3, $4)",
                        &[&successor, &session, &presented, &now],
                    )
                    .await?;
                    conn.execute(
                        "UPDATE auth.sessions SET refreshed_at = $2 WHERE id = $1",
                        &[&session, &now],
                    )
                    .await?;
                }
                let sql = format!("SELECT {USER_COLUMNS} FROM auth.users WHERE id = $1");
                let row = conn.query_one(&sql, &[&user]).await?;
                Ok(Turn::Rotated(row, session))
            })
            .await?;
        Ok(match outcome {
            Turn::Unknown => Rotation::Unknown,
            Turn::Reused => Rotation::Reused,
            Turn::Rotated(row, session) => Rotation::Rotated {
                user: user_of(&row)?,
                session,
            },
        })
    }

    async fn session_open(&self, session: Uuid) -> Result<bool, InfraError> {
        let mut conn = self.conn().await?;
        let row = conn
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM auth.sessions WHERE id = $1)",
                &[&session],
            )
            .await
            .map_err(|e| infra("reading a session", &e))?;
        conn.clean();
        row.try_get(0).map_err(|e| infra("reading a session", &e))
    }

    async fn end_sessions(
        &self,
        user: Uuid,
        session: Uuid,
        scope: SignOutScope,
    ) -> Result<(), InfraError> {
        let filter = match scope {
            SignOutScope::Global => "",
            SignOutScope::Local => " AND id = $2",
            SignOutScope::Others => " AND id <> $2",
        };
        let sql = format!(
            "DELETE FROM auth.sessions WHERE user_id = $1 AND ($2::uuid IS NOT NULL){filter}"
        );
        let mut conn = self.conn().await?;
        conn.execute(&sql, &[&user, &session])
            .await
            .map_err(|e| infra("ending sessions", &e))?;
        conn.clean();
        Ok(())
    }

    async fn list_users(&self, limit: u32) -> Result<(Vec<EndUser>, u64), InfraError> {
        let mut conn = self.conn().await?;
        let sql =
            format!("SELECT {USER_COLUMNS} FROM auth.users ORDER BY created_at DESC, id LIMIT $1");
        let rows = conn
            .query(&sql, &[&i64::from(limit)])
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
