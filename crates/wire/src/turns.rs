//! Sharing a core: a busy worker gives its core up now and then, and may be bound to a core
//! of its own.
//!
//! Why: a worker with connections always ready never sleeps, so a client on the same core
//! (a reverse proxy on the same machine, a load generator) reads its answers only when the
//! kernel preempts the worker, a slice of several milliseconds later; meanwhile its
//! connections on the other core come back at once. Measured under `wrk -t2 -c64` on two
//! cores, one group of connections was served 540 times a second and the other 3,000, and
//! the 99th percentile latency was 8 ms against a median of 0.27 ms
//! (`docs/decisions/pages-origin-scheduling.md`).

use std::cell::Cell;
use std::time::{Duration, Instant};

/// How long a worker serves without a pause before it lets the other threads of its core
/// run. Measured on two cores: 300 µs brought the p99 from 8 ms to 1.1-1.3 ms in most runs
/// for about 2% of the requests per second; 150 µs cost 6-9%; 500 µs let the p99 climb back
/// to 5-22 ms.
const TURN: Duration = Duration::from_micros(300);

/// A worker's time on its core since it last gave the core up.
#[derive(Debug)]
pub(super) struct Turn {
    since: Cell<Instant>,
}

impl Turn {
    pub(super) fn new() -> Self {
        Self {
            since: Cell::new(Instant::now()),
        }
    }

    /// Called after each answer is written: once the turn is over, yields the core to any
    /// thread waiting for it (`sched_yield`; it returns at once when none is) and starts the
    /// next turn. Returns whether it yielded.
    pub(super) fn after_answer(&self) -> bool {
        self.after_answer_at(Instant::now())
    }

    /// [`Self::after_answer`] at the time `now`; the next turn starts when the yield returns.
    fn after_answer_at(&self, now: Instant) -> bool {
        if now.duration_since(self.since.get()) < TURN {
            return false;
        }
        std::thread::yield_now();
        self.since.set(Instant::now());
        true
    }
}

/// The CPUs this process may run on, in order.
///
/// # Errors
/// The kernel refused to tell (`sched_getaffinity`).
pub(super) fn allowed_cpus() -> std::io::Result<Vec<usize>> {
    let allowed = rustix::thread::sched_getaffinity(None)?;
    Ok((0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&cpu| allowed.is_set(cpu))
        .collect())
}

/// Binds the calling thread to `cpu` alone.
///
/// # Errors
/// The kernel refused (`sched_setaffinity`): the CPU is outside the process's set.
pub(super) fn bind_to(cpu: usize) -> std::io::Result<()> {
    let mut one = rustix::thread::CpuSet::new();
    one.set(cpu);
    rustix::thread::sched_setaffinity(None, &one)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_ends_only_after_its_length() {
        let turn = Turn::new();
        let start = turn.since.get();
        assert!(
            !turn.after_answer_at(start + TURN / 2),
            "a turn ended early"
        );
        assert!(
            turn.after_answer_at(start + TURN),
            "a turn past its length did not yield"
        );
        let next = turn.since.get();
        assert!(next >= start);
        assert!(
            !turn.after_answer_at(next + TURN / 2),
            "the next turn did not start afresh"
        );
    }

    #[test]
    fn a_thread_is_bound_to_the_cpu_asked_for() {
        let cpus = allowed_cpus().unwrap();
        assert!(!cpus.is_empty());
        let last = *cpus.last().unwrap();
        std::thread::spawn(move || {
            bind_to(last).unwrap();
            assert_eq!(allowed_cpus().unwrap(), vec![last]);
        })
        .join()
        .unwrap();
    }

    /// The refusal the server turns into "a pages worker runs unbound": the thread keeps the
    /// CPUs it had.
    #[test]
    fn a_cpu_outside_the_process_set_is_refused_and_nothing_changes() {
        let cpus = allowed_cpus().unwrap();
        let outside = (0..rustix::thread::CpuSet::MAX_CPU)
            .rev()
            .find(|cpu| !cpus.contains(cpu))
            .unwrap();
        std::thread::spawn(move || {
            assert!(bind_to(outside).is_err(), "CPU {outside} was accepted");
            assert_eq!(allowed_cpus().unwrap(), cpus);
        })
        .join()
        .unwrap();
    }
}
