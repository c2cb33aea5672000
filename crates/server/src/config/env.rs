//! The `QUIRE_*` environment variables, read over what the defaults and the file set.

use super::{Config, ConfigError};

impl Config {
    /// Takes what the environment (`env`, a lookup by name) sets.
    pub(super) fn take_env(
        &mut self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<(), ConfigError> {
        let c = self;
        let text = |name: &str, slot: &mut String| {
            if let Some(v) = env(name) {
                *slot = v;
            }
        };
        text("QUIRE_LISTEN", &mut c.listen);
        text("QUIRE_BASE_URL", &mut c.base_url);
        text("QUIRE_PAGES_LISTEN", &mut c.pages_listen);
        text("QUIRE_METRICS_LISTEN", &mut c.metrics_listen);
        text("QUIRE_PAGES_URL", &mut c.pages_url);
        text("QUIRE_DATABASE_URL", &mut c.database_url);
        text("QUIRE_STORAGE_URL", &mut c.storage_url);
        text("QUIRE_LOG_FORMAT", &mut c.log_format);
        text("QUIRE_TRUSTED_PROXIES", &mut c.trusted_proxies);
        text("QUIRE_MCP_ALLOWED_ORIGINS", &mut c.mcp_allowed_origins);
        text("QUIRE_LINK_DENY_HOSTS", &mut c.link_deny_hosts);
        text("QUIRE_SMTP_URL", &mut c.smtp_url);
        text("QUIRE_SMTP_PASSWORD", &mut c.smtp_password.0);
        text("QUIRE_MAIL_FROM", &mut c.mail_from);
        text("QUIRE_OUTBOX_DIR", &mut c.outbox_dir);
        text("QUIRE_SECRET_KEY_FILE", &mut c.secret_key_file);
        text("QUIRE_SIGNUP", &mut c.signup);
        text("QUIRE_ACTIVATION", &mut c.activation);
        text("QUIRE_DATABASES_URL", &mut c.databases_url.0);
        text("QUIRE_DATABASES", &mut c.databases);
        text("QUIRE_DATABASES_DIR", &mut c.databases_dir);
        let flag = |name: &'static str, slot: &mut bool| -> Result<(), ConfigError> {
            if let Some(v) = env(name) {
                *slot = match v.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(ConfigError::Invalid {
                            name,
                            expected: "true or false",
                            value: v,
                        });
                    }
                };
            }
            Ok(())
        };
        flag("QUIRE_PIN_WORKERS", &mut c.pin_workers)?;
        flag(
            "QUIRE_OAUTH_DYNAMIC_REGISTRATION",
            &mut c.oauth_dynamic_registration,
        )?;
        flag(
            "QUIRE_OAUTH_CLIENT_METADATA_DOCUMENTS",
            &mut c.oauth_client_metadata_documents,
        )?;
        flag(
            "QUIRE_OAUTH_CIMD_ALLOW_LOOPBACK_HTTP",
            &mut c.oauth_documents_on_loopback_http,
        )?;
        let number = |name, slot: &mut usize| whole(&env, name, slot);
        let wide = |name, slot: &mut u64| whole(&env, name, slot);
        number(
            "QUIRE_DATABASE_MAX_CONNECTIONS",
            &mut c.database_max_connections,
        )?;
        number("QUIRE_WORKERS", &mut c.workers)?;
        number("QUIRE_MAX_FILES", &mut c.max_files)?;
        number("QUIRE_MAX_CONNECTIONS", &mut c.max_connections)?;
        number("QUIRE_CAPTCHA_ITERATIONS", &mut c.captcha_iterations)?;
        number("QUIRE_CAPTCHA_MAX_COUNTER", &mut c.captcha_max_counter)?;
        number(
            "QUIRE_DATABASES_SQL_PER_ACCOUNT",
            &mut c.databases_sql_per_account,
        )?;
        number(
            "QUIRE_DATABASES_OWNER_CONNECTIONS",
            &mut c.databases_owner_connections,
        )?;
        number(
            "QUIRE_DATA_API_MAX_CONNECTIONS",
            &mut c.data_api_max_connections,
        )?;
        number(
            "QUIRE_DATA_API_ACCOUNT_CONNECTIONS",
            &mut c.data_api_account_connections,
        )?;
        let mut per_client = usize::try_from(c.max_connections_per_client).unwrap_or(usize::MAX);
        number("QUIRE_MAX_CONNECTIONS_PER_CLIENT", &mut per_client)?;
        c.max_connections_per_client = u32::try_from(per_client).unwrap_or(u32::MAX);
        wide("QUIRE_MAX_FILE_BYTES", &mut c.max_file_bytes)?;
        wide("QUIRE_MAX_PAGE_BYTES", &mut c.max_page_bytes)?;
        wide("QUIRE_MAX_OBJECT_BYTES", &mut c.max_object_bytes)?;
        wide(
            "QUIRE_MAX_OBJECT_BYTES_PER_ACCOUNT",
            &mut c.max_object_bytes_per_account,
        )?;
        wide(
            "QUIRE_MAX_DATABASES_PER_ACCOUNT",
            &mut c.max_databases_per_account,
        )?;
        wide(
            "QUIRE_MAX_DATABASE_BYTES_PER_ACCOUNT",
            &mut c.max_database_bytes_per_account,
        )?;
        wide("QUIRE_DATA_API_IDLE_SECS", &mut c.data_api_idle_secs)?;
        wide("QUIRE_JANITOR_INTERVAL_SECS", &mut c.janitor_interval_secs)?;
        wide(
            "QUIRE_DATABASES_SQL_TIMEOUT_SECS",
            &mut c.databases_sql_timeout_secs,
        )?;
        wide("QUIRE_PUBLISH_LEASE_SECS", &mut c.publish_lease_secs)?;
        wide(
            "QUIRE_REPLACED_FILES_KEEP_SECS",
            &mut c.replaced_files_keep_secs,
        )?;
        wide("QUIRE_VIEW_LEASE_SECS", &mut c.view_lease_secs)?;
        wide("QUIRE_POLICY_CACHE_MS", &mut c.policy_cache_ms)?;
        wide("QUIRE_FILE_CACHE_BYTES", &mut c.file_cache_bytes)?;
        wide("QUIRE_BODY_TIMEOUT_SECS", &mut c.body_timeout_secs)?;
        wide("QUIRE_BODY_MIN_RATE", &mut c.body_min_rate)?;
        wide("QUIRE_BODY_BYTES_IN_FLIGHT", &mut c.body_bytes_in_flight)?;
        wide(
            "QUIRE_BODY_BYTES_IN_FLIGHT_PER_KEY",
            &mut c.body_bytes_in_flight_per_key,
        )?;
        Ok(())
    }
}

/// Reads the whole number `name` sets, if it sets one, into `slot`.
fn whole<T: std::str::FromStr>(
    env: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    slot: &mut T,
) -> Result<(), ConfigError> {
    if let Some(v) = env(name) {
        *slot = v.parse().map_err(|_| ConfigError::Invalid {
            name,
            expected: "a whole number",
            value: v,
        })?;
    }
    Ok(())
}
