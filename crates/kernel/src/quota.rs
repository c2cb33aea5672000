//! An account's use of something the operator caps (its databases, their bytes, its objects'
//! bytes) beside the cap: what the API, the dashboard and the metrics show, and what the use
//! cases check before they add to it. The caps are the operator's settings, the same for
//! every account; a cap of `None` is no cap.

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
}
