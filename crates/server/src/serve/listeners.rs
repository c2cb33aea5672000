//! The three listeners: their sockets, bound during start-up, and one function each that
//! starts serving on them (the API and dashboard on actix, the pages origin on
//! `quire-wire`, the metrics endpoint).

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer, web};
use metrics_exporter_prometheus::PrometheusHandle;
use quire_app::Services;
use quire_edge::AppState;
use quire_edge::limits;
use quire_edge::{answer_headers, request_log, routing};
use quire_pages_origin::{self as pages_origin, PagesState, WireLimits};

use super::capacity::Capacity;
use crate::config::Config;
use crate::error::ServerError;

/// Connections the kernel keeps waiting to be accepted (it caps this at
/// `net.core.somaxconn`). The standard library's 128 overflows in a burst of connections, and
/// a client whose connection attempt is dropped retries it only after a second.
const BACKLOG: i32 = 4096;

/// Time for a client to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// An idle keep-alive connection is closed after this.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// On SIGTERM, requests in flight get this long to finish.
const SHUTDOWN_GRACE_SECS: u64 = 30;

/// A listening socket and the address it took (a port 0 resolved).
pub(super) struct Bound {
    pub socket: TcpListener,
    pub addr: SocketAddr,
}

/// The metrics listener's socket and the recorder it will read.
pub(super) struct MetricsSocket {
    pub bound: Bound,
    pub handle: PrometheusHandle,
}

/// The sockets start-up bound, none served yet.
pub(super) struct Listeners {
    pub api: Bound,
    pub pages: Bound,
    pub metrics: Option<MetricsSocket>,
}

/// Binds `addr` (the first of its addresses that takes it); `listener` names it in errors.
pub(super) fn bind(listener: &'static str, addr: &str) -> Result<Bound, ServerError> {
    let failed = |source| ServerError::Listen {
        listener,
        addr: addr.to_owned(),
        source,
    };
    let mut last = std::io::Error::new(std::io::ErrorKind::InvalidInput, "no address to bind");
    for candidate in addr.to_socket_addrs().map_err(failed)? {
        match listen_on(candidate) {
            Ok(socket) => {
                let addr = socket.local_addr().map_err(failed)?;
                return Ok(Bound { socket, addr });
            }
            Err(e) => last = e,
        }
    }
    Err(failed(last))
}

/// A listening socket as `TcpListener::bind` makes one (`SO_REUSEADDR` on Unix), with
/// room for [`BACKLOG`] connections in its queue.
fn listen_on(addr: SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// The API and dashboard on actix, with the edge's middlewares; it serves once awaited.
pub(super) fn api(
    bound: Bound,
    config: &Config,
    state: AppState,
    capacity: &Capacity,
) -> Result<Server, ServerError> {
    let connect = limits::on_connect(
        capacity.counts.clone(),
        capacity.api_share.clone(),
        capacity.edge,
        state.trusted_proxies.clone(),
    );
    let (edge, bodies) = (capacity.edge, capacity.bodies.clone());
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(web::Data::new(edge))
            .app_data(bodies.clone())
            // HEAD's method is rewritten in place, which needs the only handle on the
            // request (the middlewares around it keep none); the log, outermost, records the
            // method the client sent.
            .wrap(from_fn(routing::head_as_get))
            .wrap(from_fn(limits::guard))
            .wrap(from_fn(answer_headers::answer_headers))
            .wrap(from_fn(request_log::log_request))
            .configure(quire_http::configure(state.clone()))
    })
    .on_connect(connect)
    .max_connections(capacity.api_per_worker)
    .client_request_timeout(HEADER_TIMEOUT)
    .client_disconnect_timeout(Duration::from_secs(1))
    .keep_alive(KEEP_ALIVE)
    .shutdown_timeout(SHUTDOWN_GRACE_SECS)
    .listen(bound.socket)
    .map_err(|source| ServerError::Listen {
        listener: "API",
        addr: bound.addr.to_string(),
        source,
    })?;
    if config.workers > 0 {
        server = server.workers(config.workers);
    }
    Ok(server.run())
}

/// The pages origin on `quire-wire`; it accepts from now on, and serves until its `run`
/// returns.
pub(super) fn pages(
    bound: &Bound,
    config: &Config,
    state: &AppState,
    capacity: &Capacity,
) -> Result<pages_origin::Running, ServerError> {
    let Services {
        serving,
        keys,
        databases,
        ..
    } = &state.services;
    let pages_state = PagesState {
        serving: serving.clone(),
        keys: keys.clone(),
        databases: databases.clone(),
        trusted_proxies: state.trusted_proxies.clone(),
    };
    // No per-request log line here: on the hot path it would cost more than the answer.
    let limits = WireLimits {
        header_timeout: HEADER_TIMEOUT,
        keep_alive: KEEP_ALIVE,
        max_connections: capacity.per_worker,
        max_body: pages_origin::MAX_BODY,
        edge: capacity.edge,
        shutdown_grace: Duration::from_secs(SHUTDOWN_GRACE_SECS),
    };
    quire_wire::start(
        &bound.socket,
        quire_wire::Workers {
            count: capacity.workers,
            pinned: config.pin_workers,
        },
        limits,
        &capacity.counts,
        &pages_state.trusted_proxies,
        &pages_state,
    )
    .map_err(|source| ServerError::Listen {
        listener: "pages",
        addr: bound.addr.to_string(),
        source,
    })
}

/// The metrics endpoint, reading `sampled` at each scrape; it serves once awaited.
pub(super) fn metrics(
    socket: MetricsSocket,
    sampled: crate::exporter::Sampled,
) -> Result<Server, ServerError> {
    tracing::info!(metrics = %socket.bound.addr, "metrics at /metrics");
    crate::exporter::server(socket.bound.socket, socket.handle, sampled)
}
