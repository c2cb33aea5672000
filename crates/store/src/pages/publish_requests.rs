//! `PublishRequests` on both backends: the `publish_requests` table, keyed by caller and
//! request id; a row goes with its page (foreign key, cascade) or when the janitor forgets it.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{InfraError, PageId};
use quire_pages::PublishRequests;
use time::OffsetDateTime;

use crate::db::{Database, with_conn};
use crate::error::infra;
use crate::schema::publish_requests;
use crate::types::{DbId, DbTs};

#[async_trait]
impl PublishRequests for Database {
    async fn recall(
        &self,
        caller: &str,
        request_id: &str,
        since: OffsetDateTime,
    ) -> Result<Option<PageId>, InfraError> {
        let (caller, request_id) = (caller.to_owned(), request_id.to_owned());
        let found: Option<DbId> = with_conn!(self, |conn| {
            Ok(publish_requests::table
                .filter(publish_requests::caller.eq(&caller))
                .filter(publish_requests::request_id.eq(&request_id))
                .filter(publish_requests::created_at.ge(DbTs(since)))
                .select(publish_requests::page_id)
                .first(conn)
                .await
                .optional()?)
        })
        .map_err(infra)?;
        Ok(found.map(|id| PageId(id.0)))
    }

    async fn remember(
        &self,
        caller: &str,
        request_id: &str,
        page: PageId,
        at: OffsetDateTime,
    ) -> Result<(), InfraError> {
        let (caller, request_id) = (caller.to_owned(), request_id.to_owned());
        with_conn!(self, |conn| {
            diesel::insert_into(publish_requests::table)
                .values((
                    publish_requests::caller.eq(&caller),
                    publish_requests::request_id.eq(&request_id),
                    publish_requests::page_id.eq(DbId(page.0)),
                    publish_requests::created_at.eq(DbTs(at)),
                ))
                .on_conflict((publish_requests::caller, publish_requests::request_id))
                .do_nothing()
                .execute(conn)
                .await?;
            Ok(())
        })
        .map_err(infra)
    }

    async fn forget_before(&self, before: OffsetDateTime) -> Result<u64, InfraError> {
        let n = with_conn!(self, |conn| {
            Ok(diesel::delete(
                publish_requests::table.filter(publish_requests::created_at.lt(DbTs(before))),
            )
            .execute(conn)
            .await?)
        })
        .map_err(infra)?;
        Ok(n as u64)
    }
}
