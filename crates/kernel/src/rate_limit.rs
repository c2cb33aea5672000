//! The `RateLimiter` port: counting requests per client in windows shared by every replica,
//! and budgets of failures that are taken before an attempt and given back when it succeeds.

use std::time::Duration;

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::error::InfraError;

/// A budget of failures: at most `limit` in any `window`, and once `free` of them are in the
/// window, a wait after the latest before the next attempt, `first_wait` doubled for each
/// failure past `free`, never longer than the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub limit: u32,
    pub window: Duration,
    pub free: u32,
    pub first_wait: Duration,
}

impl Budget {
    /// `limit` in any `window`, without waits.
    #[must_use]
    pub const fn fixed(limit: u32, window: Duration) -> Self {
        Self {
            limit,
            window,
            free: limit,
            first_wait: Duration::ZERO,
        }
    }

    /// [`Budget::fixed`] with growing waits once `free` failures are in the window.
    #[must_use]
    pub const fn with_backoff(
        limit: u32,
        window: Duration,
        free: u32,
        first_wait: Duration,
    ) -> Self {
        Self {
            limit,
            window,
            free,
            first_wait,
        }
    }

    /// The wait after the latest failure when `failures` are in the window.
    #[must_use]
    pub fn wait_after(&self, failures: u32) -> Duration {
        if failures < self.free || self.first_wait.is_zero() {
            return Duration::ZERO;
        }
        let doublings = (failures - self.free).min(31);
        self.first_wait
            .checked_mul(1 << doublings)
            .unwrap_or(self.window)
            .min(self.window)
    }

    /// When the next attempt may be made, given when the slots in the window were taken
    /// (any order); `None` when it may be made `now`.
    #[must_use]
    pub fn opens_at(
        &self,
        taken: &[OffsetDateTime],
        now: OffsetDateTime,
    ) -> Option<OffsetDateTime> {
        if self.limit == 0 {
            return Some(now + self.window);
        }
        let since = now - self.window;
        let mut recent: Vec<OffsetDateTime> =
            taken.iter().copied().filter(|t| *t > since).collect();
        recent.sort_unstable();
        let n = u32::try_from(recent.len()).unwrap_or(u32::MAX);
        let mut opens = None;
        if n >= self.limit {
            // The sliding log: a slot comes back when the oldest of the last `limit` ages out.
            let oldest = recent[recent.len() - self.limit as usize];
            opens = Some(oldest + self.window);
        }
        if let Some(latest) = recent.last() {
            let wait = self.wait_after(n);
            if !wait.is_zero() {
                let after_wait = *latest + wait;
                opens = Some(opens.map_or(after_wait, |o: OffsetDateTime| o.max(after_wait)));
            }
        }
        opens.filter(|t| *t > now)
    }
}

/// The key a client address is budgeted under: an IPv4 address as it is, an IPv6 address by
/// its /64, which one subscriber is usually given whole (or the text as it is, when it is not
/// an address).
#[must_use]
pub fn address_key(client: &str) -> String {
    match client.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
        _ => client.to_owned(),
    }
}

/// A slot taken from a budget, in the store's own terms: it counts until given back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot(pub i64);

/// The answer of [`RateLimiter::take`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    Taken(Slot),
    /// Nothing was counted; the next attempt may be made at `retry_at`.
    Refused {
        retry_at: OffsetDateTime,
    },
}

/// Counting requests per client in fixed windows, shared by every replica.
#[async_trait]
pub trait RateLimiter: Send + Sync + std::fmt::Debug {
    /// Counts one request of `client` in `bucket` for the window of length `window` that
    /// contains `now`; `Ok(false)` once the count exceeds `limit`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn hit(
        &self,
        bucket: &str,
        client: &str,
        window: Duration,
        limit: u32,
        now: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Takes one slot of `client`'s `budget` in `bucket` at `now`, or refuses when
    /// [`Budget::opens_at`] of the slots already taken is later than `now`. The check and
    /// the taking are one step: concurrent takes of one key never pass the budget together.
    /// Meant for failures: take before the attempt, [`RateLimiter::give_back`] when it
    /// succeeds.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn take(
        &self,
        bucket: &str,
        client: &str,
        budget: &Budget,
        now: OffsetDateTime,
    ) -> Result<Take, InfraError>;

    /// Removes a slot [`RateLimiter::take`] took for `client` in `bucket`; a slot already
    /// gone (forgotten, or given back) is not an error.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn give_back(&self, bucket: &str, client: &str, slot: Slot) -> Result<(), InfraError>;

    /// Drops the counts of windows that started before `cutoff`; returns how many.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn forget_windows_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_secs(60);

    fn at(t0: OffsetDateTime, secs: i64) -> OffsetDateTime {
        t0 + time::Duration::seconds(secs)
    }

    #[test]
    fn ipv6_clients_are_budgeted_by_their_64() {
        assert_eq!(address_key("192.0.2.7"), "192.0.2.7");
        assert_eq!(address_key("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
        assert_eq!(address_key("2001:db8:1:2::9"), "2001:db8:1:2::/64");
        assert_eq!(address_key("::ffff:192.0.2.7"), "192.0.2.7");
        assert_eq!(address_key("unknown"), "unknown");
    }

    #[test]
    fn a_fixed_budget_opens_when_the_oldest_counted_slot_ages_out() {
        let t0 = OffsetDateTime::UNIX_EPOCH + time::Duration::days(1);
        let b = Budget::fixed(3, 15 * MIN);
        let taken = [at(t0, 0), at(t0, 10), at(t0, 20)];
        assert_eq!(b.opens_at(&taken[..2], at(t0, 30)), None);
        assert_eq!(b.opens_at(&taken, at(t0, 30)), Some(at(t0, 900)));
        assert_eq!(b.opens_at(&taken, at(t0, 900)), None);
        // Slots older than the window do not count.
        assert_eq!(b.opens_at(&taken, at(t0, 1_000)), None);
        assert_eq!(b.wait_after(2), Duration::ZERO);
    }

    #[test]
    fn waits_double_past_the_free_failures_and_stop_at_the_window() {
        let t0 = OffsetDateTime::UNIX_EPOCH + time::Duration::days(1);
        let b = Budget::with_backoff(100, 15 * MIN, 2, Duration::from_secs(1));
        let waits: Vec<u64> = (0..14).map(|n| b.wait_after(n).as_secs()).collect();
        assert_eq!(
            waits,
            [0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]
        );
        assert_eq!(b.wait_after(u32::MAX), 15 * MIN);
        let taken = [at(t0, 0), at(t0, 5), at(t0, 6)];
        // Three failures: 2 s after the latest.
        assert_eq!(b.opens_at(&taken, at(t0, 7)), Some(at(t0, 8)));
        assert_eq!(b.opens_at(&taken, at(t0, 8)), None);
        assert_eq!(b.opens_at(&taken[..1], at(t0, 0)), None);
    }
}
