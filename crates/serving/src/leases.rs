//! Views of budgeted pages, served from blocks leased from the store.
//!
//! Invariants (the store keeps the first; this module the others):
//! - The views counted plus the views leased to every replica never pass the budget, so no
//!   number of replicas overspends it.
//! - A view is served only after taking one from this replica's block, one atomic decrement.
//! - Every view taken is settled into the count by a later flush (the lease entry of a link
//!   lives as long as its lease in the store, so a late taker's view is never orphaned).
//! - Unused views go back to the budget when a lease sits idle for [`IDLE_RETURN`], when the
//!   page's budget changed, and at shutdown.
//! - Each lease lapses in the store [`LEASE_TTL`] after its last grant or settle, which a
//!   lease holding views renews every flush. A lapsed lease is settled whole as served views
//!   (the janitor's sweep): a process killed while holding a block has its served views
//!   counted, and the views it never served too, so the budget is never overspent. A live
//!   process whose lease lapsed (it could not reach the store for that long) learns it at its
//!   next grant or settle and drops the lease: its views are counted already.
//!
//! Blocks follow the demand: twice the last block (so a busy page leaves per-view writes
//! behind within a dozen leases) or half a second of views at the last rate, whichever is
//! more, never more than [`MAX_BLOCK`], and never more than a sixteenth of what the budget
//! had left when the page was loaded (single views near the end, so replicas do not strand
//! the last views in each other's blocks).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quire_kernel::{InfraError, LeaseId, LinkId};
use quire_links::LinkStore;
use time::OffsetDateTime;

/// The largest block one lease asks for.
pub const MAX_BLOCK: u64 = 100_000;
/// How long a lease may sit unused before its views go back.
pub const IDLE_RETURN: Duration = Duration::from_secs(2);
/// How long a lease lives in the store after its last grant or settle, by default: far
/// longer than the flush interval at which a lease holding views is settled (and so
/// renewed), and than the clocks of replicas may differ.
pub const LEASE_TTL: Duration = Duration::from_secs(120);

/// One link's lease on this replica.
#[derive(Debug)]
struct Lease {
    /// Its name in the store.
    id: LeaseId,
    /// Whether the store holds it (granted once), so later grants extend it.
    in_store: std::sync::atomic::AtomicBool,
    /// Views of the block not yet served.
    remaining: AtomicU64,
    /// Views served since the last settle.
    used: AtomicU64,
    /// Views taken back from the block (idle, or a changed budget), to return at the next
    /// settle.
    returning: AtomicU64,
    /// The last block granted, and the views served in the last flush interval.
    last_block: AtomicU64,
    rate: AtomicU64,
    /// When the last view was served, in milliseconds since the Unix epoch, by the clock
    /// the callers read `now` from.
    last_use_ms: AtomicU64,
    /// The budget the block was leased under: a changed budget returns the block.
    budget: AtomicU64,
    /// One refill at a time per link.
    refill: futures_util::lock::Mutex<()>,
}

impl Lease {
    fn new() -> Self {
        Self {
            id: LeaseId::new(),
            in_store: std::sync::atomic::AtomicBool::new(false),
            remaining: AtomicU64::new(0),
            used: AtomicU64::new(0),
            returning: AtomicU64::new(0),
            last_block: AtomicU64::new(0),
            rate: AtomicU64::new(0),
            last_use_ms: AtomicU64::new(0),
            budget: AtomicU64::new(0),
            refill: futures_util::lock::Mutex::new(()),
        }
    }

    /// Takes one view from the block; false when it is empty.
    fn take_one(&self) -> bool {
        self.remaining
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Empties the block into what goes back at the next settle.
    fn give_back(&self) {
        let unused = self.remaining.swap(0, Ordering::AcqRel);
        self.returning.fetch_add(unused, Ordering::AcqRel);
    }
}

/// `at` in milliseconds since the Unix epoch (0 before it).
/// Counts a lease asked of the store in the metrics, by its outcome, and the views it gave.
fn count_lease(result: &'static str, views: u64) {
    metrics::counter!("quire_budget_leases_total", "result" => result).increment(1);
    metrics::counter!("quire_budget_views_leased_total").increment(views);
}

fn unix_ms(at: OffsetDateTime) -> u64 {
    u64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or(0)
}

/// What a settle owes the store for one link.
struct Due {
    link: LinkId,
    used: u64,
    returned: u64,
}

/// Every lease of this replica.
#[derive(Debug)]
pub struct ViewLeases {
    leases: Mutex<HashMap<LinkId, Arc<Lease>>>,
    ttl: Duration,
}

impl Default for ViewLeases {
    fn default() -> Self {
        Self::with_ttl(LEASE_TTL)
    }
}

impl ViewLeases {
    /// Leases that live `ttl` in the store after their last grant or settle.
    #[must_use]
    pub fn with_ttl(ttl: Duration) -> Self {
        Self {
            leases: Mutex::new(HashMap::new()),
            ttl,
        }
    }

    fn lease(&self, link: LinkId) -> Arc<Lease> {
        let mut all = self
            .leases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        all.entry(link)
            .or_insert_with(|| Arc::new(Lease::new()))
            .clone()
    }

    /// Drops `lease` of `link` (it lapsed in the store and was settled there), unless it was
    /// replaced already; the next view leases anew.
    fn forget(&self, link: LinkId, lease: &Arc<Lease>) {
        let mut all = self
            .leases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if all.get(&link).is_some_and(|l| Arc::ptr_eq(l, lease)) {
            all.remove(&link);
        }
    }

