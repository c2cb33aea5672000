//! `quire-server`: the Quire service binary. It reads configuration, builds the adapters
//! (database), wires them into the domain services and the HTTP edge, and runs the listener,
//! migrations or an admin command. It is the only crate that knows every other.

mod config;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer, web};
use async_trait::async_trait;
use clap::{Parser, Subcommand};
use quire_accounts::{
    AccountService, CreateAccount, CreateAccountError, SessionService, SetPasswordError,
};
use quire_app::{Ports, Settings};
use quire_blobs::ObjectBundleStore;
use quire_device_auth::DeviceAuthService;
use quire_http::limits::{self, ConnectionCounts, EdgeLimits};
use quire_http::pages_origin::PagesState;
use quire_http::{AppState, Readiness};
use quire_kernel::{SystemClock, Timer};
use quire_pages::{Limits, PageConfig, PageOrigins, PageService, RandomPublicIds, Swept};
use quire_serving::{ServingConfig, ServingService};
use quire_store::{Database, DatabaseConfig};
use tracing_subscriber::EnvFilter;

use crate::config::Config;

#[derive(Debug, Parser)]
#[command(
    name = "quire-server",
    version,
    about = "Quire: publish static sites as pages"
)]
struct Cli {
    /// Configuration file (default: ./quire.toml when it exists). QUIRE_* variables win.
    #[arg(long, env = "QUIRE_CONFIG", global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run migrations, then serve (the default).
    Serve,
    /// Run pending migrations and exit.
    Migrate,
    /// Operator commands.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
}

#[derive(Debug, Subcommand)]
enum AdminCommand {
    /// Create an account with its default project and a master key; prints JSON.
    CreateAccount {
        #[arg(long)]
        email: String,
        #[arg(long)]
        handle: String,
        /// Password for the dashboard (at least 8 characters).
        #[arg(long)]
        password: Option<String>,
        #[arg(long)]
        platform_admin: bool,
        #[arg(long)]
        not_activated: bool,
    },
    /// Set the dashboard password of an account (by email or handle).
    SetPassword {
        /// Email or handle of the account.
        #[arg(long)]
        login: String,
        /// The new password (at least 8 characters). Visible to other local users in the
        /// process list; prefer --password-stdin.
        #[arg(
            long,
            conflicts_with = "password_stdin",
            required_unless_present = "password_stdin"
        )]
        password: Option<String>,
        /// Read the new password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
    },
}

fn init_logging(format: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}

#[derive(Debug)]
struct StackReadiness {
    db: Database,
    bundles: ObjectBundleStore,
}

#[async_trait]
impl Readiness for StackReadiness {
    async fn check(&self) -> Result<(), String> {
        let limit = Duration::from_secs(3);
        match tokio::time::timeout(limit, self.db.ping()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "database ping failed");
                return Err("database unreachable".into());
            }
            Err(_) => return Err("database did not answer within 3 s".into()),
        }
        match tokio::time::timeout(limit, self.bundles.ping()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "bundle storage check failed");
                Err("bundle storage unreachable".into())
            }
            Err(_) => Err("bundle storage did not answer within 3 s".into()),
        }
    }
}

/// The runtime's timer, for domain work that acts on a schedule.
#[derive(Debug)]
struct TokioTimer;

