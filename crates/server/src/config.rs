//! Configuration: defaults, then an optional `quire.toml`, then `QUIRE_*` environment
//! variables (the environment wins).

use std::path::{Path, PathBuf};

/// Everything the server reads at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// API and dashboard listener (`host:port`; port 0 picks a free one).
    pub listen: String,
    /// Public origin of the API and dashboard; empty means `http://` + the address the
    /// listener got (right for a local run, including port 0).
    pub base_url: String,
    /// Published pages listener.
    pub pages_listen: String,
    /// Prometheus metrics listener (`GET /metrics`); empty (the default) means none. Bind
    /// it to a private address: it is never on the public listeners.
    pub metrics_listen: String,
    /// Public origin of published pages and short links; empty means `http://` + the
    /// address the pages listener got.
    pub pages_url: String,
    /// `sqlite://PATH` or `postgres://…`.
    pub database_url: String,
    /// Most pooled database connections.
    pub database_max_connections: usize,
    /// Where bundles are stored: `file://PATH`, `s3://bucket/prefix` or `memory://`.
    pub storage_url: String,
    /// `pretty` or `json`.
    pub log_format: String,
    /// HTTP worker threads; 0 means one per core.
    pub workers: usize,
    /// Binds each pages worker to a CPU of its own.
    pub pin_workers: bool,
    /// Most files one page may hold.
    pub max_files: usize,
    /// Largest file, in bytes (decoded).
    pub max_file_bytes: u64,
    /// Largest page, in bytes (decoded, all files).
    pub max_page_bytes: u64,
    /// Largest object, in bytes (`QUIRE_MAX_OBJECT_BYTES`).
    pub max_object_bytes: u64,
    /// Most bytes one account's objects may hold together; 0: no cap.
    pub max_object_bytes_per_account: u64,
    /// Most databases one account may have; 0: no cap.
    pub max_databases_per_account: u64,
    /// Most bytes one account's databases may hold before it may make no more; 0: no cap.
    pub max_database_bytes_per_account: u64,
    /// Seconds between janitor passes (interrupted publishes, orphaned files).
    pub janitor_interval_secs: u64,
    /// Seconds a publish holds its pending page without renewing it: a publish that dies
    /// frees its slug at most this long after.
    pub publish_lease_secs: u64,
    /// Seconds a page's replaced files stay in storage before the janitor removes them: a
    /// backup under way still finds the files its database copy names.
    pub replaced_files_keep_secs: u64,
    /// Seconds a view lease lives after its holder last renewed it: a replica that dies
    /// holding views has them counted as served by the first janitor pass after.
    pub view_lease_secs: u64,
    /// Comma-separated proxy addresses whose `X-Forwarded-For` names the client.
    pub trusted_proxies: String,
    /// Comma-separated browser origins (`https://app.example`) allowed to call `/mcp`
    /// besides Quire's own.
    pub mcp_allowed_origins: String,
    /// Comma-separated hosts URL links may not lead to: each denies itself and every name
    /// under it (`example.com` denies `a.example.com`).
    pub link_deny_hosts: String,
    /// How long the pages origin serves a page's policy from memory (milliseconds): the
    /// most a change made on another replica takes to reach visitors.
    pub policy_cache_ms: u64,
    /// Bytes of page files the pages origin keeps in memory.
    pub file_cache_bytes: u64,
    /// Seconds to receive a request body, on top of its length at `body_min_rate`.
    pub body_timeout_secs: u64,
    /// Bytes per second a request body must at least arrive at.
    pub body_min_rate: u64,
    /// Open connections, both listeners together; 0: as many as the open-file limit allows.
    /// Health and readiness checks are answered past it.
    pub max_connections: usize,
    /// Bytes of long request bodies (1 MiB or more) received at once; 0: four times the
    /// largest page body.
    pub body_bytes_in_flight: u64,
    /// The same for one credential; 0: twice the largest page body.
    pub body_bytes_in_flight_per_key: u64,
    /// Open connections one client address may hold.
    pub max_connections_per_client: u32,
    /// The relay of outbound mail (`smtps://…`, `smtp://…?tls=required`, or plain
    /// `smtp://` to a loopback relay); empty: messages go to `outbox_dir` as `.eml` files.
    pub smtp_url: String,
    /// The relay's password when `smtp_url` names a user but no password (environment only).
    pub smtp_password: Redacted,
    /// The From address of every message (the operator's domain).
    pub mail_from: String,
    /// Where messages go without a relay.
    pub outbox_dir: String,
    /// PBKDF2 iterations of each key derivation of the activation captcha.
    pub captcha_iterations: usize,
    /// The captcha's counter is drawn below this: solving takes half as many derivations
    /// on average.
    pub captcha_max_counter: usize,
    /// The file of the key that seals second-factor secrets (made when missing; the same
    /// file on every replica).
    pub secret_key_file: String,
    /// `closed` (only operators create accounts) or `open` (anyone may sign up and verify
    /// an address).
    pub signup: String,
    /// What a signed-up account does before its keys work: `invitation` (a captcha and a
    /// phone number on the invitation list) or `none`.
    pub activation: String,
    /// The PostgreSQL cluster the database service creates databases on (a role with
    /// CREATEDB and CREATEROLE); empty: none, unless `databases` is `local`.
    pub databases_url: Redacted,
    /// `local`: the database service runs a private cluster under the data folder with the
    /// PostgreSQL server binaries found on the machine; empty: `databases_url` or nothing.
    pub databases: String,
    /// Where `databases = local` keeps its private cluster.
    pub databases_dir: String,
    /// Seconds an owner's SQL may run: its `statement_timeout` in databases made from now
    /// on, and (with a margin as long, at most 5 s) Quire's own deadline for every database.
    pub databases_sql_timeout_secs: u64,
    /// The owner's SQL queries one account may run at once on this replica.
    pub databases_sql_per_account: usize,
    /// `CONNECTION LIMIT` of every database's owner role (all replicas together).
    pub databases_owner_connections: usize,
    /// Seconds a database's data API instance stays up with no request.
    pub data_api_idle_secs: u64,
    /// Cluster connections this replica's data API instances may hold together.
    pub data_api_max_connections: usize,
    /// Of those, what one account's instances may hold; 0: a quarter of them.
    pub data_api_account_connections: usize,
    /// Whether agents may register themselves as OAuth clients (RFC 7591,
    /// `POST /api/oauth/register`); on by default, since real MCP clients need it.
    pub oauth_dynamic_registration: bool,
    /// Whether a `client_id` may be the `https` URL of a client metadata document, which
    /// the server then fetches; on by default, since MCP clients prefer it.
    pub oauth_client_metadata_documents: bool,
    /// For tests only: client metadata documents may be on a loopback `http` server. Taken
    /// only while `base_url` is itself `http` on a loopback address (a test or development
    /// server), ignored otherwise. Env only.
    pub oauth_documents_on_loopback_http: bool,
}

