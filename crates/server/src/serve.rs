//! `serve`: the two listeners (API and dashboard; pages), their limits, the metrics listener
//! when it is asked for, and a clean shutdown.

use std::net::{TcpListener, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer, web};
use quire_app::Ports;
use quire_blobs::ObjectBundleStore;
use quire_edge::AppState;
use quire_edge::in_flight::BodiesInFlight;
use quire_edge::limits::{self, ConnectionCounts, EdgeLimits, ListenerShare};
use quire_edge::{answer_headers, request_log, routing};
use quire_kernel::SystemClock;
use quire_pages::{PageOrigins, RandomPublicIds};
use quire_pages_origin::{self as pages_origin, PagesState, WireLimits};
use quire_smtp::BackgroundDispatch;
use quire_store::Database;

use crate::config::Config;
use crate::error::ServerError;
use crate::tasks::{spawn_janitor, spawn_view_flusher};
use crate::wiring::{
    BlockingPool, CAPTCHA_SECRET, PAGES_SIGNING_SECRET, StackReadiness, TokioTimer, mailer,
    migrate, sealing_key, settings,
};

/// Connections the kernel keeps waiting to be accepted (it caps this at
/// `net.core.somaxconn`). The standard library's 128 overflows in a burst of connections, and
/// a client whose connection attempt is dropped retries it only after a second.
const BACKLOG: i32 = 4096;

fn bind(
    listener: &'static str,
    addr: &str,
) -> Result<(TcpListener, std::net::SocketAddr), ServerError> {
    let failed = |source| ServerError::Listen {
        listener,
        addr: addr.to_owned(),
        source,
    };
    let mut last = std::io::Error::new(std::io::ErrorKind::InvalidInput, "no address to bind");
    for candidate in addr.to_socket_addrs().map_err(failed)? {
        match listen_on(candidate) {
            Ok(socket) => {
                let bound = socket.local_addr().map_err(failed)?;
                return Ok((socket, bound));
            }
            Err(e) => last = e,
        }
    }
    Err(failed(last))
}

