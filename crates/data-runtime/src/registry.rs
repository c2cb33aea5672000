//! This replica's instances: started on demand, stopped when idle or told, under one cap
//! of connections of which each account may hold a share (`cap.rs`). When a limit is
//! reached, what is idle makes room, least recently used first: idle pooled connections,
//! then idle instances whole; the account's own when it is at its share, others' first
//! when the replica is at its cap. A stop also counts: a request whose record was read
//! before its database's last stop (a rotation of its secret, say) starts nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use quire_databases::{
    DataApiInstance, DataApiRuntime, DataApiSignals, GatewayTarget, InstanceError, TenantBackends,
};
use quire_kernel::{AccountId, DatabaseId};
use tokio_postgres::Config;

use crate::abandon::Ender;
use crate::cap::{Cap, Full, MakeRoom, Share};
use crate::deadline::Deadline;
use crate::instance::{Instance, State};
use crate::meter::{Evicted, Figures, Meter};
use crate::pool::{Pool, Pools};

/// Connections as the owner per instance, for sign-ups, grants and sessions.
const OWNER_POOL_SIZE: usize = 2;

/// Settings a connection of the data API sends at login. The owner may `ALTER DATABASE …
/// SET` anything a user may set, and those apply at login too; a connection's own startup
/// options come after them, so these keep a tenant's setting from closing pooled
/// connections between requests (idle timeouts of a second made writes fail at random with
/// "the server closed the connection"). `client_connection_check_interval` is added when
/// the cluster has it ([`RuntimeSettings::client_check_interval`]).
const PINNED_SESSION: &str = "-c idle_in_transaction_session_timeout=0 -c idle_session_timeout=0";

/// How long a database's stop is remembered: longer than any request takes between reading
/// the record and asking for the instance.
const STOPS_KEPT: Duration = Duration::from_secs(600);

/// The least share of an account: an instance's listener, a connection as the
/// authenticator and one as the owner.
const LEAST_SHARE: usize = 3;

/// How long a record check holds: a database deleted or its data API turned off on another
/// replica stops being served here within this.
const CHECK_HOLDS: Duration = Duration::from_secs(1);

/// How long a failed start is answered `upstream unavailable` before the next request
/// tries again.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(2);

/// How long a start refused for want of a connection is answered so (the gateway's
/// `Retry-After`) before the next request tries again.
const RETRY_AFTER_REFUSAL: Duration = Duration::from_secs(1);

#[derive(Debug, Clone)]
pub struct RuntimeSettings {
    /// Connections of one instance (its listener aside), shared out among `threads`.
    pub pool_size: usize,
    /// The threads that serve requests (the API's workers).
    pub threads: usize,
    /// Connections of every instance together, listeners included (protects the
    /// cluster's `max_connections`; `QUIRE_DATA_API_MAX_CONNECTIONS`).
    pub max_connections: usize,
    /// Connections of one account's instances together, at least 3 and at most
    /// `max_connections` (`QUIRE_DATA_API_ACCOUNT_CONNECTIONS`).
    pub account_connections: usize,
    /// An instance with no request for this long stops (`QUIRE_DATA_API_IDLE_SECS`).
    pub idle: Duration,
    /// How long a request waits for a starting instance before it hears `Starting`.
    pub start_wait: Duration,
    /// How long a request waits for a connection.
    pub acquire_wait: Duration,
    /// The longest `statement_timeout` a data API request runs under: its deadline's
    /// when the catalog gives its role none, and its most otherwise.
    pub longest_statement: Duration,
    /// Added to a request's role's timeout for its deadline on Quire's side.
    pub deadline_margin: Duration,
    /// How long a backend a request left running gets after its cancel before it is
    /// terminated.
    pub cancel_grace: Duration,
    /// What terminates such a backend (the cluster's adapter); without it, a backend gets
    /// its cancel only, and the cluster's sweep ends it later.
    pub backends: Option<Arc<dyn TenantBackends>>,
    /// `client_connection_check_interval` of every connection (PostgreSQL 14 and later;
    /// `None` on older clusters, which lack it): how soon a backend running a statement
    /// notices its client has gone.
    pub client_check_interval: Option<Duration>,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        Self {
            pool_size: 4,
            threads: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            max_connections: 64,
            account_connections: 16,
            idle: Duration::from_secs(600),
            start_wait: Duration::from_millis(1_500),
            acquire_wait: Duration::from_secs(2),
            longest_statement: Duration::from_secs(8),
            deadline_margin: Duration::from_secs(5),
            cancel_grace: Duration::from_secs(2),
            backends: None,
            client_check_interval: None,
        }
    }
}