    /// Takes one view of `link` (budget `budget`, of which `left` were unspent when the page
    /// was loaded) for a visitor at `now`: from this replica's block, or from a new block
    /// leased from `store`. False when the budget has nothing left to lease.
    ///
    /// # Errors
    /// [`InfraError`] when the store cannot lease; the view is not served.
    pub async fn take(
        &self,
        store: &dyn LinkStore,
        link: LinkId,
        budget: u64,
        left: u64,
        now: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        // A lease found lapsed is dropped, and the view tried once more on a new one.
        for _ in 0..2 {
            if let Some(taken) = self.take_from(store, link, budget, left, now).await? {
                return Ok(taken);
            }
        }
        Err(InfraError::new(format!(
            "the view lease of link {} lapsed as soon as it was made",
            link.0
        )))
    }

    /// As [`ViewLeases::take`] with the link's current lease; `None` when that lease had
    /// lapsed in the store (it is dropped).
    async fn take_from(
        &self,
        store: &dyn LinkStore,
        link: LinkId,
        budget: u64,
        left: u64,
        now: OffsetDateTime,
    ) -> Result<Option<bool>, InfraError> {
        let lease = self.lease(link);
        let changed = lease.budget.swap(budget, Ordering::AcqRel) != budget;
        if changed {
            // The owner changed the budget: what this replica holds goes back before the
            // next block is leased under the new one.
            lease.give_back();
        } else if lease.take_one() {
            Self::served(&lease, now);
            return Ok(Some(true));
        }
        let _refilling = lease.refill.lock().await;
        let until = now + self.ttl;
        let returning = lease.returning.swap(0, Ordering::AcqRel);
        if returning > 0 {
            match store
                .settle_lease(link, lease.id, 0, returning, now.date(), until)
                .await
            {
                Ok(true) => {}
                Ok(false) => {
                    self.forget(link, &lease);
                    return Ok(None);
                }
                Err(e) => {
                    lease.returning.fetch_add(returning, Ordering::AcqRel);
                    return Err(e);
                }
            }
        }
        // Another request may have refilled while this one waited.
        if lease.take_one() {
            Self::served(&lease, now);
            return Ok(Some(true));
        }
        let ramp = lease.last_block.load(Ordering::Acquire).saturating_mul(2);
        let by_rate = lease.rate.load(Ordering::Acquire) / 2;
        let want = ramp
            .max(by_rate)
            .clamp(1, MAX_BLOCK)
            .min((left / 16).max(1));
        let first = !lease.in_store.load(Ordering::Acquire);
        let Some(granted) = store
            .lease_views(link, lease.id, first, want, until)
            .await?
        else {
            count_lease("lapsed", 0);
            self.forget(link, &lease);
            return Ok(None);
        };
        if granted == 0 {
            count_lease("exhausted", 0);
            return Ok(Some(false));
        }
        count_lease("granted", granted);
        lease.in_store.store(true, Ordering::Release);
        lease.last_block.store(granted, Ordering::Release);
        // One view of the block is this request's.
        lease.remaining.fetch_add(granted - 1, Ordering::AcqRel);
        Self::served(&lease, now);
        Ok(Some(true))
    }

    fn served(lease: &Lease, now: OffsetDateTime) {
        lease.used.fetch_add(1, Ordering::AcqRel);
        lease.last_use_ms.store(unix_ms(now), Ordering::Release);
    }

    /// Settles every lease with `store` at `now`: views served join the count (on `now`'s
    /// day), the leases are renewed, and the blocks of leases idle for [`IDLE_RETURN`] go
    /// back (all of them when `closing`). Returns how many views were settled as served.
    ///
    /// # Errors
    /// [`InfraError`] for the first link the store refused; what it was owed is kept for
    /// the next settle.
    pub async fn settle(
        &self,
        store: &dyn LinkStore,
        now: OffsetDateTime,
        closing: bool,
    ) -> Result<u64, InfraError> {
        let now_ms = unix_ms(now);
        let idle_ms = u64::try_from(IDLE_RETURN.as_millis()).unwrap_or(u64::MAX);
        let leases: Vec<(LinkId, Arc<Lease>)> = self
            .leases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|(id, l)| (*id, l.clone()))
            .collect();
        let mut dues = Vec::new();
        for (link, lease) in &leases {
            let used = lease.used.swap(0, Ordering::AcqRel);
            lease.rate.store(used, Ordering::Release);
            let idle = now_ms.saturating_sub(lease.last_use_ms.load(Ordering::Acquire)) >= idle_ms;
            if closing || idle {
                lease.give_back();
                lease.last_block.store(0, Ordering::Release);
            }
            let returned = lease.returning.swap(0, Ordering::AcqRel);
            if used > 0 || returned > 0 {
                dues.push((
                    lease.clone(),
                    Due {
                        link: *link,
                        used,
                        returned,
                    },
                ));
            }
        }
        let (day, until) = (now.date(), now + self.ttl);
        let mut settled = 0;
        let mut failure = None;
        for (lease, due) in dues {
            if failure.is_none() {
                match store
                    .settle_lease(due.link, lease.id, due.used, due.returned, day, until)
                    .await
                {
                    Ok(true) => {
                        settled += due.used;
                        continue;
                    }
                    Ok(false) => {
                        // Lapsed, and settled whole in the store: nothing is owed.
                        self.forget(due.link, &lease);
                        continue;
                    }
                    Err(e) => failure = Some(e),
                }
            }
            // Owed still: the next settle carries it.
            lease.used.fetch_add(due.used, Ordering::AcqRel);
            lease.returning.fetch_add(due.returned, Ordering::AcqRel);
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(settled),
        }
    }
}
