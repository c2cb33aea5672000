//! The `Clock` port: domain code asks it for "now" so tests can fix time.

use time::OffsetDateTime;

/// Source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant, in UTC, truncated to microseconds so that what is stored in
    /// either database compares equal to what the domain computed.
    fn now(&self) -> OffsetDateTime;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        truncate_to_micros(OffsetDateTime::now_utc())
    }
}

/// Drops sub-microsecond precision, which neither PostgreSQL nor our SQLite encoding keeps.
#[must_use]
pub fn truncate_to_micros(t: OffsetDateTime) -> OffsetDateTime {
    let nanos = t.nanosecond();
    t.replace_nanosecond(nanos - nanos % 1_000).unwrap_or(t)
}

/// Waiting, for work that must act on a schedule while it runs (a publish renewing its
/// lease). The edge supplies the runtime's timer; tests supply one they advance by hand.
pub trait Timer: Send + Sync + std::fmt::Debug {
    /// A future that completes once `duration` has passed.
    fn sleep(
        &self,
        duration: std::time::Duration,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>>;
}