/// A secret setting: it compares and clones, and its `Debug` shows nothing.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redacted(pub String);

impl std::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() {
            "(unset)"
        } else {
            "(set)"
        })
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            base_url: String::new(),
            pages_listen: "127.0.0.1:8081".into(),
            metrics_listen: String::new(),
            pages_url: String::new(),
            database_url: "sqlite://./data/quire.db".into(),
            database_max_connections: 8,
            storage_url: "file://./data/bundles".into(),
            log_format: "pretty".into(),
            workers: 0,
            pin_workers: false,
            max_files: 1_000,
            max_file_bytes: 10 * 1024 * 1024,
            max_page_bytes: 50 * 1024 * 1024,
            max_object_bytes: quire_objects::validate::DEFAULT_MAX_OBJECT_BYTES,
            max_object_bytes_per_account: quire_objects::service::DEFAULT_MAX_ACCOUNT_BYTES,
            max_databases_per_account: quire_databases::service::DEFAULT_MAX_DATABASES,
            max_database_bytes_per_account: quire_databases::service::DEFAULT_MAX_BYTES,
            janitor_interval_secs: 300,
            publish_lease_secs: 60,
            replaced_files_keep_secs: 600,
            view_lease_secs: 120,
            trusted_proxies: String::new(),
            mcp_allowed_origins: String::new(),
            link_deny_hosts: String::new(),
            policy_cache_ms: 800,
            file_cache_bytes: 64 * 1024 * 1024,
            body_timeout_secs: 10,
            body_min_rate: 64 * 1024,
            max_connections: 4096,
            max_connections_per_client: 256,
            body_bytes_in_flight: 0,
            body_bytes_in_flight_per_key: 0,
            smtp_url: String::new(),
            smtp_password: Redacted::default(),
            mail_from: "quire@localhost".into(),
            outbox_dir: "./data/outbox".into(),
            captcha_iterations: 1_000,
            captcha_max_counter: 5_000,
            secret_key_file: "./data/secret.key".into(),
            signup: "closed".into(),
            activation: "invitation".into(),
            oauth_dynamic_registration: true,
            oauth_client_metadata_documents: true,
            oauth_documents_on_loopback_http: false,
            databases_url: Redacted::default(),
            databases: String::new(),
            databases_dir: "./data/postgres".into(),
            databases_sql_timeout_secs: 15,
            databases_sql_per_account: 4,
            databases_owner_connections: 10,
            data_api_idle_secs: 600,
            data_api_max_connections: 64,
            data_api_account_connections: 0,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    #[error("{0} is not valid: {1}")]
    Parse(PathBuf, String),
    #[error("{name} must be {expected}, got {value:?}")]
    Invalid {
        name: &'static str,
        expected: &'static str,
        value: String,
    },
}

impl Config {
    /// Loads defaults, then `path` (or `./quire.toml` when it exists and `path` is `None`),
    /// then the environment as given by `env`.
    ///
    /// # Errors
    /// An unreadable or invalid file, or a value that does not parse.
    pub fn load(
        path: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let mut c = Config::default();
        let default_path = Path::new("quire.toml");
        if let Some(path) = path.or_else(|| default_path.exists().then_some(default_path)) {
            c.take_file(path)?;
        }
        c.take_env(env)?;
        c.check()
    }

    /// `QUIRE_LINK_DENY_HOSTS` as the link service takes it.
    ///
    /// # Errors
    /// Naming the first entry that is not a host name.
    pub fn deny_hosts(&self) -> Result<quire_links::DenyHosts, String> {
        quire_links::DenyHosts::parse(self.link_deny_hosts.split(','))
    }
}

mod check;
mod env;
mod file;
#[cfg(test)]
mod tests;
