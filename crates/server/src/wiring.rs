//! Wiring: the adapters (database, bundle storage, the runtime's timer) and the settings the
//! composition root builds the services from.

use std::time::Duration;

use async_trait::async_trait;
use quire_accounts::CaptchaCost;
use quire_app::Settings;
use quire_blobs::ObjectBundleStore;
use quire_http::{Dependency, NotReady, Readiness};
use quire_kernel::Timer;
use quire_mail::Mailer;
use quire_pages::{Limits, PageConfig, PageOrigins};
use quire_serving::ServingConfig;
use quire_signup::{ActivationMode, SignUpMode};
use quire_smtp::{OutboxMailer, RelayConfig, SmtpMailer};
use quire_store::{Database, DatabaseConfig};

use crate::config::Config;
use crate::error::ServerError;

/// How long each dependency has to answer a readiness check.
const READY_WITHIN: Duration = Duration::from_secs(3);

#[derive(Debug)]
pub(crate) struct StackReadiness {
    pub(crate) db: Database,
    pub(crate) bundles: ObjectBundleStore,
}

#[async_trait]
impl Readiness for StackReadiness {
    async fn check(&self) -> Result<(), NotReady> {
        match tokio::time::timeout(READY_WITHIN, self.db.ping()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "database ping failed");
                return Err(NotReady::Unreachable(Dependency::Database));
            }
            Err(_) => return Err(NotReady::Slow(Dependency::Database, READY_WITHIN.as_secs())),
        }
        match tokio::time::timeout(READY_WITHIN, self.bundles.ping()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "bundle storage check failed");
                Err(NotReady::Unreachable(Dependency::BundleStorage))
            }
            Err(_) => Err(NotReady::Slow(
                Dependency::BundleStorage,
                READY_WITHIN.as_secs(),
            )),
        }
    }
}

/// The runtime's timer, for domain work that acts on a schedule.
#[derive(Debug)]
pub(crate) struct TokioTimer;

impl Timer for TokioTimer {
    fn sleep(
        &self,
        duration: Duration,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// The services' settings, from the configuration.
/// The server secret that signs the activation captcha's challenges.
pub(crate) const CAPTCHA_SECRET: &str = "captcha";

pub(crate) fn settings(
    config: &Config,
    origins: &PageOrigins,
    signing_key: String,
    captcha_secret: String,
) -> Settings {
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
        captcha_secret,
        captcha_cost: CaptchaCost {
            iterations: u32::try_from(config.captcha_iterations.max(1)).unwrap_or(u32::MAX),
            max_counter: u32::try_from(config.captcha_max_counter.max(1)).unwrap_or(u32::MAX),
        },
        mail_from: config.mail_from.clone(),
        // `Config::load` admits only these words.
        sign_up: if config.signup == "open" {
            SignUpMode::Open
        } else {
            SignUpMode::Closed
        },
        activation: if config.activation == "none" {
            ActivationMode::None
        } else {
            ActivationMode::Invitation
        },
    }
}

/// The relay of `QUIRE_SMTP_URL`, or the outbox when it is unset.
pub(crate) fn mailer(config: &Config) -> Result<std::sync::Arc<dyn Mailer>, ServerError> {
    if config.smtp_url.is_empty() {
        return Ok(std::sync::Arc::new(OutboxMailer::new(
            &config.outbox_dir,
            &config.mail_from,
        )));
    }
    let password = Some(config.smtp_password.0.as_str()).filter(|p| !p.is_empty());
    let relay = RelayConfig::parse(&config.smtp_url, password, &config.mail_from)
        .map_err(ServerError::Mail)?;
    Ok(std::sync::Arc::new(SmtpMailer::new(relay)))
}

pub(crate) fn connect(config: &Config) -> Result<Database, ServerError> {
    let mut db_config = DatabaseConfig::new(config.database_url.clone());
    db_config.max_connections = config.database_max_connections;
    Database::connect(&db_config).map_err(ServerError::Connect)
}

pub(crate) async fn migrate(db: &Database) -> Result<(), ServerError> {
    let ran = db.migrate().await.map_err(ServerError::Migrate)?;
    tracing::info!(applied = ran, backend = ?db.backend(), "migrations up to date");
    Ok(())
}

/// Name of the shared secret that signs the pages origin's cookies and passes.
pub(crate) const PAGES_SIGNING_SECRET: &str = "pages-signing-key";
