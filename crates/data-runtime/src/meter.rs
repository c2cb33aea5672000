//! The runtime's figures, kept here for [`crate::Runtime::figures`] and recorded through the
//! `metrics` facade for the server's metrics endpoint (a no-op when it has none). The
//! gauges that change on every request are handles taken once, so a request costs an atomic
//! update, not a lookup. `docs/operations.md` lists the metrics.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use metrics::Gauge;

/// Why a schema was loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    Start,
    /// A `NOTIFY pgrst` asked for it (the DDL trigger, `POST …/reload`, the owner).
    Notification,
    /// A request named what the cache lacked.
    Miss,
}

impl Cause {
    fn label(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Notification => "notification",
            Self::Miss => "miss",
        }
    }
}

/// What was let go to make room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Evicted {
    /// An idle pooled connection of a running instance.
    Connection,
    /// An idle instance, stopped whole.
    Instance,
}

/// How a backend a request left running ended (`abandon.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Gone by the grace's end: its cancel, or its closed socket, ended it.
    Cancelled,
    /// Terminated from an admin connection.
    Terminated,
    /// The terminate failed (the cluster did not answer): the janitor's sweep ends it.
    Failed,
}

impl Ended {
    fn label(self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled",
            Self::Terminated => "terminated",
            Self::Failed => "failed",
        }
    }
}

/// What the runtime has done since it started, and holds now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    /// Instances serving (started, not stopped or failed).
    pub instances: usize,
    /// Connections open under the cap (listeners, idle and lent ones).
    pub open: usize,
    /// Connections lent to a request now.
    pub in_use: usize,
    /// Schema loads, for every cause.
    pub schema_loads: u64,
    /// Questions a request's miss asked the catalog (whether the cache is stale).
    pub schema_checks: u64,
    /// `pgrst` notifications heard, whatever their payload.
    pub notifications: u64,
    /// Those whose payload asked for nothing (neither `reload schema` nor empty).
    pub notifications_ignored: u64,
    /// Connections and instances let go to make room.
    pub evictions: u64,
    /// Requests refused for want of a connection (the account's share or the cap).
    pub refusals: u64,
    /// Connections let go of before the server answered, whose backends were then ended
    /// (by their cancel or a terminate), or failed to be.
    pub abandoned: u64,
    /// Those of them terminated from an admin connection.
    pub terminated: u64,
}

const INSTANCES: &str = "quire_data_api_instances";
const CONNECTIONS: &str = "quire_data_api_connections";
const REFUSALS: &str = "quire_data_api_refusals_total";
const EVICTIONS: &str = "quire_data_api_evictions_total";
const SCHEMA_LOADS: &str = "quire_data_api_schema_loads_total";
const SCHEMA_CHECKS: &str = "quire_data_api_schema_checks_total";
const NOTIFICATIONS: &str = "quire_data_api_notifications_total";
const ABANDONED: &str = "quire_data_api_abandoned_backends_total";

pub(crate) struct Meter {
    instances: AtomicUsize,
    open: AtomicUsize,
    in_use: AtomicUsize,
    loads: AtomicU64,
    checks: AtomicU64,
    notifications: AtomicU64,
    ignored_notifications: AtomicU64,
    evictions: AtomicU64,
    refusals: AtomicU64,
    abandoned: AtomicU64,
    terminated: AtomicU64,
    instances_gauge: Gauge,
    open_gauge: Gauge,
    in_use_gauge: Gauge,
    heard: metrics::Counter,
    ignored: metrics::Counter,
}

impl Default for Meter {
    fn default() -> Self {
        let connections = |state: &'static str| metrics::gauge!(CONNECTIONS, "state" => state);
        let heard = |payload: &'static str| metrics::counter!(NOTIFICATIONS, "payload" => payload);
        Self {
            instances: AtomicUsize::new(0),
            open: AtomicUsize::new(0),
            in_use: AtomicUsize::new(0),
            loads: AtomicU64::new(0),
            checks: AtomicU64::new(0),
            notifications: AtomicU64::new(0),
            ignored_notifications: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            refusals: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
            terminated: AtomicU64::new(0),
            instances_gauge: metrics::gauge!(INSTANCES),
            open_gauge: connections("open"),
            in_use_gauge: connections("in_use"),
            heard: heard("reload"),
            ignored: heard("other"),
        }
    }
}

