//! Views of pages without a budget, counted in memory and flushed to the store in bulk, so
//! a popular page is not one database write per view.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use quire_kernel::LinkId;

/// Shards of the tally: each thread counts into its own, so worker threads serving the same
/// page do not wait on one lock.
pub(crate) const SHARDS: usize = 16;

static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SHARD: usize = NEXT_SHARD.fetch_add(1, Ordering::Relaxed) % SHARDS;
}

/// This thread's shard of a sharded tally.
pub(crate) fn shard() -> usize {
    SHARD.with(|s| *s)
}

type Counts = HashMap<LinkId, u64>;

/// Views counted since the last flush, per link.
#[derive(Debug)]
pub struct ViewTally {
    shards: [Mutex<Counts>; SHARDS],
}

impl Default for ViewTally {
    fn default() -> Self {
        Self {
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
        }
    }
}

fn lock(m: &Mutex<Counts>) -> std::sync::MutexGuard<'_, Counts> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ViewTally {
    pub fn add(&self, link: LinkId) {
        *lock(&self.shards[shard()]).entry(link).or_insert(0) += 1;
    }

    /// Takes every pending count, leaving the tally empty.
    pub fn take(&self) -> Vec<(LinkId, u64)> {
        let mut all: Counts = HashMap::new();
        for shard in &self.shards {
            for (link, n) in lock(shard).drain() {
                *all.entry(link).or_insert(0) += n;
            }
        }
        all.into_iter().collect()
    }

    /// Puts back counts whose flush failed, so no view is lost.
    pub fn restore(&self, taken: &[(LinkId, u64)]) {
        let mut counts = lock(&self.shards[0]);
        for (link, n) in taken {
            *counts.entry(*link).or_insert(0) += n;
        }
    }

    /// Views counted here for `link` and not yet flushed.
    pub fn pending(&self, link: LinkId) -> u64 {
        self.shards
            .iter()
            .map(|s| lock(s).get(&link).copied().unwrap_or(0))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use super::*;

    #[test]
    fn counts_from_many_threads_add_up_and_survive_a_failed_flush() {
        let tally = Arc::new(ViewTally::default());
        let (a, b) = (LinkId::new(), LinkId::new());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let tally = tally.clone();
                std::thread::spawn(move || {
                    for _ in 0..1_000 {
                        tally.add(a);
                    }
                    tally.add(b);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!((tally.pending(a), tally.pending(b)), (8_000, 8));
        let taken = tally.take();
        assert_eq!(tally.take(), vec![]);
        tally.restore(&taken);
        let mut again = tally.take();
        again.sort_by_key(|(_, n)| *n);
        assert_eq!(again, vec![(b, 8), (a, 8_000)]);
    }
}
