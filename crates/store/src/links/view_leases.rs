//! The view leases of budgeted links (the `view_leases` table): granting views to a lease,
//! settling what a lease used or gave back, and settling leases whose holder went away.
//! `LinkStore` in `links` delegates its lease methods here.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use quire_kernel::{InfraError, LeaseId, LinkId};
use time::{Date, OffsetDateTime};

use crate::db::{Database, with_conn, with_tx};
use crate::error::infra;
use crate::error::{Outcome, StoreError};
use crate::links::counts::{add_daily, day_text};
use crate::links::to_i64;
use crate::schema::{link_views_daily, links, view_leases};
use crate::types::{DbId, DbTs};

/// Lapsed leases one sweep settles; the next sweep takes the rest.
const LAPSED_PER_PASS: i64 = 1_000;

/// Reads and conditional updates one lease may take before it gives up: each failure means
/// another replica leased in between, so this bounds a storm, not normal work.
const LEASE_TRIES: usize = 16;

impl Database {
    /// [`LinkStore::lease_views`](quire_links::LinkStore::lease_views).
    pub(crate) async fn take_view_lease(
        &self,
        link: LinkId,
        lease: LeaseId,
        first: bool,
        want: u64,
        until: OffsetDateTime,
    ) -> Result<Option<u64>, InfraError> {
        // Optimistic: read what is left, then take a grant under a condition that holds only
        // if it still fits. Settling moves views from leased to counted (the sum stays or
        // falls), so only another lease getting in between makes a try fail; then read
        // again. The lease's row is written before the link's, as a settle and the sweep
        // do, so they never wait on each other in opposite orders.
        for _ in 0..LEASE_TRIES {
            let row: Option<(Option<i64>, i64, i64)> = with_conn!(self, |conn| {
                Ok(links::table
                    .find(DbId(link.0))
                    .select((links::max_views, links::view_count, links::views_leased))
                    .first(conn)
                    .await
                    .optional()?)
            })
            .map_err(infra)?;
            let Some((Some(max), counted, leased)) = row else {
                return Ok(Some(0));
            };
            let left = max - counted - leased;
            if left <= 0 {
                return Ok(Some(0));
            }
            let grant = left.min(to_i64(want.max(1)));
            let taken = with_tx!(self, |conn| {
                if first {
                    diesel::insert_into(view_leases::table)
                        .values((
                            view_leases::link_id.eq(DbId(link.0)),
                            view_leases::holder.eq(DbId(lease.0)),
                            view_leases::views.eq(grant),
                            view_leases::expires_at.eq(DbTs(until)),
                        ))
                        .execute(conn)
                        .await?;
                } else {
                    let held =
                        diesel::update(view_leases::table.find((DbId(link.0), DbId(lease.0))))
                            .set((
                                view_leases::views.eq(view_leases::views + grant),
                                view_leases::expires_at.eq(DbTs(until)),
                            ))
                            .execute(conn)
                            .await?;
                    if held == 0 {
                        return Err(StoreError::Outcome(Outcome::LeaseLapsed));
                    }
                }
                let taken = diesel::update(
                    links::table.find(DbId(link.0)).filter(
                        (links::view_count + links::views_leased + grant)
                            .le(links::max_views.assume_not_null()),
                    ),
                )
                .set(links::views_leased.eq(links::views_leased + grant))
                .execute(conn)
                .await?;
                if taken == 0 {
                    return Err(StoreError::Outcome(Outcome::LeaseRaced));
                }
                Ok(())
            });
            match taken {
                Ok(()) => return Ok(Some(u64::try_from(grant).unwrap_or(0))),
                Err(e) if e.is_outcome(Outcome::LeaseLapsed) => return Ok(None),
                Err(e) if e.is_outcome(Outcome::LeaseRaced) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(InfraError::new(format!(
            "no view lease of link {} after {LEASE_TRIES} tries",
            link.0
        )))
    }

    /// [`LinkStore::settle_lease`](quire_links::LinkStore::settle_lease).
    pub(crate) async fn settle_view_lease(
        &self,
        link: LinkId,
        lease: LeaseId,
        used: u64,
        returned: u64,
        day: Date,
        until: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        let (used, released) = (to_i64(used), to_i64(used + returned));
        let day = day_text(day);
        let settled = with_tx!(self, |conn| {
            let held = diesel::update(view_leases::table.find((DbId(link.0), DbId(lease.0))))
                .set((
                    view_leases::views.eq(view_leases::views - released),
                    view_leases::expires_at.eq(DbTs(until)),
                ))
                .execute(conn)
                .await?;
            if held == 0 {
                // Settled whole by a sweep (or gone with its link): these views are counted.
                return Ok(false);
            }
            if released > 0 {
                diesel::update(links::table.find(DbId(link.0)))
                    .set((
                        links::view_count.eq(links::view_count + used),
                        links::views_leased.eq(links::views_leased - released),
                    ))
                    .execute(conn)
                    .await?;
            }
            if used > 0 {
                add_daily!(conn, DbId(link.0), &day, used);
            }
            Ok(true)
        })
        .map_err(infra)?;
        Ok(settled)
    }

    /// [`LinkStore::settle_lapsed_leases`](quire_links::LinkStore::settle_lapsed_leases).
    pub(crate) async fn settle_lapsed_view_leases(
        &self,
        now: OffsetDateTime,
    ) -> Result<u64, InfraError> {
        let lapsed: Vec<(DbId, DbId)> = with_conn!(self, |conn| {
            Ok(view_leases::table
                .filter(view_leases::expires_at.lt(DbTs(now)))
                .select((view_leases::link_id, view_leases::holder))
                .limit(LAPSED_PER_PASS)
                .load(conn)
                .await?)
        })
        .map_err(infra)?;
        let day = day_text(now.date());
        let mut settled = 0;
        for (link, holder) in lapsed {
            let day = day.clone();
            let views = with_tx!(self, |conn| {
                // Still lapsed once this transaction holds the row: its holder may have
                // renewed it since it was listed.
                let held = diesel::update(
                    view_leases::table
                        .find((link, holder))
                        .filter(view_leases::expires_at.lt(DbTs(now))),
                )
                .set(view_leases::views.eq(view_leases::views))
                .execute(conn)
                .await?;
                if held == 0 {
                    return Ok(0);
                }
                let views: i64 = view_leases::table
                    .find((link, holder))
                    .select(view_leases::views)
                    .first(conn)
                    .await?;
                diesel::delete(view_leases::table.find((link, holder)))
                    .execute(conn)
                    .await?;
                if views > 0 {
                    diesel::update(links::table.find(link))
                        .set((
                            links::view_count.eq(links::view_count + views),
                            links::views_leased.eq(links::views_leased - views),
                        ))
                        .execute(conn)
                        .await?;
                    add_daily!(conn, link, &day, views);
                }
                Ok(views)
            })
            .map_err(infra)?;
            settled += u64::try_from(views).unwrap_or(0);
        }
        Ok(settled)
    }
}
