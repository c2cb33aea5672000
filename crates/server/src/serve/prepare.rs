//! Start-up before any listener serves, in the order its effects must happen: the metrics
//! recorder and its socket, migrations, the API and pages sockets (whose addresses complete
//! the configuration), the secrets, the services, then what runs beside the listeners (the
//! janitor, the first-run link, the view flush) and the API origin's state.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use quire_app::{Ports, Services};
use quire_blobs::ObjectBundleStore;
use quire_edge::AppState;
use quire_edge::client_ip::TrustedProxies;
use quire_kernel::SystemClock;
use quire_pages::{PageOrigins, RandomPublicIds};
use quire_smtp::BackgroundDispatch;
use quire_store::Database;

use super::listeners::{self, Bound, Listeners, MetricsSocket};
use crate::config::Config;
use crate::databases::DatabaseWiring;
use crate::error::ServerError;
use crate::tasks::{spawn_janitor, spawn_view_flusher};
use crate::wiring::{
    BlockingPool, CAPTCHA_SECRET, PAGES_SIGNING_SECRET, StackReadiness, TokioTimer, mailer,
    migrate, sealing_key, settings,
};

/// What start-up made, for the listeners to serve.
pub(super) struct Prepared {
    /// The configuration, its base and pages URLs filled from the bound addresses.
    pub config: Config,
    /// The database, with the sealing key.
    pub db: Database,
    /// The API origin's state: the services, and what only the edge knows.
    pub state: AppState,
    pub listeners: Listeners,
    /// The database service's adapters; its private cluster is stopped after the listeners.
    pub databases: DatabaseWiring,
}

/// The secrets start-up reads or makes.
struct Secrets {
    sealing_key: quire_accounts::SealingKey,
    signing_key: String,
    captcha_secret: String,
}

pub(super) async fn prepare(mut config: Config, db: Database) -> Result<Prepared, ServerError> {
    // Before anything records: what is recorded with no recorder installed is lost.
    let metrics = if config.metrics_listen.is_empty() {
        None
    } else {
        let bound = listeners::bind("metrics", &config.metrics_listen)?;
        let handle = crate::exporter::install()?;
        Some(MetricsSocket { bound, handle })
    };
    migrate(&db).await?;
    let (api, pages) = bind_origins(&mut config)?;
    let config = config;
    let origins = page_origins(&config)?;
    let bundles = ObjectBundleStore::open(&config.storage_url)?;
    let (db, secrets) = secrets(&config, db).await?;
    let trusted_proxies =
        TrustedProxies::parse(&config.trusted_proxies).map_err(ServerError::TrustedProxies)?;
    let (services, databases) =
        services(&config, &db, &bundles, &origins, pages.addr, secrets).await?;
    start_beside(&config, &services).await?;
    let state = app_state(&config, services, trusted_proxies, &db, bundles);
    Ok(Prepared {
        config,
        db,
        state,
        listeners: Listeners {
            api,
            pages,
            metrics,
        },
        databases,
    })
}

/// Binds the API and pages sockets; an unset base URL or pages URL is then the bound
/// address's.
fn bind_origins(config: &mut Config) -> Result<(Bound, Bound), ServerError> {
    let api = listeners::bind("API", &config.listen)?;
    let pages = listeners::bind("pages", &config.pages_listen)?;
    if config.base_url.is_empty() {
        config.base_url = format!("http://{}", api.addr);
    }
    if config.pages_url.is_empty() {
        // `*.localhost` is loopback to browsers and curl, and another site than 127.0.0.1.
        config.pages_url = format!("http://{{handle}}.localhost:{}", pages.addr.port());
    }
    Ok((api, pages))
}

fn page_origins(config: &Config) -> Result<PageOrigins, ServerError> {
    let origins = PageOrigins::parse(&config.pages_url).map_err(ServerError::PagesUrl)?;
    if !origins.per_owner() {
        tracing::warn!(
            pages_url = %config.pages_url,
            "QUIRE_PAGES_URL has no {{handle}}: every owner's pages share one origin, so a \
             page's script can read other owners' pages its visitors opened; use this only \
             on a single-tenant server"
        );
    }
    Ok(origins)
}

/// Reads (or makes) the key file, seals what an older version stored bare, and reads the
/// shared signing secrets. Every key that signs is kept sealed under the key file: a copy
/// of the database alone signs nothing.
async fn secrets(config: &Config, db: Database) -> Result<(Database, Secrets), ServerError> {
    let sealing_key = sealing_key(Path::new(&config.secret_key_file))?;
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
    let secrets = Secrets {
        sealing_key,
        signing_key,
        captcha_secret,
    };
    Ok((db, secrets))
}

/// The mail relay, the database service's adapters and every service, built by the same
/// composition root as the tests' (`quire_app::build`).
async fn services(
    config: &Config,
    db: &Database,
    bundles: &ObjectBundleStore,
    origins: &PageOrigins,
    pages_addr: std::net::SocketAddr,
    secrets: Secrets,
) -> Result<(Services, DatabaseWiring), ServerError> {
    let mailer = mailer(config)?;
    let documents_on_loopback = crate::wiring::documents_on_loopback_http(config);
    if config.oauth_documents_on_loopback_http && !documents_on_loopback {
        tracing::warn!(
            "QUIRE_OAUTH_CIMD_ALLOW_LOOPBACK_HTTP ignored: it is for test servers on a loopback http base URL"
        );
    }
    let databases = crate::databases::wire(config).await?;
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
            config,
            origins,
            pages_addr,
            secrets.signing_key,
            secrets.captcha_secret,
            secrets.sealing_key,
        ),
    );
    Ok((services, databases))
}

/// Seals the second-factor secrets an older version stored bare, then starts what runs
/// beside the listeners: the janitor (its first pass now), the first-run link, and the
/// once-a-second view flush.
async fn start_beside(config: &Config, services: &Services) -> Result<(), ServerError> {
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
        services,
        Duration::from_secs(config.janitor_interval_secs.max(1)),
    );
    announce_first_run(services).await?;
    spawn_view_flusher(services.serving.clone());
    Ok(())
}

/// On a server with no account, prints a new setup link, in full, for whoever reads the log
/// to create the first (platform-admin) account with. It is a one-time secret on purpose in
/// the log: it dies when used, and it can do nothing once any account exists.
async fn announce_first_run(services: &Services) -> Result<(), ServerError> {
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

/// The API origin's state: the services, the base URL, the trusted proxies, readiness on
/// the database and bundle storage, and the browser origins the MCP endpoint admits.
fn app_state(
    config: &Config,
    services: Services,
    trusted_proxies: TrustedProxies,
    db: &Database,
    bundles: ObjectBundleStore,
) -> AppState {
    AppState::new(
        services,
        config.base_url.clone(),
        trusted_proxies,
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
    )
}
