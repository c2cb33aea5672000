//! [`ClockCache`]: a bounded moka cache whose entries age by the kernel's [`Clock`] rather
//! than by moka's own: each entry keeps the time it was stored, and a read past the TTL
//! treats it as missing. A test then ages what is held by moving its clock, not by sleeping,
//! and a clock that stands still keeps what was read. The bound is moka's, as before: a
//! stale entry is replaced by the next read of its key, or evicted like any other. Each
//! lookup is counted in the metrics as a hit or a miss, under the cache's name.

use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;
use moka::ops::compute::Op;
use moka::{Equivalent, PredicateError};
use quire_kernel::Clock;
use time::OffsetDateTime;

/// A value and when it was stored.
#[derive(Debug, Clone)]
struct Stamped<V> {
    at: OffsetDateTime,
    value: V,
}

/// At most `capacity` entries, each trusted for `ttl` after it was stored, by the clock.
pub struct ClockCache<K, V> {
    entries: Cache<K, Stamped<V>>,
    clock: Arc<dyn Clock>,
    ttl: Duration,
    /// The `cache` label of its lookups in the metrics.
    name: &'static str,
}

impl<K, V> std::fmt::Debug for ClockCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClockCache")
            .field("name", &self.name)
            .field("ttl", &self.ttl)
            .field("entries", &self.entries.entry_count())
            .finish_non_exhaustive()
    }
}

impl<K, V> Clone for ClockCache<K, V> {
    fn clone(&self) -> Self {
        Self {
            entries: self.entries.clone(),
            clock: self.clock.clone(),
            ttl: self.ttl,
            name: self.name,
        }
    }
}

impl<K, V> ClockCache<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    /// A cache of at most `capacity` entries, each fresh for `ttl` by `clock`.
    #[must_use]
    pub fn new(capacity: u64, ttl: Duration, clock: Arc<dyn Clock>) -> Self {
        Self::built(Cache::builder().max_capacity(capacity).build(), ttl, clock)
    }

    /// As [`ClockCache::new`], and able to drop the entries a predicate picks
    /// ([`ClockCache::invalidate_entries_if`]).
    #[must_use]
    pub fn with_invalidation_closures(capacity: u64, ttl: Duration, clock: Arc<dyn Clock>) -> Self {
        let entries = Cache::builder()
            .max_capacity(capacity)
            .support_invalidation_closures()
            .build();
        Self::built(entries, ttl, clock)
    }

    fn built(entries: Cache<K, Stamped<V>>, ttl: Duration, clock: Arc<dyn Clock>) -> Self {
        Self {
            entries,
            clock,
            ttl,
            name: "unnamed",
        }
    }

    /// Names the cache in the metrics (`quire_cache_lookups_total{cache=…}`).
    #[must_use]
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    fn count(&self, hit: bool) {
        let result = if hit { "hit" } else { "miss" };
        metrics::counter!("quire_cache_lookups_total", "cache" => self.name, "result" => result)
            .increment(1);
    }

    /// Whether a value stored at `at` is still trusted. One stored "after now" is not: the
    /// clock went back, and how old it is cannot be told.
    fn fresh(&self, at: OffsetDateTime) -> bool {
        let age = self.clock.now() - at;
        !age.is_negative() && age < self.ttl
    }

    /// The value held for `key`, if it is fresh.
    pub async fn get(&self, key: &K) -> Option<V> {
        let held = self
            .entries
            .get(key)
            .await
            .filter(|held| self.fresh(held.at))
            .map(|held| held.value);
        self.count(held.is_some());
        held
    }

    /// Holds `value` for `key` from now.
    pub async fn insert(&self, key: K, value: V) {
        let at = self.clock.now();
        self.entries.insert(key, Stamped { at, value }).await;
    }

    /// The value held for `key` if it is fresh; otherwise what `load` gives, held from when
    /// it was given. Concurrent callers missing the same key share one load, and its error.
    ///
    /// # Errors
    /// `load`'s error, shared.
    pub async fn try_get_with<E: Send + Sync + 'static>(
        &self,
        key: K,
        load: impl Future<Output = Result<V, E>>,
    ) -> Result<V, Arc<E>> {
        if let Some(held) = self.entries.get(&key).await {
            if self.fresh(held.at) {
                self.count(true);
                return Ok(held.value);
            }
            self.drop_stale(key.clone(), held.at).await;
        }
        self.count(false);
        let clock = self.clock.clone();
        let stamped = self
            .entries
            .try_get_with(key, async move {
                let value = load.await?;
                Ok(Stamped {
                    at: clock.now(),
                    value,
                })
            })
            .await?;
        Ok(stamped.value)
    }

    /// Drops `key`'s entry if it is still the one stored at `at`: another caller may have
    /// replaced it meanwhile, and its fresh value stays.
    async fn drop_stale(&self, key: K, at: OffsetDateTime) {
        self.entries
            .entry(key)
            .and_compute_with(|held| {
                let op = match held {
                    Some(held) if held.value().at == at => Op::Remove,
                    _ => Op::Nop,
                };
                std::future::ready(op)
            })
            .await;
    }

    pub async fn invalidate<Q: Equivalent<K> + Hash + ?Sized>(&self, key: &Q) {
        self.entries.invalidate(key).await;
    }

    pub fn invalidate_all(&self) {
        self.entries.invalidate_all();
    }

    /// Drops every entry `stale` picks, from every read on.
    ///
    /// # Errors
    /// When the cache was not made [`ClockCache::with_invalidation_closures`].
    pub fn invalidate_entries_if(
        &self,
        stale: impl Fn(&K, &V) -> bool + Send + Sync + 'static,
    ) -> Result<(), PredicateError> {
        self.entries
            .invalidate_entries_if(move |key, held| stale(key, &held.value))
            .map(|_| ())
    }

    /// How many entries are held, stale ones included (moka's estimate).
    #[must_use]
    pub fn entry_count(&self) -> u64 {
        self.entries.entry_count()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Mutex;

    use super::*;

    #[derive(Debug)]
    struct Hand(Mutex<OffsetDateTime>);

    impl Clock for Hand {
        fn now(&self) -> OffsetDateTime {
            *self.0.lock().unwrap()
        }
    }

    impl Hand {
        fn move_by(&self, by: time::Duration) {
            *self.0.lock().unwrap() += by;
        }
    }

    #[tokio::test]
    async fn entries_age_by_the_clock_and_a_clock_gone_back_trusts_nothing() {
        let clock = Arc::new(Hand(Mutex::new(OffsetDateTime::UNIX_EPOCH)));
        let cache = ClockCache::new(10, Duration::from_secs(1), clock.clone());
        let load = |n: u32| async move { Ok::<_, ()>(n) };
        assert_eq!(cache.try_get_with("k", load(1)).await, Ok(1));
        assert_eq!(cache.try_get_with("k", load(2)).await, Ok(1));
        clock.move_by(time::Duration::milliseconds(999));
        assert_eq!(cache.get(&"k").await, Some(1));
        clock.move_by(time::Duration::milliseconds(1));
        assert_eq!(cache.get(&"k").await, None);
        assert_eq!(cache.try_get_with("k", load(3)).await, Ok(3));
        assert_eq!(cache.try_get_with("k", load(4)).await, Ok(3));

        clock.move_by(time::Duration::seconds(-10));
        assert_eq!(cache.get(&"k").await, None);
        assert_eq!(cache.try_get_with("k", load(5)).await, Ok(5));
        let failed = cache
            .try_get_with("gone", async { Err::<u32, _>("down") })
            .await;
        assert_eq!(failed.unwrap_err().as_ref(), &"down");
    }
}