impl Timer for TokioTimer {
    fn sleep(
        &self,
        duration: Duration,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// The services' settings, from the configuration.
fn settings(config: &Config, origins: &PageOrigins, signing_key: String) -> Settings {
    Settings {
        pages: PageConfig {
            origins: origins.clone(),
            limits: Limits {
                max_files: config.max_files,
                max_file_bytes: config.max_file_bytes,
                max_page_bytes: config.max_page_bytes,
            },
            publish_lease: Duration::from_secs(config.publish_lease_secs.max(3)),
            ..PageConfig::default()
        },
        serving: ServingConfig {
            origins: origins.clone(),
            base_url: config.base_url.clone(),
            policy_ttl: Duration::from_millis(config.policy_cache_ms),
            file_cache_bytes: config.file_cache_bytes,
            ..ServingConfig::default()
        },
        base_url: config.base_url.clone(),
        signing_key: signing_key.into_bytes(),
    }
}

/// Sweeps interrupted publishes and orphaned files, expired sessions, old device grants
/// and rate-limit windows now, then every `interval`.
fn spawn_janitor(
    pages: PageService,
    sessions: SessionService,
    device_auth: DeviceAuthService,
    interval: Duration,
) {
    tokio::spawn(async move {
        loop {
            match sessions.sweep_expired().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(sessions = n, "janitor removed expired sessions"),
                Err(e) => tracing::warn!(error = %e, "janitor session pass failed"),
            }
            match device_auth.sweep().await {
                Ok((0, 0)) => {}
                Ok((grants, windows)) => tracing::info!(
                    device_grants = grants,
                    rate_windows = windows,
                    "janitor removed old device grants and rate windows"
                ),
                Err(e) => tracing::warn!(error = %e, "janitor device-login pass failed"),
            }
            match pages.sweep().await {
                Ok(swept) if swept != Swept::default() => tracing::info!(
                    pending_pages = swept.pending_pages,
                    orphaned_bundles = swept.orphaned_bundles,
                    leftovers = swept.leftovers,
                    "janitor removed leftovers"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "janitor pass failed"),
            }
            tokio::time::sleep(interval).await;
        }
    });
}

fn connect(config: &Config) -> Result<Database, String> {
    let mut db_config = DatabaseConfig::new(config.database_url.clone());
    db_config.max_connections = config.database_max_connections;
    Database::connect(&db_config).map_err(|e| e.to_string())
}

async fn migrate(db: &Database) -> Result<(), String> {
    let ran = db.migrate().await.map_err(|e| e.to_string())?;
    tracing::info!(applied = ran, backend = ?db.backend(), "migrations up to date");
    Ok(())
}

fn bind(what: &str, addr: &str) -> Result<(TcpListener, std::net::SocketAddr), String> {
    let listener =
        TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr} ({what}): {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    Ok((listener, bound))
}

/// Time for a client to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// An idle keep-alive connection is closed after this.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// On SIGTERM, requests in flight get this long to finish.
const SHUTDOWN_GRACE_SECS: u64 = 30;

/// Name of the shared secret that signs the pages origin's cookies and passes.
const PAGES_SIGNING_SECRET: &str = "pages-signing-key";

/// Writes the views counted in memory every second, so `viewCount` is at most about a
/// second behind; failed writes are kept and retried.
fn spawn_view_flusher(serving: ServingService) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(VIEW_FLUSH_INTERVAL);
        loop {
            tick.tick().await;
            if let Err(e) = serving.flush_views().await {
                tracing::warn!(error = %e, "view counts not written; kept for the next flush");
            }
        }
    });
}

const VIEW_FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// File descriptors kept back from client connections: database connections, bundle
/// files, logs.
const RESERVED_FILES: u64 = 128;

/// Raises the open-file soft limit to the hard limit, and returns how many connections the
/// two listeners may hold together: `QUIRE_MAX_CONNECTIONS`, within what the limit leaves.
fn connection_budget(config: &Config) -> usize {
    let files = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read or raise the open-file limit; assuming 1024");
            1024
        }
    };
    let reserved = RESERVED_FILES + config.database_max_connections as u64;
    let fit = usize::try_from(files.saturating_sub(reserved).max(16)).unwrap_or(usize::MAX);
    let budget = match config.max_connections {
        0 => fit,
        n => n.min(fit),
    };
    tracing::info!(
        open_files = files,
        connections = budget,
        "connection budget"
    );
    budget
}

fn edge_limits(config: &Config, page_body_limit: usize) -> EdgeLimits {
    EdgeLimits {
        body_timeout: Duration::from_secs(config.body_timeout_secs),
        body_min_rate: config.body_min_rate,
        max_body: page_body_limit as u64,
        per_client: config.max_connections_per_client,
    }
}

