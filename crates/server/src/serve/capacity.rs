//! How much the listeners may hold: connections (within the open-file limit), worker
//! threads, and the bytes of long bodies in flight, shared out between the API and pages
//! listeners.

use std::sync::Arc;
use std::time::Duration;

use actix_web::web;
use quire_edge::AppState;
use quire_edge::in_flight::BodiesInFlight;
use quire_edge::limits::{ConnectionCounts, EdgeLimits, ListenerShare};

use crate::config::Config;

/// File descriptors kept back from client connections: database connections, bundle
/// files, logs.
const RESERVED_FILES: u64 = 128;

/// How many connections the two listeners may hold together.
#[derive(Debug, Clone, Copy)]
struct ConnectionBudget {
    /// What the open-file limit leaves.
    fit: usize,
    /// `QUIRE_MAX_CONNECTIONS` within that: past it, the API listener answers only health
    /// checks, and the pages listener leaves new connections in its queue.
    ordinary: usize,
}

/// What the API and pages listeners are given to share.
pub(super) struct Capacity {
    /// Worker threads of each listener.
    pub workers: usize,
    /// Ordinary connections a worker of either listener holds.
    pub per_worker: usize,
    /// What a worker of the API listener may hold, health checks past its share included.
    pub api_per_worker: usize,
    /// Connections per client, counted across both listeners.
    pub counts: Arc<ConnectionCounts>,
    /// The API listener's ordinary share, which the metrics listener also reads.
    pub api_share: Arc<ListenerShare>,
    pub edge: EdgeLimits,
    pub bodies: web::Data<BodiesInFlight>,
}

impl Capacity {
    /// Raises the open-file limit and shares out what it leaves: half the budget to each
    /// listener, divided among its workers. The API listener takes all that the open-file
    /// limit leaves it, past its share for health checks.
    pub(super) fn plan(config: &Config, state: &AppState) -> Self {
        let page_body_limit = quire_edge::page_body_limit(&state.pages.limits());
        let edge = edge_limits(config, page_body_limit);
        let bodies = web::Data::new(bodies_in_flight(config, page_body_limit));
        let workers = match config.workers {
            0 => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            n => n,
        };
        let budget = connection_budget(config);
        let per_worker = (budget.ordinary / 2 / workers).max(8);
        Self {
            workers,
            per_worker,
            api_per_worker: (budget.fit / 2 / workers).max(per_worker),
            counts: Arc::new(ConnectionCounts::default()),
            api_share: ListenerShare::new(per_worker * workers),
            edge,
            bodies,
        }
    }
}

/// Raises the open-file soft limit to the hard limit, and returns how many connections the
/// two listeners may hold together: `QUIRE_MAX_CONNECTIONS`, within what the limit leaves.
fn connection_budget(config: &Config) -> ConnectionBudget {
    let files = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read or raise the open-file limit; assuming 1024");
            1024
        }
    };
    let reserved = RESERVED_FILES + config.database_max_connections as u64;
    let fit = usize::try_from(files.saturating_sub(reserved).max(16)).unwrap_or(usize::MAX);
    let ordinary = match config.max_connections {
        0 => fit,
        n => n.min(fit),
    };
    tracing::info!(
        open_files = files,
        connections = ordinary,
        "connection budget"
    );
    ConnectionBudget { fit, ordinary }
}

/// The bound on long bodies in flight: `QUIRE_BODY_BYTES_IN_FLIGHT` (four of the largest
/// page body by default) and `QUIRE_BODY_BYTES_IN_FLIGHT_PER_KEY` (two: a key may send two
/// full-size publishes at once, or many smaller ones, and two keys cannot take it all).
fn bodies_in_flight(config: &Config, page_body_limit: usize) -> BodiesInFlight {
    let page_body = u64::try_from(page_body_limit).unwrap_or(u64::MAX);
    let or = |set: u64, default: u64| if set == 0 { default } else { set };
    BodiesInFlight::new(
        or(config.body_bytes_in_flight, page_body.saturating_mul(4)),
        or(
            config.body_bytes_in_flight_per_key,
            page_body.saturating_mul(2),
        ),
    )
}

fn edge_limits(config: &Config, page_body_limit: usize) -> EdgeLimits {
    EdgeLimits {
        body_timeout: Duration::from_secs(config.body_timeout_secs),
        body_min_rate: config.body_min_rate,
        // An object upload may be the longest body; its deadline grows with its length.
        max_body: (page_body_limit as u64).max(config.max_object_bytes),
        per_client: config.max_connections_per_client,
    }
}
