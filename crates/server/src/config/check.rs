//! The rules the settings must meet together, checked once they are all read.

use super::{Config, ConfigError};

impl Config {
    /// Refuses a value out of its range, or settings that contradict each other.
    pub(super) fn check(self) -> Result<Self, ConfigError> {
        let c = self;
        if c.databases_sql_timeout_secs == 0
            || c.databases_sql_per_account == 0
            || c.databases_owner_connections == 0
        {
            return Err(ConfigError::Invalid {
                name: "QUIRE_DATABASES_SQL_TIMEOUT_SECS, QUIRE_DATABASES_SQL_PER_ACCOUNT and \
                       QUIRE_DATABASES_OWNER_CONNECTIONS",
                expected: "at least 1",
                value: "0".into(),
            });
        }
        if c.body_min_rate == 0 || c.max_connections_per_client == 0 {
            return Err(ConfigError::Invalid {
                name: "QUIRE_BODY_MIN_RATE and QUIRE_MAX_CONNECTIONS_PER_CLIENT",
                expected: "at least 1",
                value: "0".into(),
            });
        }
        if c.policy_cache_ms > 1_000 {
            return Err(ConfigError::Invalid {
                name: "QUIRE_POLICY_CACHE_MS",
                expected: "at most 1000 (policy changes must reach visitors within a second)",
                value: c.policy_cache_ms.to_string(),
            });
        }
        if !matches!(c.databases.as_str(), "" | "local") {
            return Err(ConfigError::Invalid {
                name: "QUIRE_DATABASES",
                expected: "local, or unset",
                value: c.databases,
            });
        }
        if c.databases == "local" && !c.databases_url.0.is_empty() {
            return Err(ConfigError::Invalid {
                name: "QUIRE_DATABASES",
                expected: "unset when QUIRE_DATABASES_URL names a cluster",
                value: c.databases,
            });
        }
        if !matches!(c.log_format.as_str(), "pretty" | "json") {
            return Err(ConfigError::Invalid {
                name: "QUIRE_LOG_FORMAT",
                expected: "pretty or json",
                value: c.log_format,
            });
        }
        if !matches!(c.signup.as_str(), "closed" | "open") {
            return Err(ConfigError::Invalid {
                name: "QUIRE_SIGNUP",
                expected: "closed or open",
                value: c.signup,
            });
        }
        if !matches!(c.activation.as_str(), "invitation" | "none") {
            return Err(ConfigError::Invalid {
                name: "QUIRE_ACTIVATION",
                expected: "invitation or none",
                value: c.activation,
            });
        }
        if c.database_max_connections == 0 {
            return Err(ConfigError::Invalid {
                name: "QUIRE_DATABASE_MAX_CONNECTIONS",
                expected: "at least 1",
                value: "0".into(),
            });
        }
        if c.data_api_max_connections < 3 {
            return Err(ConfigError::Invalid {
                name: "QUIRE_DATA_API_MAX_CONNECTIONS",
                expected: "at least 3 (an instance's listener and two pooled connections)",
                value: c.data_api_max_connections.to_string(),
            });
        }
        if c.deny_hosts().is_err() {
            return Err(ConfigError::Invalid {
                name: "QUIRE_LINK_DENY_HOSTS",
                expected: "comma-separated host names",
                value: c.link_deny_hosts,
            });
        }
        Ok(c)
    }
}
