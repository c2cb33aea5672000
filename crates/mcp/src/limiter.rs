//! The per-principal limit on write tools: a sliding log of the last minute's calls, kept
//! in this replica's memory (docs/decisions/agent-endpoint.md: a database round trip per
//! call would cost more than the reads it guards). Reads are not limited, as on the REST
//! API.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Write tool calls a principal may make per [`WINDOW`].
pub const WRITES_PER_WINDOW: usize = 60;
/// The window of [`WRITES_PER_WINDOW`].
pub const WINDOW: Duration = Duration::from_secs(60);
/// Principals tracked before the idle ones are dropped.
const TRACKED: usize = 10_000;

/// The sliding log of each principal's write calls.
#[derive(Debug, Default)]
pub struct Limiter {
    log: Mutex<HashMap<String, VecDeque<Instant>>>,
}

impl Limiter {
    /// Counts one write call of `who` at `now`; `Err(seconds)` until the oldest call in the
    /// window leaves it when the limit is reached.
    pub fn hit(&self, who: &str, now: Instant) -> Result<(), u64> {
        let mut log = self
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if log.len() >= TRACKED && !log.contains_key(who) {
            log.retain(|_, calls| {
                calls
                    .back()
                    .is_some_and(|t| now.duration_since(*t) < WINDOW)
            });
        }
        let calls = log.entry(who.to_owned()).or_default();
        while calls
            .front()
            .is_some_and(|t| now.duration_since(*t) >= WINDOW)
        {
            calls.pop_front();
        }
        if calls.len() >= WRITES_PER_WINDOW {
            let oldest = calls.front().copied().unwrap_or(now);
            let wait = WINDOW.saturating_sub(now.duration_since(oldest));
            return Err(wait.as_secs().max(1));
        }
        calls.push_back(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_holds_per_principal_and_frees_as_the_window_slides() {
        let limiter = Limiter::default();
        let start = Instant::now();
        for _ in 0..WRITES_PER_WINDOW {
            assert!(limiter.hit("a", start).is_ok());
        }
        assert_eq!(limiter.hit("a", start + Duration::from_secs(10)), Err(50));
        assert!(limiter.hit("b", start).is_ok());
        assert!(limiter.hit("a", start + WINDOW).is_ok());
    }
}
