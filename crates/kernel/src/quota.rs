//! An account's use of something the operator caps (its databases, their bytes, its objects'
//! bytes) beside the cap: what the API, the dashboard and the metrics show, and what the use
//! cases check before they add to it. The caps are the operator's settings, the same for
//! every account; a cap of `None` is no cap.
//!
//! A check before a write cannot stop two writes of one account that race for the last
//! room: each sees the other only once it is written. So a write that adds to a quota counts
//! again once it is written and undoes itself when the use passed the cap
//! ([`kept_within`], [`Usage::passed`]): two racing may both be refused, never both kept.

use std::future::Future;

/// An account's use of one quota.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub used: u64,
    /// `None`: no cap.
    pub limit: Option<u64>,
}

impl Usage {
    /// `limit` 0 is no cap, as the settings spell it.
    #[must_use]
    pub fn of(used: u64, limit: u64) -> Self {
        Self {
            used,
            limit: (limit > 0).then_some(limit),
        }
    }

    /// Whether `more` fits under the cap.
    #[must_use]
    pub fn admits(&self, more: u64) -> bool {
        self.limit
            .is_none_or(|limit| self.used.saturating_add(more) <= limit)
    }

    /// Whether nothing more fits: the use is at the cap or past it (a cap lowered, or a
    /// database that grew).
    #[must_use]
    pub fn reached(&self) -> bool {
        self.limit.is_some_and(|limit| self.used >= limit)
    }

    /// How much more fits; `None` without a cap.
    #[must_use]
    pub fn room(&self) -> Option<u64> {
        self.limit.map(|limit| limit.saturating_sub(self.used))
    }

    /// Whether the use is at 80 % of the cap or more: the share the metrics' gauge and the
    /// admin's account list call near.
    #[must_use]
    pub fn near(&self) -> bool {
        self.limit
            .is_some_and(|limit| u128::from(self.used) * 5 >= u128::from(limit) * 4)
    }

    /// Counted once a write of `own` is in this use: the use without it, when the write took
    /// the use past the cap (another write took the room meanwhile); `None` within the cap.
    #[must_use]
    pub fn passed(&self, own: u64) -> Option<Usage> {
        (!self.admits(0)).then(|| Usage {
            used: self.used.saturating_sub(own),
            ..*self
        })
    }
}

/// Write, recount, undo: what a write that adds to a quota does once it is written.
/// `recount` counts the account's use again, this write's included, and answers the refusal
/// when it passed the cap; on a refusal (or an error of the count) `undo` takes the write
/// back, and the refusal is the answer. A write whose count may fail and still stand counts
/// that failure as no refusal in `recount`.
///
/// # Errors
/// The refusal, or the count's error, once `undo` has run; `undo`'s own error, when it
/// failed.
pub async fn kept_within<E>(
    recount: impl Future<Output = Result<Option<E>, E>>,
    undo: impl Future<Output = Result<(), E>>,
) -> Result<(), E> {
    let refused = match recount.await {
        Ok(None) => return Ok(()),
        Ok(Some(refused)) | Err(refused) => refused,
    };
    undo.await?;
    Err(refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_admits_up_to_itself_and_zero_is_none() {
        let u = Usage::of(70, 100);
        assert!(u.admits(30) && !u.admits(31));
        assert_eq!(u.room(), Some(30));
        assert!(!u.reached() && !u.near());
        assert!(Usage::of(80, 100).near());
        assert!(Usage::of(100, 100).reached());
        assert_eq!(Usage::of(120, 100).room(), Some(0));
        let free = Usage::of(u64::MAX, 0);
        assert_eq!(free.limit, None);
        assert!(free.admits(u64::MAX) && !free.reached() && !free.near());
        assert_eq!(free.room(), None);
        assert!(Usage::of(u64::MAX, u64::MAX).near());
    }

    #[test]
    fn a_write_that_took_the_use_past_the_cap_reports_the_use_without_it() {
        assert_eq!(Usage::of(100, 100).passed(60), None, "at the cap is within");
        assert_eq!(Usage::of(120, 100).passed(60), Some(Usage::of(60, 100)));
        assert_eq!(Usage::of(11, 10).passed(1), Some(Usage::of(10, 10)));
        assert_eq!(Usage::of(u64::MAX, 0).passed(1), None, "no cap");
    }

    /// Polls a future that never waits (the test's recounts and undos).
    fn now<F: Future>(f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(out) => out,
            std::task::Poll::Pending => panic!("the future waited"),
        }
    }

    #[test]
    fn a_write_is_kept_within_the_cap_and_undone_past_it_or_when_the_count_fails() {
        let undone = std::cell::Cell::new(0);
        let undo = || async {
            undone.set(undone.get() + 1);
            Ok::<(), &str>(())
        };
        assert_eq!(now(kept_within(async { Ok(None) }, undo())), Ok(()));
        assert_eq!(undone.get(), 0, "kept: nothing undone");
        let refused = kept_within(async { Ok(Some("over")) }, undo());
        assert_eq!(now(refused), Err("over"));
        assert_eq!(
            now(kept_within(async { Err("count") }, undo())),
            Err("count")
        );
        assert_eq!(undone.get(), 2);
        let failed_undo = kept_within(async { Ok(Some("over")) }, async { Err("undo") });
        assert_eq!(now(failed_undo), Err("undo"));
    }
}
