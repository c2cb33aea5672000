//! This replica's instances: started on demand, stopped when idle or told, under one cap of
//! connections.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use quire_databases::{
    DataApiInstance, DataApiRuntime, DataApiSignals, GatewayTarget, InstanceError,
};
use quire_kernel::DatabaseId;
use tokio::sync::Semaphore;
use tokio_postgres::Config;

use crate::instance::{Instance, State};
use crate::pool::{Pool, Pools};
use crate::users::Users;

/// Connections as the owner per instance, for sign-ups, grants and sessions.
const OWNER_POOL_SIZE: usize = 2;

/// How long a record check holds: a database deleted or its data API turned off on another
/// replica stops being served here within this.
const CHECK_HOLDS: Duration = Duration::from_secs(1);

/// How long a failed start is answered `upstream unavailable` before the next request
/// tries again.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(2);

#[derive(Debug, Clone)]
pub struct RuntimeSettings {
    /// Connections of one instance (its listener aside), shared out among `threads`.
    pub pool_size: usize,
    /// The threads that serve requests (the API's workers).
    pub threads: usize,
    /// Connections of every instance together, listeners included (protects the
    /// cluster's `max_connections`).
    pub max_connections: usize,
    /// An instance with no request for this long stops (`QUIRE_DATA_API_IDLE_SECS`).
    pub idle: Duration,
    /// How long a request waits for a starting instance before it hears `Starting`.
    pub start_wait: Duration,
    /// How long a request waits for a connection.
    pub acquire_wait: Duration,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        Self {
            pool_size: 4,
            threads: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            max_connections: 64,
            idle: Duration::from_secs(600),
            start_wait: Duration::from_millis(1_500),
            acquire_wait: Duration::from_secs(2),
        }
    }
}

/// The `DataApiRuntime` of this replica.
pub struct Runtime {
    /// Where the cluster is (host, port, TLS); each instance sets database, user, password.
    base: Config,
    settings: RuntimeSettings,
    cap: Arc<Semaphore>,
    instances: Mutex<HashMap<String, Arc<Instance>>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// A runtime over the cluster `base` names, and its reaper of idle instances.
    #[must_use]
    pub fn start(base: Config, settings: RuntimeSettings) -> Arc<Self> {
        let runtime = Arc::new(Self {
            base,
            cap: Arc::new(Semaphore::new(settings.max_connections)),
            settings,
            instances: Mutex::new(HashMap::new()),
        });
        let weak = Arc::downgrade(&runtime);
        tokio::spawn(reap(weak));
        runtime
    }

    /// How many instances are up (for tests and the operator's figures).
    #[must_use]
    pub fn running(&self) -> usize {
        self.instances.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// A connection to the target's database as `role` with `password`.
    fn config_for(&self, target: &GatewayTarget, role: &str, password: &str, name: &str) -> Config {
        let mut config = self.base.clone();
        config
            .dbname(&target.tenant.names.database)
            .user(role)
            .password(password.as_bytes())
            .application_name(name)
            .connect_timeout(Duration::from_secs(5));
        config
    }

    fn reap_idle(&self) {
        let idle = self.settings.idle;
        let Ok(mut instances) = self.instances.lock() else {
            return;
        };
        instances.retain(|_, instance| {
            let used = instance
                .last_used
                .lock()
                .map(|t| t.elapsed())
                .unwrap_or_default();
            let keep = used < idle;
            if !keep {
                instance.stop();
            }
            keep
        });
    }
}

async fn reap(runtime: Weak<Runtime>) {
    let mut tick = tokio::time::interval(Duration::from_secs(5));
    loop {
        tick.tick().await;
        let Some(runtime) = runtime.upgrade() else {
            return;
        };
        runtime.reap_idle();
    }
}

impl DataApiSignals for Runtime {
    fn stop(&self, id: DatabaseId) {
        if let Ok(mut instances) = self.instances.lock() {
            instances.retain(|_, instance| {
                let keep = instance.target().database.id != id;
                if !keep {
                    instance.stop();
                }
                keep
            });
        }
    }
}

#[async_trait]
impl DataApiRuntime for Runtime {
    fn fresh(&self, slug: &str) -> Option<Arc<dyn DataApiInstance>> {
        let instances = self.instances.lock().ok()?;
        let instance = instances.get(slug)?;
        let checked = instance.checked.lock().ok()?.elapsed() < CHECK_HOLDS;
        (checked && instance.state() == State::Running).then(|| {
            instance.touch();
            instance.clone() as Arc<dyn DataApiInstance>
        })
    }

    async fn instance(
        &self,
        target: GatewayTarget,
    ) -> Result<Arc<dyn DataApiInstance>, InstanceError> {
        let slug = target.database.slug.as_str().to_owned();
        let instance = {
            let mut instances = self
                .instances
                .lock()
                .map_err(|_| InstanceError::Unavailable)?;
            let reusable = instances.get(&slug).filter(|i| {
                // A start that failed just now is answered as failed; after that, and
                // after a listener that ended, the next request starts afresh.
                let failed_recently = i
                    .failed_at
                    .lock()
                    .ok()
                    .and_then(|at| *at)
                    .is_some_and(|at| at.elapsed() < RETRY_AFTER_FAILURE);
                // Another database under a reused slug, or new passwords, start afresh.
                i.target().database.id == target.database.id
                    && i.target().tenant == target.tenant
                    && i.target().jwt_secret == target.jwt_secret
                    && (i.state() != State::Failed || failed_recently)
            });
            match reusable {
                Some(instance) => {
                    if let Ok(mut checked) = instance.checked.lock() {
                        *checked = Instant::now();
                    }
                    instance.clone()
                }
                None => {
                    let pools = Pools::new(
                        self.config_for(
                            &target,
                            &target.tenant.names.authenticator_role,
                            &target.tenant.authenticator_password,
                            "quire data api",
                        ),
                        self.settings.pool_size,
                        self.settings.threads,
                        self.cap.clone(),
                        self.settings.acquire_wait,
                    );
                    let users = Users::new(Pool::new(
                        // The owner's connections, for the `auth` schema the owner owns.
                        self.config_for(
                            &target,
                            &target.tenant.names.owner_role,
                            &target.tenant.owner_password,
                            "quire data api auth",
                        ),
                        OWNER_POOL_SIZE,
                        self.cap.clone(),
                        self.settings.acquire_wait,
                    ));
                    let instance = Instance::new(target, pools, users);
                    if let Some(old) = instances.insert(slug, instance.clone()) {
                        old.stop();
                    }
                    tokio::spawn(instance.clone().start());
                    instance
                }
            }
        };
        instance.touch();
        let mut state = instance.state.subscribe();
        let settled = tokio::time::timeout(
            self.settings.start_wait,
            state.wait_for(|s| *s != State::Starting),
        )
        .await;
        match settled {
            Err(_) => Err(InstanceError::Starting),
            Ok(Err(_)) => Err(InstanceError::Unavailable),
            Ok(Ok(s)) if *s == State::Running => Ok(instance as Arc<dyn DataApiInstance>),
            Ok(Ok(_)) => Err(InstanceError::Unavailable),
        }
    }
}