/// A listening socket as `TcpListener::bind` makes one (`SO_REUSEADDR` on Unix), with
/// room for [`BACKLOG`] connections in its queue.
fn listen_on(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// Time for a client to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// An idle keep-alive connection is closed after this.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// On SIGTERM, requests in flight get this long to finish.
const SHUTDOWN_GRACE_SECS: u64 = 30;

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

/// On a server with no account, prints a new setup link, in full, for whoever reads the log
/// to create the first (platform-admin) account with. It is a one-time secret on purpose in
/// the log: it dies when used, and it can do nothing once any account exists.
async fn announce_first_run(services: &quire_app::Services) -> Result<(), ServerError> {
    if let Some(link) = services
        .first_run
        .start_up_link()
        .await
        .map_err(ServerError::FirstRun)?
    {
        tracing::warn!(
            setup_link = %link,
            "this server has no account yet: open the setup link to create the first one \
             (a platform admin); it works once, for 24 hours"
        );
    }
    Ok(())
}

pub(crate) async fn serve(mut config: Config, db: Database) -> Result<(), ServerError> {
    // Before anything records: what is recorded with no recorder installed is lost.
    let metrics = if config.metrics_listen.is_empty() {
        None
    } else {
        let (listener, addr) = bind("metrics", &config.metrics_listen)?;
        Some((listener, addr, crate::exporter::install()?))
    };
    migrate(&db).await?;
    let (listener, addr) = bind("API", &config.listen)?;
    let (pages_listener, pages_addr) = bind("pages", &config.pages_listen)?;
    if config.base_url.is_empty() {
        config.base_url = format!("http://{addr}");
    }
    if config.pages_url.is_empty() {
        // `*.localhost` is loopback to browsers and curl, and another site than 127.0.0.1.
        config.pages_url = format!("http://{{handle}}.localhost:{}", pages_addr.port());
    }
    let config = config;
    let origins = PageOrigins::parse(&config.pages_url).map_err(ServerError::PagesUrl)?;
    if !origins.per_owner() {
        tracing::warn!(
            pages_url = %config.pages_url,
            "QUIRE_PAGES_URL has no {{handle}}: every owner's pages share one origin, so a \
             page's script can read other owners' pages its visitors opened; use this only \
             on a single-tenant server"
        );
    }
    let bundles = ObjectBundleStore::open(&config.storage_url)?;
    let sealing_key = sealing_key(std::path::Path::new(&config.secret_key_file))?;
    // Every key that signs is kept sealed under the key file: a copy of the database alone
    // signs nothing. Values stored bare by an older version are sealed before first use.
    let db = db.with_sealing_key(sealing_key.clone());
    let sealed = db
        .seal_stored_secrets()
        .await
        .map_err(ServerError::SealStoredSecrets)?;
    if sealed.server_secrets + sealed.oauth_keys > 0 {
        tracing::info!(
            server_secrets = sealed.server_secrets,
            oauth_keys = sealed.oauth_keys,
            "sealed signing keys stored bare"
        );
    }
    let signing_key = db
        .server_secret(PAGES_SIGNING_SECRET)
        .await
        .map_err(ServerError::SigningKey)?;
    let captcha_secret = db
        .server_secret(CAPTCHA_SECRET)
        .await
        .map_err(ServerError::SigningKey)?;
    let trusted_proxies = quire_edge::client_ip::TrustedProxies::parse(&config.trusted_proxies)
        .map_err(ServerError::TrustedProxies)?;
    let mailer = mailer(&config)?;
    let documents_on_loopback = crate::wiring::documents_on_loopback_http(&config);
    if config.oauth_documents_on_loopback_http && !documents_on_loopback {
        tracing::warn!(
            "QUIRE_OAUTH_CIMD_ALLOW_LOOPBACK_HTTP ignored: it is for test servers on a loopback http base URL"
        );
    }
    let databases = crate::databases::wire(&config).await?;
    let services = quire_app::build(
        Ports::from_store(
            Arc::new(db.clone()),
            quire_app::OtherAdapters {
                bundles: Arc::new(bundles.clone()),
                object_bytes: Arc::new(bundles.clone()),
                clock: Arc::new(SystemClock),
                timer: Arc::new(TokioTimer),
                offload: Arc::new(BlockingPool),
                ids: Arc::new(RandomPublicIds),
                dispatch: Arc::new(BackgroundDispatch::new(mailer.clone())),
                mailer,
                client_documents: Arc::new(quire_documents::DocumentFetcher::new(
                    documents_on_loopback,
                )),
                cluster: databases.cluster.clone(),
                data_api: databases.runtime.clone(),
            },
        ),
        settings(
            &config,
            &origins,
            pages_addr,
            signing_key,
            captcha_secret,
            sealing_key,
        ),
    );
    let sealed = services
        .sessions
        .seal_legacy_secrets()
        .await
        .map_err(ServerError::SealSecrets)?;
    if sealed > 0 {
        tracing::info!(
            accounts = sealed,
            "sealed second-factor secrets stored bare"
        );
    }
    spawn_janitor(
        &services,
        Duration::from_secs(config.janitor_interval_secs.max(1)),
    );
    announce_first_run(&services).await?;
    let serving = services.serving.clone();
    spawn_view_flusher(serving.clone());
    let keys = services.keys.clone();
    let page_databases = services.databases.clone();
    let state = AppState::new(
        services,
        config.base_url.clone(),
        trusted_proxies.clone(),
        Arc::new(StackReadiness {
            db: db.clone(),
            bundles,
        }),
    )
    .with_mcp_origins(
        config
            .mcp_allowed_origins
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .map(str::to_owned)
            .collect(),
    );
    let page_body_limit = quire_edge::page_body_limit(&state.pages.limits());
    let edge = edge_limits(&config, page_body_limit);
    let bodies = web::Data::new(bodies_in_flight(&config, page_body_limit));
    let workers = match config.workers {
        0 => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        n => n,
    };
    // Half the budget to each listener, shared out among its workers. The API listener
    // takes all that the open-file limit leaves it, past its share for health checks.
    let budget = connection_budget(&config);
    let per_worker = (budget.ordinary / 2 / workers).max(8);
    let api_per_worker = (budget.fit / 2 / workers).max(per_worker);
    let counts = Arc::new(ConnectionCounts::default());
    let api_share = ListenerShare::new(per_worker * workers);
    let api_connect = limits::on_connect(
        counts.clone(),
        api_share.clone(),
        edge,
        trusted_proxies.clone(),
    );
    let quota_gauges =
        crate::quota_gauges::QuotaGauges::new(state.objects.clone(), state.databases.clone());
    let mut api = HttpServer::new(move || {
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
    .on_connect(api_connect)
    .max_connections(api_per_worker)
    .client_request_timeout(HEADER_TIMEOUT)
    .client_disconnect_timeout(Duration::from_secs(1))
    .keep_alive(KEEP_ALIVE)
    .shutdown_timeout(SHUTDOWN_GRACE_SECS)
    .listen(listener)
    .map_err(|source| ServerError::Listen {
        listener: "API",
        addr: addr.to_string(),
        source,
    })?;
    let pages_state = PagesState {
        serving: serving.clone(),
        keys,
        databases: page_databases,
        trusted_proxies,
    };
    // No per-request log line here: on the hot path it would cost more than the answer.
    let pages_limits = WireLimits {
        header_timeout: HEADER_TIMEOUT,
        keep_alive: KEEP_ALIVE,
        max_connections: per_worker,
        max_body: pages_origin::MAX_BODY,
        edge,
        shutdown_grace: Duration::from_secs(SHUTDOWN_GRACE_SECS),
    };
    let visitors = quire_wire::start(
        &pages_listener,
        quire_wire::Workers {
            count: workers,
            pinned: config.pin_workers,
        },
        pages_limits,
        &counts,
        &pages_state.trusted_proxies,
        &pages_state,
    )
    .map_err(|source| ServerError::Listen {
        listener: "pages",
        addr: pages_addr.to_string(),
        source,
    })?;
    if config.workers > 0 {
        api = api.workers(config.workers);
    }
    let mut listening = serde_json::json!({
        "api": addr.to_string(),
        "pages": pages_addr.to_string(),
    });
    let metrics = match metrics {
        Some((listener, metrics_addr, handle)) => {
            let sampled = crate::exporter::Sampled {
                db,
                api_connections: api_share,
                pages_connections: visitors.open_connections(),
                quotas: quota_gauges,
            };
            listening["metrics"] = metrics_addr.to_string().into();
            tracing::info!(metrics = %metrics_addr, "metrics at /metrics");
            Some(crate::exporter::server(listener, handle, sampled)?)
        }
        None => None,
    };
    tracing::info!(
        api = %addr,
        pages = %pages_addr,
        base_url = %config.base_url,
        pages_url = %config.pages_url,
        "quire-server listening"
    );
    // One machine-readable line on stdout, for scripts and the black-box tests.
    #[allow(clippy::print_stdout)]
    {
        println!("{}", serde_json::json!({ "listening": listening }));
    }
    let metrics = async {
        match metrics {
            Some(server) => server.await,
            None => Ok(()),
        }
    };
    let (api, visitors, metrics) = tokio::join!(api.run(), visitors.run(), metrics);
    if let Err(e) = metrics {
        tracing::warn!(error = %e, "the metrics listener stopped with an error");
    }
    if let Err(e) = serving.close_views().await {
        tracing::warn!(error = %e, "view counts of the last second were not written");
    }
    if let Some(local) = databases.local
        && let Err(e) = local.stop().await
    {
        tracing::warn!(error = %e, "the private database cluster did not stop cleanly");
    }
    api.map_err(|source| ServerError::Serve {
        listener: "API",
        source,
    })?;
    visitors.map_err(|source| ServerError::Serve {
        listener: "pages",
        source,
    })?;
    tracing::info!("shut down cleanly");
    Ok(())
}
