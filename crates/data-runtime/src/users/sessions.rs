//! A user's sessions and their refresh tokens: started at sign-in, rotated a token at a
//! time (a reused token ends its session), and ended at sign-out.

use std::time::Duration;

use quire_databases::{EndUser, Rotation, SignOutScope};
use quire_kernel::InfraError;
use time::OffsetDateTime;
use tokio_postgres::{Client, Row};
use uuid::Uuid;

use super::schema::{USER_COLUMNS, user_of};
use super::{Users, infra};
use crate::pool::Lent;

/// What a rotation's transaction decided (read into a [`Rotation`] once it committed).
enum Turn {
    Unknown,
    Reused,
    Rotated(Row, Uuid),
}

impl Users {
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

pub(super) async fn start(
    users: &Users,
    user: Uuid,
    session: Uuid,
    token_hash: &str,
    now: OffsetDateTime,
) -> Result<EndUser, InfraError> {
    let mut conn = users.conn().await?;
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

pub(super) async fn rotate(
    users: &Users,
    presented: &str,
    successor: &str,
    now: OffsetDateTime,
    grace: Duration,
) -> Result<Rotation, InfraError> {
    let grace_start = now - grace;
    let outcome = users
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

pub(super) async fn open(users: &Users, session: Uuid) -> Result<bool, InfraError> {
    let mut conn = users.conn().await?;
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

pub(super) async fn end(
    users: &Users,
    user: Uuid,
    session: Uuid,
    scope: SignOutScope,
) -> Result<(), InfraError> {
    let filter = match scope {
        SignOutScope::Global => "",
        SignOutScope::Local => " AND id = $2",
        SignOutScope::Others => " AND id <> $2",
    };
    let sql =
        format!("DELETE FROM auth.sessions WHERE user_id = $1 AND ($2::uuid IS NOT NULL){filter}");
    let mut conn = users.conn().await?;
    conn.execute(&sql, &[&user, &session])
        .await
        .map_err(|e| infra("ending sessions", &e))?;
    conn.clean();
    Ok(())
}
