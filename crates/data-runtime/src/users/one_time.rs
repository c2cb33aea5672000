//! A user's one-time link and code (recovery and sign-in mails) and a sign-up's link sent
//! again: each given, tried and spent in one statement, so racing tries are each counted
//! and a code is spent once.

use std::time::Duration;

use quire_databases::{CodeTry, EndUser, OneTimeHashes};
use quire_kernel::InfraError;
use time::OffsetDateTime;
use uuid::Uuid;

use super::schema::{USER_COLUMNS, user_of};
use super::{Users, infra};

/// What a spent code or link does besides: the address confirmed, and a user it confirms
/// keeps no password nor sign-up link (either may be whoever signed the address up).
const SPENT: &str = "recovery_token_hash = NULL, recovery_code_hash = NULL, \
    recovery_sent_at = NULL, recovery_tries = 0, \
    encrypted_password = CASE WHEN email_confirmed_at IS NULL THEN '' ELSE encrypted_password END, \
    confirmation_token_hash = CASE WHEN email_confirmed_at IS NULL THEN NULL \
        ELSE confirmation_token_hash END, \
    email_confirmed_at = coalesce(email_confirmed_at, $2), updated_at = $2";

/// Whether the code presented (`$2`) is the user's.
const RIGHT: &str = "recovery_code_hash = $2";

pub(super) async fn set(
    users: &Users,
    user: Uuid,
    hashes: &OneTimeHashes,
    now: OffsetDateTime,
) -> Result<bool, InfraError> {
    let mut conn = users.conn().await?;
    let set = conn
        .execute(
            "UPDATE auth.users SET recovery_token_hash = $2, recovery_code_hash = $3, \
             recovery_sent_at = $4, recovery_tries = 0 WHERE id = $1",
            &[&user, &hashes.token_hash, &hashes.code_hash, &now],
        )
        .await
        .map_err(|e| infra("storing a one-time code", &e))?;
    conn.clean();
    Ok(set > 0)
}

pub(super) async fn try_code(
    users: &Users,
    email: &str,
    code_hash: &str,
    now: OffsetDateTime,
    within: Duration,
    tries: u32,
) -> Result<CodeTry, InfraError> {
    let mut conn = users.conn().await?;
    // Every assignment reads the row as it was: a right code is spent with its link (and
    // the address confirmed, as [`SPENT`] says), a wrong one counted.
    let sql = format!(
        "UPDATE auth.users SET \
         recovery_tries = CASE WHEN {RIGHT} THEN 0 ELSE recovery_tries + 1 END, \
         recovery_token_hash = CASE WHEN {RIGHT} THEN NULL ELSE recovery_token_hash END, \
         recovery_sent_at = CASE WHEN {RIGHT} THEN NULL ELSE recovery_sent_at END, \
         encrypted_password = CASE WHEN {RIGHT} AND email_confirmed_at IS NULL THEN '' \
             ELSE encrypted_password END, \
         confirmation_token_hash = CASE WHEN {RIGHT} AND email_confirmed_at IS NULL THEN NULL \
             ELSE confirmation_token_hash END, \
         email_confirmed_at = CASE WHEN {RIGHT} THEN coalesce(email_confirmed_at, $3) \
             ELSE email_confirmed_at END, \
         updated_at = CASE WHEN {RIGHT} THEN $3 ELSE updated_at END, \
         recovery_code_hash = CASE WHEN {RIGHT} THEN NULL ELSE recovery_code_hash END \
         WHERE lower(email) = lower($1) AND recovery_code_hash IS NOT NULL \
         AND recovery_sent_at > $4 AND recovery_tries < $5::bigint \
         RETURNING {USER_COLUMNS}, recovery_code_hash IS NULL, $5::bigint - recovery_tries"
    );
    let row = conn
        .query_opt(
            &sql,
            &[&email, &code_hash, &now, &(now - within), &i64::from(tries)],
        )
        .await
        .map_err(|e| infra("trying a one-time code", &e))?;
    conn.clean();
    let Some(row) = row else {
        return Ok(CodeTry::Unknown);
    };
    let read = |e: tokio_postgres::Error| infra("reading a one-time code's try", &e);
    if row.try_get::<_, bool>(8).map_err(read)? {
        return Ok(CodeTry::Verified(user_of(&row)?));
    }
    let left: i64 = row.try_get(9).map_err(read)?;
    Ok(CodeTry::Wrong {
        tries_left: u32::try_from(left).unwrap_or(0),
    })
}

pub(super) async fn spend_link(
    users: &Users,
    token_hash: &str,
    now: OffsetDateTime,
    within: Duration,
    tries: u32,
) -> Result<Option<EndUser>, InfraError> {
    let mut conn = users.conn().await?;
    let sql = format!(
        "UPDATE auth.users SET {SPENT} WHERE recovery_token_hash = $1 \
         AND recovery_sent_at > $3 AND recovery_tries < $4::bigint RETURNING {USER_COLUMNS}",
    );
    let row = conn
        .query_opt(
            &sql,
            &[&token_hash, &now, &(now - within), &i64::from(tries)],
        )
        .await
        .map_err(|e| infra("spending a one-time link", &e))?;
    conn.clean();
    row.as_ref().map(user_of).transpose()
}

pub(super) async fn renew_confirmation(
    users: &Users,
    email: &str,
    token_hash: &str,
    now: OffsetDateTime,
) -> Result<Option<EndUser>, InfraError> {
    let mut conn = users.conn().await?;
    let sql = format!(
        "UPDATE auth.users SET confirmation_token_hash = $2, confirmation_sent_at = $3, \
         confirmation_tries = 0 WHERE lower(email) = lower($1) AND email_confirmed_at IS NULL \
         AND encrypted_password <> '' RETURNING {USER_COLUMNS}"
    );
    let row = conn
        .query_opt(&sql, &[&email, &token_hash, &now])
        .await
        .map_err(|e| infra("renewing a confirmation link", &e))?;
    conn.clean();
    row.as_ref().map(user_of).transpose()
}