#[allow(clippy::cast_precision_loss)] // counts of connections, far below 2^53
fn float(n: usize) -> f64 {
    n as f64
}

impl Meter {
    /// The cap and the share, which do not change.
    pub fn limits(&self, max: usize, share: usize) {
        metrics::gauge!(CONNECTIONS, "state" => "max").set(float(max));
        metrics::gauge!(CONNECTIONS, "state" => "account_max").set(float(share));
    }

    pub fn open(&self, open: usize) {
        self.open.store(open, Ordering::Relaxed);
        self.open_gauge.set(float(open));
    }

    pub fn lent(&self) {
        self.in_use.fetch_add(1, Ordering::Relaxed);
        self.in_use_gauge.increment(1.0);
    }

    pub fn returned(&self) {
        self.in_use.fetch_sub(1, Ordering::Relaxed);
        self.in_use_gauge.decrement(1.0);
    }

    /// An instance began serving (`true`) or stopped serving.
    pub fn serving(&self, up: bool) {
        if up {
            self.instances.fetch_add(1, Ordering::Relaxed);
            self.instances_gauge.increment(1.0);
        } else {
            self.instances.fetch_sub(1, Ordering::Relaxed);
            self.instances_gauge.decrement(1.0);
        }
    }

    pub fn loaded(&self, cause: Cause) {
        self.loads.fetch_add(1, Ordering::Relaxed);
        metrics::counter!(SCHEMA_LOADS, "cause" => cause.label()).increment(1);
    }

    /// A request's miss asked the catalog whether the cache is stale.
    pub fn checked(&self) {
        self.checks.fetch_add(1, Ordering::Relaxed);
        metrics::counter!(SCHEMA_CHECKS).increment(1);
    }

    /// A `pgrst` notification, which asked for a reload or not.
    pub fn heard(&self, asks: bool) {
        self.notifications.fetch_add(1, Ordering::Relaxed);
        if asks {
            self.heard.increment(1);
        } else {
            self.ignored_notifications.fetch_add(1, Ordering::Relaxed);
            self.ignored.increment(1);
        }
    }

    pub fn evicted(&self, what: Evicted) {
        self.evictions.fetch_add(1, Ordering::Relaxed);
        let kind = match what {
            Evicted::Connection => "connection",
            Evicted::Instance => "instance",
        };
        metrics::counter!(EVICTIONS, "kind" => kind).increment(1);
    }

    /// A request refused: `share`, `cap`, `busy` (its instance's own connections all
    /// lent), `starting`, `unavailable`.
    pub fn refused(&self, reason: &'static str) {
        if matches!(reason, "share" | "cap" | "busy") {
            self.refusals.fetch_add(1, Ordering::Relaxed);
        }
        metrics::counter!(REFUSALS, "reason" => reason).increment(1);
    }

    /// A backend a request left running has ended, or could not be ended.
    pub fn ended(&self, how: Ended) {
        self.abandoned.fetch_add(1, Ordering::Relaxed);
        if how == Ended::Terminated {
            self.terminated.fetch_add(1, Ordering::Relaxed);
        }
        metrics::counter!(ABANDONED, "outcome" => how.label()).increment(1);
    }

    pub fn figures(&self) -> Figures {
        Figures {
            instances: self.instances.load(Ordering::Relaxed),
            open: self.open.load(Ordering::Relaxed),
            in_use: self.in_use.load(Ordering::Relaxed),
            schema_loads: self.loads.load(Ordering::Relaxed),
            schema_checks: self.checks.load(Ordering::Relaxed),
            notifications: self.notifications.load(Ordering::Relaxed),
            notifications_ignored: self.ignored_notifications.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            refusals: self.refusals.load(Ordering::Relaxed),
            abandoned: self.abandoned.load(Ordering::Relaxed),
            terminated: self.terminated.load(Ordering::Relaxed),
        }
    }
}
