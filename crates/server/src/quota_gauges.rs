//! The gauges of who is near a quota: how many accounts use 80 % or more of each quota
//! (`quire_accounts_near_quota{quota=…}`: `databases`, `database_bytes`, `object_bytes`),
//! never which (no label per account). They are read at a scrape, from a sum over every
//! account and the cluster's size of every database, and held [`HOLD`], so scrapes that
//! come often cost those queries once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_databases::DatabaseService;
use quire_objects::ObjectService;
use tokio::sync::Mutex;

/// How long figures read at a scrape are shown again.
const HOLD: Duration = Duration::from_secs(30);

/// What the gauges are read from, and when they last were.
#[derive(Clone)]
pub(crate) struct QuotaGauges {
    objects: ObjectService,
    databases: DatabaseService,
    read_at: Arc<Mutex<Option<Instant>>>,
}

impl QuotaGauges {
    pub(crate) fn new(objects: ObjectService, databases: DatabaseService) -> Self {
        Self {
            objects,
            databases,
            read_at: Arc::new(Mutex::new(None)),
        }
    }

    /// Sets the gauges, unless they were set less than [`HOLD`] ago; a failed read keeps
    /// the last figures, and the next scrape tries again.
    pub(crate) async fn record(&self) {
        let mut read_at = self.read_at.lock().await;
        if read_at.is_some_and(|t| t.elapsed() < HOLD) {
            return;
        }
        let near = match self.near().await {
            Ok(near) => near,
            Err(e) => {
                tracing::warn!(error = %e, "the quota gauges could not be read");
                return;
            }
        };
        for (quota, accounts) in near {
            #[allow(clippy::cast_precision_loss)] // a count of accounts, far below 2^53
            metrics::gauge!("quire_accounts_near_quota", "quota" => quota).set(accounts as f64);
        }
        *read_at = Some(Instant::now());
    }

    async fn near(&self) -> Result<[(&'static str, usize); 3], String> {
        let objects = self
            .objects
            .usage_by_account()
            .await
            .map_err(|e| e.to_string())?;
        let databases = self
            .databases
            .usage_by_account()
            .await
            .map_err(|e| e.to_string())?;
        Ok([
            (
                "databases",
                databases.values().filter(|u| u.databases.near()).count(),
            ),
            (
                "database_bytes",
                databases.values().filter(|u| u.bytes.near()).count(),
            ),
            (
                "object_bytes",
                objects.values().filter(|u| u.near()).count(),
            ),
        ])
    }
}
