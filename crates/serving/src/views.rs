//! Views of pages without a budget, counted in memory and flushed to the store in bulk, so
//! a popular page is not one database write per view.

use std::collections::HashMap;
use std::sync::Mutex;

use quire_kernel::LinkId;

/// Views counted since the last flush, per link.
#[derive(Debug, Default)]
pub struct ViewTally {
    counts: Mutex<HashMap<LinkId, u64>>,
}

impl ViewTally {
    pub fn add(&self, link: LinkId) {
        let mut counts = self
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *counts.entry(link).or_insert(0) += 1;
    }

    /// Takes every pending count, leaving the tally empty.
    pub fn take(&self) -> Vec<(LinkId, u64)> {
        let mut counts = self
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        counts.drain().collect()
    }

    /// Puts back counts whose flush failed, so no view is lost.
    pub fn restore(&self, taken: &[(LinkId, u64)]) {
        let mut counts = self
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (link, n) in taken {
            *counts.entry(*link).or_insert(0) += n;
        }
    }

    /// Views counted here for `link` and not yet flushed.
    pub fn pending(&self, link: LinkId) -> u64 {
        let counts = self
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        counts.get(&link).copied().unwrap_or(0)
    }
}