async fn serve(mut config: Config, db: Database) -> Result<(), String> {
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
    let origins =
        PageOrigins::parse(&config.pages_url).map_err(|e| format!("QUIRE_PAGES_URL {e}"))?;
    if !origins.per_owner() {
        tracing::warn!(
            pages_url = %config.pages_url,
            "QUIRE_PAGES_URL has no {{handle}}: every owner's pages share one origin, so a \
             page's script can read other owners' pages its visitors opened; use this only \
             on a single-tenant server"
        );
    }
    let bundles = ObjectBundleStore::open(&config.storage_url).map_err(|e| e.to_string())?;
    let signing_key = db
        .server_secret(PAGES_SIGNING_SECRET)
        .await
        .map_err(|e| format!("cannot read the signing key: {e}"))?;
    let trusted_proxies = quire_http::client_ip::TrustedProxies::parse(&config.trusted_proxies)
        .map_err(|e| format!("QUIRE_TRUSTED_PROXIES: {e}"))?;
    let services = quire_app::build(
        Ports {
            store: Arc::new(db.clone()),
            bundles: Arc::new(bundles.clone()),
            clock: Arc::new(SystemClock),
            timer: Arc::new(TokioTimer),
            ids: Arc::new(RandomPublicIds),
            directory: None,
        },
        settings(&config, &origins, signing_key),
    );
    spawn_janitor(
        services.pages.clone(),
        services.sessions.clone(),
        services.device_auth.clone(),
        Duration::from_secs(config.janitor_interval_secs.max(1)),
    );
    let serving = services.serving.clone();
    spawn_view_flusher(serving.clone());
    let keys = services.keys.clone();
    let state = AppState {
        projects: services.projects,
        keys: services.keys,
        pages: services.pages,
        device_auth: services.device_auth,
        sessions: services.sessions,
        serving: services.serving,
        base_url: config.base_url.clone(),
        trusted_proxies: trusted_proxies.clone(),
        readiness: Arc::new(StackReadiness { db, bundles }),
    };
    let edge = edge_limits(&config, quire_http::page_body_limit(&state.pages.limits()));
    let workers = match config.workers {
        0 => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        n => n,
    };
    // Half the budget to each listener, shared out among its workers.
    let per_worker = (connection_budget(&config) / 2 / workers).max(8);
    let counts = Arc::new(ConnectionCounts::default());
    let api_connect = limits::on_connect(counts.clone(), edge, trusted_proxies.clone());
    let mut api = HttpServer::new(move || {
        App::new()
            .app_data(web::Data::new(edge))
            .wrap(tracing_actix_web::TracingLogger::default())
            .wrap(from_fn(limits::guard))
            .configure(quire_http::configure(state.clone()))
    })
    .on_connect(api_connect)
    .max_connections(per_worker)
    .client_request_timeout(HEADER_TIMEOUT)
    .client_disconnect_timeout(Duration::from_secs(1))
    .keep_alive(KEEP_ALIVE)
    .shutdown_timeout(SHUTDOWN_GRACE_SECS)
    .listen(listener)
    .map_err(|e| e.to_string())?;
    let pages_connect = limits::on_connect(counts, edge, trusted_proxies.clone());
    let pages_state = PagesState {
        serving: serving.clone(),
        keys,
        trusted_proxies,
    };
    // No per-request log line here: on the hot path it would cost more than the answer.
    let mut visitors = HttpServer::new(move || {
        App::new()
            .app_data(web::Data::new(edge))
            .wrap(from_fn(limits::guard))
            .configure(quire_http::pages_origin::configure(pages_state.clone()))
    })
    .on_connect(pages_connect)
    .max_connections(per_worker)
    .client_request_timeout(HEADER_TIMEOUT)
    .client_disconnect_timeout(Duration::from_secs(1))
    .keep_alive(KEEP_ALIVE)
    .shutdown_timeout(SHUTDOWN_GRACE_SECS)
    .listen(pages_listener)
    .map_err(|e| e.to_string())?;
    if config.workers > 0 {
        api = api.workers(config.workers);
        visitors = visitors.workers(config.workers);
    }
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
        println!(
            "{}",
            serde_json::json!({ "listening": {
                "api": addr.to_string(),
                "pages": pages_addr.to_string(),
            } })
        );
    }
    let (api, visitors) = tokio::join!(api.run(), visitors.run());
    if let Err(e) = serving.flush_views().await {
        tracing::warn!(error = %e, "view counts of the last second were not written");
    }
    api.map_err(|e| e.to_string())?;
    visitors.map_err(|e| e.to_string())?;
    tracing::info!("shut down cleanly");
    Ok(())
}

async fn create_account(db: Database, input: CreateAccount) -> Result<serde_json::Value, String> {
    migrate(&db).await?;
    let accounts = AccountService::new(Arc::new(db), Arc::new(SystemClock));
    let created = accounts.create(input).await.map_err(|e| match e {
        CreateAccountError::Infra(e) => format!("database error: {e}"),
        other => other.to_string(),
    })?;
    Ok(serde_json::json!({
        "accountId": created.account.id,
        "handle": created.account.handle,
        "projectId": created.project.id,
        "projectSlug": created.project.slug,
        "masterKey": created.master_key.expose(),
    }))
}

async fn set_password(db: Database, login: &str, password: &str) -> Result<(), String> {
    migrate(&db).await?;
    let accounts = AccountService::new(Arc::new(db), Arc::new(SystemClock));
    accounts
        .set_password(login, password)
        .await
        .map_err(|e| match e {
            SetPasswordError::Infra(e) => format!("database error: {e}"),
            other => other.to_string(),
        })
}

fn read_password_line() -> Result<String, String> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the password from standard input: {e}"))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::load(cli.config.as_deref(), |k| std::env::var(k).ok()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("quire-server: configuration error: {e}");
            return ExitCode::from(2);
        }
    };
    init_logging(&config.log_format);
    let db = match connect(&config) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("quire-server: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(config, db).await,
        Command::Migrate => migrate(&db).await,
        Command::Admin {
            command:
                AdminCommand::CreateAccount {
                    email,
                    handle,
                    password,
                    platform_admin,
                    not_activated,
                },
        } => create_account(
            db,
            CreateAccount {
                email,
                handle,
                password,
                platform_admin,
                activated: !not_activated,
            },
        )
        .await
        .map(|out| {
            #[allow(clippy::print_stdout)]
            {
                println!("{out}");
            }
        }),
        Command::Admin {
            command:
                AdminCommand::SetPassword {
                    login,
                    password,
                    password_stdin,
                },
        } => {
            let password = match password {
                Some(p) if !password_stdin => Ok(p),
                _ => read_password_line(),
            };
            match password {
                Ok(p) => set_password(db, &login, &p).await.map(|()| {
                    eprintln!("quire-server: password set for {login}");
                }),
                Err(e) => Err(e),
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quire-server: {e}");
            ExitCode::FAILURE
        }
    }
}
