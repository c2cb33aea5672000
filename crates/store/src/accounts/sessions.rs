//! `SessionStore` on both backends: dashboard sessions, the second factor each has given,
//! and the enrollment each has pending.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_accounts::{SealedSecret, Session, SessionStore};
use quire_kernel::{AccountId, InfraError};
use time::OffsetDateTime;

use crate::db::{Database, with_conn};
use crate::error::infra;
use crate::schema::sessions;
use crate::types::{DbId, DbTs};

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = sessions)]
struct SessionRow {
    id_hash: String,
    account_id: DbId,
    mfa_satisfied: bool,
    created_at: DbTs,
    expires_at: DbTs,
    pending_totp_secret: Option<String>,
}

#[async_trait]
impl SessionStore for Database {
    async fn insert_session(&self, session: &Session) -> Result<(), InfraError> {
        let row = SessionRow {
            id_hash: session.id_hash.clone(),
            account_id: DbId(session.account_id.0),
            mfa_satisfied: session.mfa_satisfied,
            created_at: DbTs(session.created_at),
            expires_at: DbTs(session.expires_at),
            pending_totp_secret: session
                .pending_totp
                .as_ref()
                .map(|s| s.as_stored().to_owned()),
        };
        with_conn!(self, |conn| {
            diesel::insert_into(sessions::table)
                .values(&row)
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn session_by_hash(&self, id_hash: &str) -> Result<Option<Session>, InfraError> {
        let id_hash = id_hash.to_owned();
        let row: Option<SessionRow> = with_conn!(self, |conn| {
            Ok(sessions::table
                .find(&id_hash)
                .select(SessionRow::as_select())
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        Ok(row.map(|r| Session {
            id_hash: r.id_hash,
            account_id: AccountId(r.account_id.0),
            mfa_satisfied: r.mfa_satisfied,
            created_at: r.created_at.0,
            expires_at: r.expires_at.0,
            pending_totp: r.pending_totp_secret.map(SealedSecret::stored),
        }))
    }

    async fn delete_session(&self, id_hash: &str) -> Result<(), InfraError> {
        let id_hash = id_hash.to_owned();
        with_conn!(self, |conn| {
            diesel::delete(sessions::table.find(&id_hash))
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn mark_mfa_satisfied(&self, id_hash: &str) -> Result<(), InfraError> {
        let id_hash = id_hash.to_owned();
        with_conn!(self, |conn| {
            diesel::update(sessions::table.find(&id_hash))
                .set(sessions::mfa_satisfied.eq(true))
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn set_pending_totp(
        &self,
        id_hash: &str,
        secret: Option<&SealedSecret>,
    ) -> Result<(), InfraError> {
        let id_hash = id_hash.to_owned();
        let secret = secret.map(|s| s.as_stored().to_owned());
        with_conn!(self, |conn| {
            diesel::update(sessions::table.find(&id_hash))
                .set(sessions::pending_totp_secret.eq(&secret))
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn delete_other_sessions(
        &self,
        account: AccountId,
        keep: &str,
    ) -> Result<u64, InfraError> {
        let keep = keep.to_owned();
        let n = with_conn!(self, |conn| {
            Ok(diesel::delete(
                sessions::table
                    .filter(sessions::account_id.eq(DbId(account.0)))
                    .filter(sessions::id_hash.ne(&keep)),
            )
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(n as u64)
    }

    async fn delete_expired_sessions(&self, now: OffsetDateTime) -> Result<u64, InfraError> {
        let n = with_conn!(self, |conn| {
            Ok(
                diesel::delete(sessions::table.filter(sessions::expires_at.le(DbTs(now))))
                    .execute(conn)
                    .await?,
            )
        })
        .map_err(infra)?;
        Ok(n as u64)
    }
}
