//! The database service's wiring: the cluster databases live on (`QUIRE_DATABASES_URL`, or a
//! private one under the data folder with `QUIRE_DATABASES=local`), and this replica's data
//! API instances on the same cluster. Without either setting the service is off: the ports
//! say so, and every route but the list answers `database_service_unavailable`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use quire_data_runtime::{Runtime, RuntimeSettings};
use quire_databases::{Cluster, DataApiRuntime, NoRuntime, TenantBackends};
use quire_pgcluster::{LocalCluster, PgCluster, PgClusterSettings};

use crate::config::Config;
use crate::error::ServerError;

/// The service's adapters, and the private cluster when Quire runs one (stopped when this
/// is dropped, after the listeners).
pub(crate) struct DatabaseWiring {
    pub cluster: Option<Arc<dyn Cluster>>,
    pub runtime: Arc<dyn DataApiRuntime>,
    pub local: Option<LocalCluster>,
}

impl std::fmt::Debug for DatabaseWiring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseWiring")
            .field("available", &self.cluster.is_some())
            .finish_non_exhaustive()
    }
}

pub(crate) async fn wire(config: &Config) -> Result<DatabaseWiring, ServerError> {
    let (url, local) = if !config.databases_url.0.is_empty() {
        (config.databases_url.0.clone(), None)
    } else if config.databases == "local" {
        let local = LocalCluster::start(Path::new(&config.databases_dir))
            .await
            .map_err(ServerError::Databases)?;
        (local.url().to_owned(), Some(local))
    } else {
        return Ok(DatabaseWiring {
            cluster: None,
            runtime: Arc::new(NoRuntime),
            local: None,
        });
    };
    let cluster = Arc::new(
        PgCluster::connect(&url, cluster_settings(config))
            .await
            .map_err(ServerError::Databases)?,
    );
    let sql = cluster.settings();
    let runtime = Runtime::start(
        cluster.base_config(),
        RuntimeSettings {
            // A request's deadline and what ends the backend it leaves, as for the owner's
            // SQL: the role's timeout and the same margin, then the same grace.
            longest_statement: sql.data_api_statement(),
            deadline_margin: sql.sql_deadline_margin,
            cancel_grace: sql.sql_cancel_grace,
            backends: Some(cluster.clone() as Arc<dyn TenantBackends>),
            client_check_interval: cluster.client_check_interval(),
            idle: Duration::from_secs(config.data_api_idle_secs.max(1)),
            max_connections: config.data_api_max_connections,
            // A quarter lets four accounts hold their whole share at once, and one account
            // still run several busy databases (each up to seven connections).
            account_connections: match config.data_api_account_connections {
                0 => config.data_api_max_connections / 4,
                n => n,
            },
            threads: match config.workers {
                0 => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
                n => n,
            },
            ..RuntimeSettings::default()
        },
    );
    tracing::info!(local = local.is_some(), "the database service is on");
    Ok(DatabaseWiring {
        cluster: Some(cluster),
        runtime,
        local,
    })
}

/// The owner's SQL: `QUIRE_DATABASES_SQL_TIMEOUT_SECS` for its `statement_timeout` (new
/// databases) and, with a margin as long but at most the default's 5 s, Quire's deadline;
/// `QUIRE_DATABASES_OWNER_CONNECTIONS` for the owner roles' connection limit.
fn cluster_settings(config: &Config) -> PgClusterSettings {
    let defaults = PgClusterSettings::default();
    let owner = Duration::from_secs(config.databases_sql_timeout_secs.max(1));
    PgClusterSettings {
        timeouts: quire_pgcluster::RoleTimeouts {
            owner,
            ..defaults.timeouts
        },
        sql_deadline_margin: defaults.sql_deadline_margin.min(owner),
        owner_connection_limit: u32::try_from(config.databases_owner_connections)
            .unwrap_or(u32::MAX),
        ..defaults
    }
}
