//! Wiring: the adapters (database, bundle storage, the runtime's timer and blocking pool) and
//! the settings the composition root builds the services from.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use quire_accounts::sealing::KEY_BYTES;
use quire_accounts::{CaptchaCost, SealingKey};
use quire_app::Settings;
use quire_blobs::ObjectBundleStore;
use quire_edge::{Dependency, NotReady, Readiness};
use quire_kernel::offload::{Job, Running};
use quire_kernel::{InfraError, Offload, Timer};
use quire_links::{LinkConfig, UrlRules};
use quire_mail::Mailer;
use quire_objects::ObjectConfig;
use quire_pages::{Limits, PageConfig, PageOrigins};
use quire_serving::ServingConfig;
use quire_signup::{ActivationMode, SignUpMode};
use quire_smtp::{OutboxMailer, RelayConfig, SmtpMailer};
use quire_store::{Database, DatabaseConfig};
use rand::RngExt as _;

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

/// The runtime's blocking pool, for domain work that would hold an async worker.
#[derive(Debug)]
pub(crate) struct BlockingPool;

impl Offload for BlockingPool {
    fn run(&self, job: Job) -> Running {
        Box::pin(async move {
            match tokio::task::spawn_blocking(job).await {
                Ok(done) => Ok(done),
                Err(failed) => match failed.try_into_panic() {
                    Ok(panic) => std::panic::resume_unwind(panic),
                    Err(cancelled) => Err(InfraError::new(format!(
                        "the blocking pool did not run the job: {cancelled}"
                    ))),
                },
            }
        })
    }
}

/// The server secret that signs the activation captcha's challenges.
pub(crate) const CAPTCHA_SECRET: &str = "captcha";

/// The services' settings, from the configuration.
pub(crate) fn settings(
    config: &Config,
    origins: &PageOrigins,
    pages_addr: std::net::SocketAddr,
    signing_key: String,
    captcha_secret: String,
    sealing_key: SealingKey,
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
            replaced_files_kept: Duration::from_secs(config.replaced_files_keep_secs),
            ..PageConfig::default()
        },
        links: LinkConfig {
            urls: UrlRules {
                links_origin: origins.links_origin(),
                listener: Some(pages_addr),
                // Checked when the configuration was loaded.
                deny: config.deny_hosts().unwrap_or_default(),
            },
            ..LinkConfig::default()
        },
        objects: ObjectConfig {
            origins: origins.clone(),
            max_bytes: config.max_object_bytes,
            lease: Duration::from_secs(config.publish_lease_secs.max(3)),
            max_account_bytes: config.max_object_bytes_per_account,
            ..ObjectConfig::default()
        },
        databases: quire_databases::DatabaseConfig {
            base_url: config.base_url.clone(),
            sql_per_account: config.databases_sql_per_account,
            max_databases: config.max_databases_per_account,
            max_bytes: config.max_database_bytes_per_account,
            ..quire_databases::DatabaseConfig::default()
        },
        serving: ServingConfig {
            origins: origins.clone(),
            base_url: config.base_url.clone(),
            policy_ttl: Duration::from_millis(config.policy_cache_ms),
            file_cache_bytes: config.file_cache_bytes,
            view_lease_ttl: Duration::from_secs(config.view_lease_secs.max(1)),
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
        sealing_key: Some(sealing_key),
        oauth_dynamic_registration: config.oauth_dynamic_registration,
        oauth_client_metadata_documents: config.oauth_client_metadata_documents,
        oauth_documents_on_loopback_http: documents_on_loopback_http(config),
    }
}

/// Whether client metadata documents may be fetched from a loopback `http` server: the test
/// switch, taken only while the server itself is `http` on a loopback address (a test or
/// development server).
pub(crate) fn documents_on_loopback_http(config: &Config) -> bool {
    config.oauth_documents_on_loopback_http
        && url::Url::parse(&config.base_url).is_ok_and(|u| {
            u.scheme() == "http"
                && match u.host() {
                    Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                    Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                    Some(url::Host::Domain(d)) => d == "localhost",
                    None => false,
                }
        })
}

/// The key that seals second-factor secrets and the keys that sign, from
/// `QUIRE_SECRET_KEY_FILE` (or a new file for its rotation): 32 bytes in hex.
/// The file is made (mode 0600) when missing, so a first run needs no setup; it lives
/// outside the database on purpose, and every replica must read the same file.
pub(crate) fn sealing_key(path: &Path) -> Result<SealingKey, ServerError> {
    let io = |source| ServerError::SecretKeyFile {
        path: path.to_owned(),
        source,
    };
    let malformed = || ServerError::SecretKeyMalformed(path.to_owned());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut fresh = [0u8; KEY_BYTES];
    rand::rng().fill(&mut fresh[..]);
    let hex = quire_kernel::secret::lower_hex(&fresh);
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    match created {
        Ok(mut file) => {
            file.write_all(format!("{hex}\n").as_bytes()).map_err(io)?;
            file.sync_all().map_err(io)?;
            tracing::info!(path = %path.display(), "made a new key for sealed secrets");
        }
        // Another replica (or an earlier run) made it: use that one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(e)),
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    let text = text.trim();
    if text.len() != KEY_BYTES * 2 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(malformed());
    }
    let bytes = (0..KEY_BYTES)
        .map(|i| u8::from_str_radix(&text[i * 2..i * 2 + 2], 16))
        .collect::<Result<Vec<u8>, _>>()
        .map_err(|_| malformed())?;
    SealingKey::from_bytes(&bytes).ok_or_else(malformed)
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

#[cfg(test)]
mod tests {
    use super::*;
    use quire_accounts::TotpSecret;
    use quire_kernel::{AccountId, offloaded};

    /// A test runtime has one worker: the job can only end once another task ran on it.
    #[tokio::test]
    async fn a_job_on_the_blocking_pool_leaves_the_worker_free_and_resumes_its_panic() {
        let (beat, heard) = std::sync::mpsc::channel::<()>();
        let job = offloaded(&BlockingPool, move || {
            heard.recv_timeout(Duration::from_secs(10)).is_ok()
        });
        let heartbeat = async move {
            tokio::task::yield_now().await;
            beat.send(()).unwrap();
        };
        let (heard, ()) = tokio::join!(job, heartbeat);
        assert_eq!(
            heard.ok(),
            Some(true),
            "the worker ran nothing else while the job ran"
        );

        let panicked = tokio::spawn(offloaded(&BlockingPool, || -> u8 { panic!("in the job") }))
            .await
            .unwrap_err();
        let message = panicked.into_panic();
        assert_eq!(message.downcast_ref::<&str>(), Some(&"in the job"));
    }

    #[test]
    fn the_key_file_is_made_once_private_and_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/secret.key");
        let first = sealing_key(&path).unwrap();
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&path).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        let second = sealing_key(&path).unwrap();
        let (ann, secret) = (AccountId::new(), TotpSecret::generate());
        let sealed = first.seal_totp(ann, &secret);
        assert_eq!(second.open_totp(ann, &sealed), Ok(secret));

        std::fs::write(&path, "not hex at all").unwrap();
        assert!(matches!(
            sealing_key(&path),
            Err(ServerError::SecretKeyMalformed(_))
        ));
        for bad in ["ab".repeat(31), "zz".repeat(32), "é".repeat(32)] {
            std::fs::write(&path, bad).unwrap();
            assert!(matches!(
                sealing_key(&path),
                Err(ServerError::SecretKeyMalformed(_))
            ));
        }
    }
}
