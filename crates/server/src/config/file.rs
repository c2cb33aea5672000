//! The `quire.toml` file: the keys it may hold, each the env variable's name without the
//! `QUIRE_` prefix, in lower case; what it sets, the environment may set again.

use std::path::Path;

use serde::Deserialize;

use super::{Config, ConfigError, Redacted};

/// The keys a `quire.toml` may hold (all optional), named as the env variables without the
/// `QUIRE_` prefix, in lower case.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: Option<String>,
    base_url: Option<String>,
    pages_listen: Option<String>,
    metrics_listen: Option<String>,
    pages_url: Option<String>,
    database_url: Option<String>,
    database_max_connections: Option<usize>,
    storage_url: Option<String>,
    log_format: Option<String>,
    workers: Option<usize>,
    pin_workers: Option<bool>,
    max_files: Option<usize>,
    max_file_bytes: Option<u64>,
    max_page_bytes: Option<u64>,
    max_object_bytes: Option<u64>,
    max_object_bytes_per_account: Option<u64>,
    max_databases_per_account: Option<u64>,
    max_database_bytes_per_account: Option<u64>,
    janitor_interval_secs: Option<u64>,
    publish_lease_secs: Option<u64>,
    replaced_files_keep_secs: Option<u64>,
    view_lease_secs: Option<u64>,
    trusted_proxies: Option<String>,
    mcp_allowed_origins: Option<String>,
    link_deny_hosts: Option<String>,
    policy_cache_ms: Option<u64>,
    file_cache_bytes: Option<u64>,
    body_timeout_secs: Option<u64>,
    body_min_rate: Option<u64>,
    max_connections: Option<usize>,
    max_connections_per_client: Option<u32>,
    body_bytes_in_flight: Option<u64>,
    body_bytes_in_flight_per_key: Option<u64>,
    smtp_url: Option<String>,
    mail_from: Option<String>,
    outbox_dir: Option<String>,
    secret_key_file: Option<String>,
    signup: Option<String>,
    activation: Option<String>,
    oauth_dynamic_registration: Option<bool>,
    oauth_client_metadata_documents: Option<bool>,
    databases_url: Option<String>,
    databases: Option<String>,
    databases_dir: Option<String>,
    databases_sql_timeout_secs: Option<u64>,
    databases_sql_per_account: Option<usize>,
    databases_owner_connections: Option<usize>,
    data_api_idle_secs: Option<u64>,
    data_api_max_connections: Option<usize>,
    data_api_account_connections: Option<usize>,
}

impl Config {
    /// Takes what the file at `path` sets.
    pub(super) fn take_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        let c = self;
        let text =
            std::fs::read_to_string(path).map_err(|e| ConfigError::Read(path.to_owned(), e))?;
        let file: FileConfig = toml::from_str(&text)
            .map_err(|e| ConfigError::Parse(path.to_owned(), e.to_string()))?;
        macro_rules! take {
            ($($field:ident),+) => { $(if let Some(v) = file.$field { c.$field = v; })+ };
        }
        take!(
            listen,
            base_url,
            pages_listen,
            metrics_listen,
            pages_url,
            database_url,
            database_max_connections,
            storage_url,
            log_format,
            workers,
            pin_workers,
            max_files,
            max_file_bytes,
            max_page_bytes,
            max_object_bytes,
            max_object_bytes_per_account,
            max_databases_per_account,
            max_database_bytes_per_account,
            janitor_interval_secs,
            publish_lease_secs,
            replaced_files_keep_secs,
            view_lease_secs,
            trusted_proxies,
            mcp_allowed_origins,
            link_deny_hosts,
            policy_cache_ms,
            file_cache_bytes,
            body_timeout_secs,
            body_min_rate,
            max_connections,
            max_connections_per_client,
            body_bytes_in_flight,
            body_bytes_in_flight_per_key,
            smtp_url,
            mail_from,
            outbox_dir,
            secret_key_file,
            signup,
            activation,
            oauth_dynamic_registration,
            oauth_client_metadata_documents,
            databases,
            databases_dir,
            databases_sql_timeout_secs,
            databases_sql_per_account,
            databases_owner_connections,
            data_api_idle_secs,
            data_api_max_connections,
            data_api_account_connections
        );
        if let Some(url) = file.databases_url {
            c.databases_url = Redacted(url);
        }
        Ok(())
    }
}
