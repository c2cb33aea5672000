//! The metrics endpoint: `GET /metrics` in Prometheus's text format, on a listener of its own
//! (`QUIRE_METRICS_LISTEN`), never on the public ones. The crates above the domain record
//! through the `metrics` facade; this module installs the recorder they record into (only
//! when the listener is set, so a server without it pays nothing but a no-op per event) and
//! reads the gauges that are a state rather than events (the database pool, open
//! connections) at each scrape. `docs/operations.md` lists every metric.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, web};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use quire_edge::limits::ListenerShare;
use quire_store::Database;
use quire_wire::ConnectionsOpen;

use crate::error::ServerError;

/// Bucket bounds of every `…_seconds` histogram: from half a millisecond (a cached page) to
/// a minute (a publish of a large bundle).
const SECONDS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0,
];

/// Bucket bounds of every `…_bytes` histogram: 1 KiB to 1 GiB, by fours.
const BYTES: &[f64] = &[
    1024.0,
    4096.0,
    16_384.0,
    65_536.0,
    262_144.0,
    1_048_576.0,
    4_194_304.0,
    16_777_216.0,
    67_108_864.0,
    268_435_456.0,
    1_073_741_824.0,
];

/// How often histograms' samples are folded into their buckets between scrapes, so that a
/// busy server's samples never pile up in memory.
const UPKEEP: Duration = Duration::from_secs(5);

/// Installs the process's recorder and returns its handle; the events recorded before this
/// are lost, so it runs before anything is built.
///
/// # Errors
/// [`ServerError::Metrics`] when the recorder cannot be installed.
pub(crate) fn install() -> Result<PrometheusHandle, ServerError> {
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS)
        .and_then(|b| b.set_buckets_for_metric(Matcher::Suffix("_bytes".into()), BYTES))
        .and_then(PrometheusBuilder::install_recorder)
        .map_err(|e| ServerError::Metrics(e.to_string()))?;
    describe();
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(UPKEEP);
        loop {
            tick.tick().await;
            upkeep.run_upkeep();
        }
    });
    Ok(handle)
}

/// What the scrape reads at the moment it is made.
#[derive(Clone)]
pub(crate) struct Sampled {
    pub db: Database,
    pub api_connections: Arc<ListenerShare>,
    pub pages_connections: ConnectionsOpen,
    pub quotas: crate::quota_gauges::QuotaGauges,
}

impl Sampled {
    fn record(&self) {
        let pool = self.db.pool_status();
        for (state, n) in [
            ("max", pool.max),
            ("open", pool.open),
            ("in_use", pool.in_use),
            ("waiting", pool.waiting),
        ] {
            gauge("quire_db_pool_connections", "state", state, n);
        }
        gauge(
            "quire_open_connections",
            "listener",
            "api",
            self.api_connections.open(),
        );
        gauge(
            "quire_open_connections",
            "listener",
            "pages",
            self.pages_connections.now(),
        );
    }
}

#[allow(clippy::cast_precision_loss)] // counts of connections, far below 2^53
fn gauge(name: &'static str, label: &'static str, value: &'static str, n: usize) {
    metrics::gauge!(name, label => value).set(n as f64);
}

/// The metrics server on `listener`: one worker, `GET /metrics` and nothing else. It stops
/// on the same signals as the others.
///
/// # Errors
/// [`ServerError::Listen`] when actix cannot take the listener.
pub(crate) fn server(
    listener: TcpListener,
    handle: PrometheusHandle,
    sampled: Sampled,
) -> Result<actix_web::dev::Server, ServerError> {
    let addr = listener
        .local_addr()
        .map_or_else(|_| "?".to_owned(), |a| a.to_string());
    let state = web::Data::new((handle, sampled));
    Ok(HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .route("/metrics", web::get().to(scrape))
    })
    .workers(1)
    .client_request_timeout(Duration::from_secs(5))
    .shutdown_timeout(1)
    .listen(listener)
    .map_err(|source| ServerError::Listen {
        listener: "metrics",
        addr,
        source,
    })?
    .run())
}

