//! `RateLimiter` on both backends, as a sliding log: a request is allowed when fewer than
//! the limit were allowed in the window before it, so no window of that length ever admits
//! more than the limit. Budgets (`take`) keep their slots in the same log, decided by the
//! kernel's `Budget::opens_at`, and give one back by its row id.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{Budget, InfraError, RateLimiter, Slot, Take};
use time::OffsetDateTime;

use crate::db::{Database, with_conn, with_tx};
use crate::error::infra;
use crate::schema::{rate_events, rate_keys};
use crate::types::DbTs;

/// Inside a transaction: writes the row of `(bucket, client)` first, which serialises every
/// other transaction checking the same key until this one ends (a row lock on PostgreSQL,
/// the write lock on SQLite), so a count read after it is exact.
macro_rules! lock_key {
    ($conn:ident, $bucket:expr, $client:expr, $now:expr) => {
        diesel::insert_into($crate::schema::rate_keys::table)
            .values((
                $crate::schema::rate_keys::bucket.eq($bucket),
                $crate::schema::rate_keys::client.eq($client),
                $crate::schema::rate_keys::touched_at.eq($crate::types::DbTs($now)),
            ))
            .on_conflict((
                $crate::schema::rate_keys::bucket,
                $crate::schema::rate_keys::client,
            ))
            .do_update()
            .set($crate::schema::rate_keys::touched_at.eq($crate::types::DbTs($now)))
            .execute($conn)
            .await?;
    };
}
pub(crate) use lock_key;

#[async_trait]
impl RateLimiter for Database {
    async fn hit(
        &self,
        bucket: &str,
        client: &str,
        window: std::time::Duration,
        limit: u32,
        now: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        let since = DbTs(now - window);
        let (bucket, client) = (bucket.to_owned(), client.to_owned());
        with_tx!(self, |conn| {
            lock_key!(conn, bucket.clone(), client.clone(), now);
            let allowed: i64 = rate_events::table
                .filter(rate_events::bucket.eq(&bucket))
                .filter(rate_events::client.eq(&client))
                .filter(rate_events::at.gt(since))
                .count()
                .get_result(conn)
                .await?;
            if allowed >= i64::from(limit) {
                return Ok(false);
            }
            diesel::insert_into(rate_events::table)
                .values((
                    rate_events::bucket.eq(&bucket),
                    rate_events::client.eq(&client),
                    rate_events::at.eq(DbTs(now)),
                ))
                .execute(conn)
                .await?;
            Ok(true)
        })
        .map_err(infra)
    }

    async fn take(
        &self,
        bucket: &str,
        client: &str,
        budget: &Budget,
        now: OffsetDateTime,
    ) -> Result<Take, InfraError> {
        let since = DbTs(now - budget.window);
        let (bucket, client, budget) = (bucket.to_owned(), client.to_owned(), *budget);
        with_tx!(self, |conn| {
            lock_key!(conn, bucket.clone(), client.clone(), now);
            let taken: Vec<DbTs> = rate_events::table
                .filter(rate_events::bucket.eq(&bucket))
                .filter(rate_events::client.eq(&client))
                .filter(rate_events::at.gt(since))
                .select(rate_events::at)
                .load(conn)
                .await?;
            let taken: Vec<OffsetDateTime> = taken.into_iter().map(|t| t.0).collect();
            if let Some(retry_at) = budget.opens_at(&taken, now) {
                return Ok(Take::Refused { retry_at });
            }
            let id: i64 = diesel::insert_into(rate_events::table)
                .values((
                    rate_events::bucket.eq(&bucket),
                    rate_events::client.eq(&client),
                    rate_events::at.eq(DbTs(now)),
                ))
                .returning(rate_events::id)
                .get_result(conn)
                .await?;
            Ok(Take::Taken(Slot(id)))
        })
        .map_err(infra)
    }

    async fn give_back(&self, bucket: &str, client: &str, slot: Slot) -> Result<(), InfraError> {
        let (bucket, client) = (bucket.to_owned(), client.to_owned());
        with_conn!(self, |conn| {
            diesel::delete(
                rate_events::table
                    .filter(rate_events::id.eq(slot.0))
                    .filter(rate_events::bucket.eq(&bucket))
                    .filter(rate_events::client.eq(&client)),
            )
            .execute(conn)
            .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn forget_windows_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError> {
        let n = with_conn!(self, |conn| {
            let events =
                diesel::delete(rate_events::table.filter(rate_events::at.lt(DbTs(cutoff))))
                    .execute(conn)
                    .await?;
            diesel::delete(rate_keys::table.filter(rate_keys::touched_at.lt(DbTs(cutoff))))
                .execute(conn)
                .await?;
            Ok(events)
        })
        .map_err(infra)?;
        Ok(n as u64)
    }
}