/// The label of a refusal in the metrics.
fn reason(e: &InstanceError) -> &'static str {
    match e {
        InstanceError::Starting => "starting",
        InstanceError::Unavailable => "unavailable",
        InstanceError::Saturated => "cap",
        InstanceError::AccountBusy => "share",
    }
}

/// The `DataApiRuntime` of this replica.
pub struct Runtime {
    /// Where the cluster is (host, port, TLS); each instance sets database, user, password.
    base: Config,
    settings: RuntimeSettings,
    cap: Arc<Cap>,
    meter: Arc<Meter>,
    ender: Arc<Ender>,
    instances: Mutex<HashMap<String, Arc<Instance>>>,
    /// Stops heard so far ([`DataApiSignals::stops`]).
    stops: AtomicU64,
    /// The count of stops at each database's last stop, and when it was.
    stopped: Mutex<HashMap<DatabaseId, (u64, Instant)>>,
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
        let meter = Arc::new(Meter::default());
        let share = settings.account_connections.max(LEAST_SHARE);
        let ender = Arc::new(Ender {
            backends: settings.backends.clone(),
            grace: settings.cancel_grace,
            meter: meter.clone(),
        });
        let runtime = Arc::new(Self {
            base,
            cap: Cap::new(settings.max_connections, share, meter.clone()),
            meter,
            ender,
            settings,
            instances: Mutex::new(HashMap::new()),
            stops: AtomicU64::new(0),
            stopped: Mutex::new(HashMap::new()),
        });
        let weak = Arc::downgrade(&runtime);
        runtime.cap.made_room_by(weak.clone());
        tokio::spawn(reap(weak));
        runtime
    }

    /// How many instances are up (for tests and the operator's figures).
    #[must_use]
    pub fn running(&self) -> usize {
        self.instances.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Whether database `slug` has an instance serving here.
    #[must_use]
    pub fn serves(&self, slug: &str) -> bool {
        self.instances
            .lock()
            .is_ok_and(|m| m.get(slug).is_some_and(|i| i.state() == State::Running))
    }

    /// What the runtime holds and has done (the metrics' figures, for tests).
    #[must_use]
    pub fn figures(&self) -> Figures {
        self.meter.figures()
    }

    /// Connections open under the cap, all accounts' and `account`'s.
    #[must_use]
    pub fn connections(&self, account: AccountId) -> (usize, usize) {
        self.cap.open(account)
    }

    /// A connection to the target's database as `role` with `password`, with
    /// [`PINNED_SESSION`] after the operator's own options.
    fn config_for(&self, target: &GatewayTarget, role: &str, password: &str, name: &str) -> Config {
        let mut config = self.base.clone();
        let mut pinned = PINNED_SESSION.to_owned();
        if let Some(every) = self.settings.client_check_interval {
            let ms = every.as_millis().max(1);
            pinned.push_str(&format!(" -c client_connection_check_interval={ms}"));
        }
        let options = match config.get_options() {
            Some(theirs) if !theirs.trim().is_empty() => format!("{theirs} {pinned}"),
            _ => pinned,
        };
        config
            .dbname(&target.tenant.names.database)
            .user(role)
            .password(password.as_bytes())
            .application_name(name)
            .options(&options)
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
        drop(instances);
        if let Ok(mut stopped) = self.stopped.lock() {
            stopped.retain(|_, (_, at)| at.elapsed() < STOPS_KEPT);
        }
    }

    /// Whether `target` was read before its database's last stop here.
    fn stale(&self, target: &GatewayTarget) -> bool {
        self.stopped.lock().is_ok_and(|stopped| {
            stopped
                .get(&target.database.id)
                .is_some_and(|(at, _)| *at > target.stops_seen)
        })
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
        // Counted under the instances' lock, so an `instance` call either sees the stop or
        // made its instance before it, which is then stopped here.
        if let Ok(mut instances) = self.instances.lock() {
            let count = self.stops.fetch_add(1, Ordering::AcqRel) + 1;
            if let Ok(mut stopped) = self.stopped.lock() {
                stopped.insert(id, (count, Instant::now()));
            }
            instances.retain(|_, instance| {
                let keep = instance.target().database.id != id;
                if !keep {
                    instance.stop();
                }
                keep
            });
        }
    }

    fn stops(&self) -> u64 {
        self.stops.load(Ordering::Acquire)
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
            if self.stale(&target) {
                // Its record may hold what the stop was for (the old secret of a rotation):
                // the client's retry reads it again.
                drop(instances);
                self.meter.refused("stale");
                return Err(InstanceError::Starting);
            }
            let reusable = instances.get(&slug).filter(|i| {
                // A start that failed just now is answered as failed; after that, and
                // after a listener that ended, the next request starts afresh.
                let failed_recently =
                    i.failed
                        .lock()
                        .ok()
                        .and_then(|f| f.clone())
                        .is_some_and(|(at, why)| {
                            let retry = match why {
                                InstanceError::Unavailable => RETRY_AFTER_FAILURE,
                                _ => RETRY_AFTER_REFUSAL,
                            };
                            at.elapsed() < retry
                        });
                // Another database under a reused slug, new passwords or new settings of
                // its data API (other schemas to load) start afresh.
                i.target().database.id == target.database.id
                    && i.target().tenant == target.tenant
                    && i.target().jwt_secret == target.jwt_secret
                    && i.target().database.data_api_settings == target.database.data_api_settings
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
                    let share = Share {
                        cap: self.cap.clone(),
                        account: target.database.account_id,
                    };
                    let pools = Pools::new(
                        self.config_for(
                            &target,
                            &target.tenant.names.authenticator_role,
                            &target.tenant.authenticator_password,
                            "quire data api",
                        ),
                        self.settings.pool_size,
                        self.settings.threads,
                        share.clone(),
                        self.settings.acquire_wait,
                        self.ender.clone(),
                    );
                    // The owner's connections, for the `auth` schema the owner owns.
                    let owner = Pool::new(
                        self.config_for(
                            &target,
                            &target.tenant.names.owner_role,
                            &target.tenant.owner_password,
                            "quire data api auth",
                        ),
                        OWNER_POOL_SIZE,
                        share.clone(),
                        self.settings.acquire_wait,
                        None,
                    );
                    let deadline = Deadline {
                        longest: self.settings.longest_statement,
                        margin: self.settings.deadline_margin,
                    };
                    let instance =
                        Instance::new(target, pools, owner, share, self.meter.clone(), deadline);
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
        let refused = match settled {
            Err(_) => InstanceError::Starting,
            Ok(Err(_)) => InstanceError::Unavailable,
            Ok(Ok(s)) if *s == State::Running => return Ok(instance as Arc<dyn DataApiInstance>),
            Ok(Ok(_)) => instance
                .failed
                .lock()
                .ok()
                .and_then(|f| f.as_ref().map(|(_, why)| why.clone()))
                .unwrap_or(InstanceError::Unavailable),
        };
        self.meter.refused(reason(&refused));
        Err(refused)
    }
}

impl MakeRoom for Runtime {
    fn make_room(&self, full: Full, account: AccountId) -> bool {
        let Ok(mut instances) = self.instances.lock() else {
            return false;
        };
        // At its share, only the account's own connections make room for it; at the cap,
        // an account under its share takes from the others first. Least recently used
        // first within each.
        let mut candidates: Vec<(bool, Instant, String)> = instances
            .iter()
            .map(|(slug, i)| {
                let own = i.target().database.account_id == account;
                (own, i.last_used(), slug.clone())
            })
            .filter(|(own, _, _)| *own || full == Full::Cap)
            .collect();
        candidates.sort();
        // An idle connection costs the next request a login; an instance, a schema load.
        for (_, _, slug) in &candidates {
            if instances.get(slug).is_some_and(|i| i.close_idle_one()) {
                self.meter.evicted(Evicted::Connection);
                return true;
            }
        }
        for (_, _, slug) in &candidates {
            let idle = instances
                .get(slug)
                .is_some_and(|i| i.state() == State::Running && i.listening() && !i.busy());
            if idle && let Some(instance) = instances.remove(slug) {
                instance.stop();
                self.meter.evicted(Evicted::Instance);
                return true;
            }
        }
        false
    }
}