async fn scrape(state: web::Data<(PrometheusHandle, Sampled)>) -> HttpResponse {
    let (handle, sampled) = state.get_ref();
    sampled.record();
    sampled.quotas.record().await;
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .insert_header(("cache-control", "no-store"))
        .body(handle.render())
}

/// The help text of each metric, shown by Prometheus and Grafana beside its name.
fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        "quire_http_requests_total",
        "API and dashboard requests answered, by method, route template and status"
    );
    describe_histogram!(
        "quire_http_request_duration_seconds",
        Unit::Seconds,
        "Time to answer an API or dashboard request, by method and route template"
    );
    describe_counter!(
        "quire_pages_requests_total",
        "Requests the pages origin answered, by status"
    );
    describe_counter!(
        "quire_pages_response_bytes_total",
        Unit::Bytes,
        "Body bytes the pages origin answered with (HEAD excluded)"
    );
    describe_histogram!(
        "quire_pages_request_duration_seconds",
        Unit::Seconds,
        "Time to make a pages-origin answer, before it is written"
    );
    describe_counter!(
        "quire_cache_lookups_total",
        "Lookups of the in-memory caches, by cache and hit or miss"
    );
    describe_gauge!(
        "quire_db_pool_connections",
        "The metadata database pool: its max, open, in-use connections and waiting callers"
    );
    describe_histogram!(
        "quire_db_pool_wait_seconds",
        Unit::Seconds,
        "Time a caller waited for a pooled database connection"
    );
    describe_counter!(
        "quire_db_pool_timeouts_total",
        "Callers that got no pooled database connection in time"
    );
    describe_histogram!(
        "quire_publish_duration_seconds",
        Unit::Seconds,
        "Time to publish a page or replace its files, from the parsed request to the answer"
    );
    describe_histogram!(
        "quire_publish_bytes",
        Unit::Bytes,
        "Size of the pages published or replaced"
    );
    describe_counter!(
        "quire_budget_leases_total",
        "Blocks of views leased from the store for budgeted pages and links, by outcome"
    );
    describe_counter!(
        "quire_budget_views_leased_total",
        "Views leased from the store in those blocks"
    );
    describe_counter!("quire_janitor_runs_total", "Janitor runs completed");
    describe_histogram!(
        "quire_janitor_run_duration_seconds",
        Unit::Seconds,
        "Time one janitor run took"
    );
    describe_counter!(
        "quire_janitor_pass_failures_total",
        "Janitor passes that failed, by pass"
    );
    describe_gauge!(
        "quire_mail_queue_depth",
        "Account mails handed off and not yet sent or failed"
    );
    describe_counter!(
        "quire_mail_dispatched_total",
        "Account mails sent off the request path, by outcome"
    );
    describe_gauge!(
        "quire_open_connections",
        "Client connections open, by listener"
    );
    describe_gauge!(
        "quire_accounts_near_quota",
        "Accounts using 80% or more of a quota, by quota (databases, database_bytes, object_bytes)"
    );
    describe_gauge!(
        "quire_data_api_instances",
        "Databases whose data API instance is serving on this replica"
    );
    describe_gauge!(
        "quire_data_api_connections",
        "Cluster connections of the data API instances: open and in use now, the cap (max) \
         and one account's share of it (account_max)"
    );
    describe_counter!(
        "quire_data_api_refusals_total",
        "Data API requests refused by reason: share, cap, busy, starting, unavailable"
    );
    describe_counter!(
        "quire_data_api_evictions_total",
        "Idle data API connections and instances closed to make room, by kind"
    );
    describe_counter!(
        "quire_data_api_schema_loads_total",
        "Schema loads of the data API instances, by cause: start, notification, miss"
    );
    describe_counter!(
        "quire_data_api_notifications_total",
        "NOTIFY pgrst heard by the data API instances, by payload: reload or other (ignored)"
    );
}
