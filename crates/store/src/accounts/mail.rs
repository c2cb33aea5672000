//! `MailQuota` on both backends: the email route's sends in a rolling 24 hours.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{AccountId, InfraError};
use quire_mail::{MailQuota, Reservation};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::db::{Database, with_conn, with_tx};
use crate::error::infra;
use crate::limits::lock_key;
use crate::schema::email_sends;
use crate::types::{DbId, DbTs};

#[async_trait]
impl MailQuota for Database {
    async fn reserve(
        &self,
        account: AccountId,
        mail_id: Uuid,
        now: OffsetDateTime,
        window: Duration,
        limit: u32,
    ) -> Result<Reservation, InfraError> {
        let account = DbId(account.0);
        let since = DbTs(now - window);
        with_tx!(self, |conn| {
            // Serialise the account's reservations: the count below is then exact.
            lock_key!(conn, "email", account.0.to_string(), now);
            let in_window = email_sends::table
                .filter(email_sends::account_id.eq(account))
                .filter(email_sends::created_at.gt(since));
            let used: i64 = in_window.count().get_result(conn).await?;
            if used >= i64::from(limit) {
                let oldest: DbTs = in_window
                    .select(email_sends::created_at)
                    .order(email_sends::created_at.asc())
                    .first(conn)
                    .await?;
                return Ok(Reservation::Full { oldest: oldest.0 });
            }
            diesel::insert_into(email_sends::table)
                .values((
                    email_sends::mail_id.eq(DbId(mail_id)),
                    email_sends::account_id.eq(account),
                    email_sends::created_at.eq(DbTs(now)),
                ))
                .execute(conn)
                .await?;
            Ok(Reservation::Reserved {
                used: u32::try_from(used + 1).unwrap_or(u32::MAX),
            })
        })
        .map_err(infra)
    }

    async fn release(&self, mail_id: Uuid) -> Result<(), InfraError> {
        with_conn!(self, |conn| {
            diesel::delete(email_sends::table.find(DbId(mail_id)))
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn forget_sends_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError> {
        let n = with_conn!(self, |conn| {
            Ok(
                diesel::delete(email_sends::table.filter(email_sends::created_at.lt(DbTs(cutoff))))
                    .execute(conn)
                    .await?,
            )
        })
        .map_err(infra)?;
        Ok(n as u64)
    }
}
