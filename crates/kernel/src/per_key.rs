//! Amounts counted per key and in all, each held by a guard that gives its amount back when
//! it is dropped, however its holder ends (a request that fails, a client that goes away):
//! what runs or is held at once on this replica, per account or per credential (the owners'
//! SQL queries running, the bytes of the bodies in flight). The caller says what may be
//! taken, from what is held when it asks, so one structure serves a count per key, a bound
//! in all, or both.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

/// The amounts held, in all and per key.
pub struct PerKeyCounts<K> {
    counts: Mutex<Counts<K>>,
}

struct Counts<K> {
    total: u64,
    by_key: HashMap<K, u64>,
}

/// What is held when a guard asks for more: in all, by its key, and by the guard itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub total: u64,
    pub of_key: u64,
    pub mine: u64,
}

/// An amount held for a key until this guard is dropped.
pub struct Counted<K: Eq + Hash> {
    counts: Arc<PerKeyCounts<K>>,
    key: K,
    amount: u64,
}

impl<K: Eq + Hash> Default for PerKeyCounts<K> {
    fn default() -> Self {
        Self {
            counts: Mutex::new(Counts {
                total: 0,
                by_key: HashMap::new(),
            }),
        }
    }
}

impl<K: Eq + Hash + Clone> PerKeyCounts<K> {
    /// A guard of `key` that holds nothing yet: [`Counted::grow`] adds to it.
    #[must_use]
    pub fn guard(self: &Arc<Self>, key: K) -> Counted<K> {
        Counted {
            counts: Arc::clone(self),
            key,
            amount: 0,
        }
    }

    /// A guard of `amount` for `key`, when `admit` takes it from what is held now.
    ///
    /// # Errors
    /// What `admit` refused with; nothing is held then.
    pub fn take<E>(
        self: &Arc<Self>,
        key: K,
        amount: u64,
        admit: impl FnOnce(Held) -> Result<(), E>,
    ) -> Result<Counted<K>, E> {
        let mut guard = self.guard(key);
        guard.grow(amount, admit)?;
        Ok(guard)
    }

    /// The amount held in all.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .total
    }

    /// The amount held for `key`.
    #[must_use]
    pub fn of(&self, key: &K) -> u64 {
        let counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        counts.by_key.get(key).copied().unwrap_or(0)
    }
}

impl<K: Eq + Hash + Clone> Counted<K> {
    /// Adds `more` to this guard when `admit` takes it from what is held now (checked and
    /// added under one lock, so two guards never both take the last of a bound).
    ///
    /// # Errors
    /// What `admit` refused with; the guard keeps what it held.
    pub fn grow<E>(
        &mut self,
        more: u64,
        admit: impl FnOnce(Held) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut counts = self
            .counts
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let of_key = counts.by_key.get(&self.key).copied().unwrap_or(0);
        admit(Held {
            total: counts.total,
            of_key,
            mine: self.amount,
        })?;
        counts.total = counts.total.saturating_add(more);
        *counts.by_key.entry(self.key.clone()).or_insert(0) += more;
        self.amount = self.amount.saturating_add(more);
        Ok(())
    }
}

impl<K: Eq + Hash> Counted<K> {
    /// The amount this guard holds.
    #[must_use]
    pub fn amount(&self) -> u64 {
        self.amount
    }
}

impl<K: Eq + Hash> Drop for Counted<K> {
    fn drop(&mut self) {
        let mut counts = self
            .counts
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        counts.total = counts.total.saturating_sub(self.amount);
        if let Some(n) = counts.by_key.get_mut(&self.key) {
            *n = n.saturating_sub(self.amount);
            if *n == 0 {
                counts.by_key.remove(&self.key);
            }
        }
    }
}

impl<K> fmt::Debug for PerKeyCounts<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("PerKeyCounts")
            .field("total", &counts.total)
            .field("keys", &counts.by_key.len())
            .finish()
    }
}

impl<K: Eq + Hash + fmt::Debug> fmt::Debug for Counted<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Counted")
            .field("key", &self.key)
            .field("amount", &self.amount)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At most `per_key` for a key and `total` in all.
    fn within(
        per_key: u64,
        total: u64,
        more: u64,
    ) -> impl FnOnce(Held) -> Result<(), &'static str> {
        move |held| {
            if held.of_key + more > per_key {
                return Err("key");
            }
            if held.total + more > total {
                return Err("total");
            }
            Ok(())
        }
    }

    #[test]
    fn amounts_are_held_per_key_and_in_all_until_their_guards_drop() {
        let counts = Arc::new(PerKeyCounts::<&str>::default());
        let a1 = counts.take("a", 3, within(5, 8, 3)).unwrap();
        assert_eq!(counts.take("a", 3, within(5, 8, 3)).unwrap_err(), "key");
        let mut a2 = counts.take("a", 2, within(5, 8, 2)).unwrap();
        let b = counts.take("b", 3, within(5, 8, 3)).unwrap();
        assert_eq!(counts.take("c", 1, within(5, 8, 1)).unwrap_err(), "total");
        assert_eq!(
            (counts.total(), counts.of(&"a"), counts.of(&"b")),
            (8, 5, 3)
        );
        // A refused growth holds nothing more; the guard sees what it holds itself.
        assert_eq!(a2.grow(1, within(5, 8, 1)).unwrap_err(), "key");
        a2.grow(0, |held| {
            assert_eq!(
                held,
                Held {
                    total: 8,
                    of_key: 5,
                    mine: 2
                }
            );
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(a2.amount(), 2);
        drop(a1);
        assert_eq!((counts.total(), counts.of(&"a")), (5, 2));
        drop((a2, b));
        assert_eq!(counts.total(), 0);
        assert!(
            counts.counts.lock().unwrap().by_key.is_empty(),
            "no key left behind"
        );
        // A guard that never grew leaves nothing either.
        drop(counts.guard("d"));
        let empty = counts.take("e", 0, within(5, 8, 0)).unwrap();
        drop(empty);
        assert!(counts.counts.lock().unwrap().by_key.is_empty());
    }
}
