//! One database's data API on this replica: its pools, its schema cache, its listener
//! (`listen.rs`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use quire_dataapi::{Plan, RestAnswer, SchemaCache};
use quire_databases::{
    DataApiInstance, GatewayTarget, InstanceError, KeyRole, Missing, Respond, RunError, TenantUsers,
};
use quire_kernel::InfraError;
use tokio::sync::{MutexGuard, watch};
use tokio_postgres::Client;

use crate::cap::Share;
use crate::catalog::{Fingerprints, question, with_fingerprints};
use crate::deadline::{Deadline, past};
use crate::listen::{Asked, Checks, Listener, listen};
use crate::meter::{Cause, Meter};
use crate::pool::{Pool, Pools, Refusal};
use crate::users::Users;

/// The `statement_timeout` each role has in this database (`ALTER ROLE … IN DATABASE`).
const ROLE_TIMEOUTS: &str = "SELECT r.rolname::text, split_part(c, '=', 2)
    FROM pg_db_role_setting s
    JOIN pg_roles r ON r.oid = s.setrole
    CROSS JOIN LATERAL unnest(s.setconfig) AS c
    WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND c LIKE 'statement_timeout=%'";

/// The least time between two schema loads a notification asks for: a tenant notifying
/// `pgrst` in a loop must not make the catalog read more often. (A request's miss loads
/// only when the catalog changed, `listen.rs`.)
pub(crate) const RELOAD_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Starting,
    Running,
    Failed,
}

pub(crate) struct Instance {
    target: GatewayTarget,
    pub(crate) pools: Pools,
    /// The owner's pool, which `users` lends from (kept here to close its idle
    /// connections when room is needed).
    owner: Pool<Client>,
    /// The database's end users, reached as its owner.
    users: Users,
    /// The account's way to the cap, for the listener's place.
    share: Share,
    pub(crate) meter: Arc<Meter>,
    schema: RwLock<Arc<SchemaCache>>,
    /// Each shared role's `statement_timeout` in this database. PostgreSQL applies a
    /// role's settings at login, not on `SET ROLE`, so each request sets its role's (as
    /// PostgREST does).
    timeouts: RwLock<HashMap<String, String>>,
    /// How long a request may wait for its statements, by its role's timeout.
    deadline: Deadline,
    /// One schema load at a time.
    pub(crate) loading: tokio::sync::Mutex<()>,
    /// When the last load began.
    load_began: Mutex<Instant>,
    /// Counts the loads begun, each under `loading`.
    pub(crate) loads_begun: AtomicU64,
    /// What the catalog held for the cache as loaded.
    fingerprints: Mutex<Fingerprints>,
    /// The questions misses asked the catalog.
    pub(crate) checks: Checks,
    pub(crate) asked: Arc<Asked>,
    /// Counts schema loads: statements prepared under an older one are prepared again.
    pub(crate) generation: AtomicU64,
    pub(crate) state: watch::Sender<State>,
    /// Whether the meter counts it among the instances serving.
    serving: AtomicBool,
    pub(crate) checked: Mutex<Instant>,
    pub(crate) last_used: Mutex<Instant>,
    /// When and why its start failed.
    pub(crate) failed: Mutex<Option<(Instant, InstanceError)>>,
    listener: Mutex<Option<Listener>>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("target", &self.target)
            .field("state", &*self.state.borrow())
            .finish_non_exhaustive()
    }
}

fn infra(what: &str, e: impl std::fmt::Display) -> InfraError {
    InfraError::new(format!("{what}: {e}"))
}

/// A connection the pool did not lend, as a start (or a load) hears it.
fn lend_refused<E: std::fmt::Display>(e: Refusal<E>) -> StartError {
    match e {
        Refusal::Full(full) => StartError::Refused(full.error()),
        Refusal::Busy => StartError::Refused(InstanceError::Saturated),
        Refusal::Connect(e) => StartError::Failed(infra("connecting as the authenticator", e)),
    }
}

/// Why a start did not complete.
pub(crate) enum StartError {
    /// No connection could be had under the account's share or the cap.
    Refused(InstanceError),
    Failed(InfraError),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused(e) => e.fmt(f),
            Self::Failed(e) => e.fmt(f),
        }
    }
}

impl From<InfraError> for StartError {
    fn from(e: InfraError) -> Self {
        Self::Failed(e)
    }
}

impl Instance {
    pub fn new(
        target: GatewayTarget,
        pools: Pools,
        owner: Pool<Client>,
        share: Share,
        meter: Arc<Meter>,
        deadline: Deadline,
    ) -> Arc<Self> {
        let now = Instant::now();
        Arc::new(Self {
            target,
            pools,
            users: Users::new(owner.clone()),
            owner,
            share,
            meter,
            schema: RwLock::new(Arc::new(SchemaCache::from_parts(Vec::new(), Vec::new()))),
            timeouts: RwLock::new(HashMap::new()),
            deadline,
            loading: tokio::sync::Mutex::new(()),
            load_began: Mutex::new(now),
            loads_begun: AtomicU64::new(0),
            fingerprints: Mutex::default(),
            checks: Checks::default(),
            asked: Arc::new(Asked::default()),
            generation: AtomicU64::new(0),
            state: watch::channel(State::Starting).0,
            serving: AtomicBool::new(false),
            checked: Mutex::new(now),
            last_used: Mutex::new(now),
            failed: Mutex::new(None),
            listener: Mutex::new(None),
        })
    }

    pub fn state(&self) -> State {
        *self.state.borrow()
    }

    pub(crate) fn set_state(&self, state: State) {
        let serving = state == State::Running;
        if self.serving.swap(serving, Ordering::AcqRel) != serving {
            self.meter.serving(serving);
        }
        self.state.send_replace(state);
    }

    pub(crate) fn target_slug(&self) -> &str {
        self.target.database.slug.as_str()
    }

    pub fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }

    pub fn last_used(&self) -> Instant {
        self.last_used
            .lock()
            .map_or_else(|_| Instant::now(), |t| *t)
    }

    /// How long ago the last schema load began.
    pub(crate) fn since_load(&self) -> Duration {
        self.load_began
            .lock()
            .map_or(Duration::ZERO, |at| at.elapsed())
    }

    /// Whether a request holds one of its connections now.
    pub fn busy(&self) -> bool {
        self.pools.lent() + self.owner.lent() > 0
    }

    /// Whether it holds its listening connection.
    pub fn listening(&self) -> bool {
        self.listener.lock().is_ok_and(|l| l.is_some())
    }

    /// Closes one idle pooled connection, the owner's first (the auth subset's, the less
    /// used); whether there was one.
    pub fn close_idle_one(&self) -> bool {
        self.owner.close_idle_one() || self.pools.close_idle_one()
    }

    /// Takes its listener's place under the cap (without waiting: a start is not worth
    /// queueing behind other requests; the client hears why and retries), then connects,
    /// loads the schema and starts listening: `Running`, or `Failed` with the cause
    /// logged (never a password: the errors name the role and database only) and kept
    /// for the requests that come before the next try.
    pub async fn start(self: Arc<Self>) {
        let outcome = async {
            let hold = self
                .share
                .take(Duration::ZERO)
                .await
                .map_err(|full| StartError::Refused(full.error()))?;
            // The REST subset works without it, so a database whose owner made an `auth`
            // of another shape still serves; its auth requests fail until the owner
            // repairs it.
            if let Err(e) = self.users.ensure_schema().await {
                tracing::warn!(
                    database = %self.target.database.slug,
                    error = %e,
                    "a data API instance could not make its auth schema"
                );
            }
            let guard = self.loading.lock().await;
            self.load_schema(&guard, Cause::Start).await?;
            drop(guard);
            let listener = listen(&self, hold).await?;
            if let Ok(mut slot) = self.listener.lock() {
                *slot = Some(listener);
            }
            Ok::<(), StartError>(())
        }
        .await;
        match outcome {
            Ok(()) => self.set_state(State::Running),
            Err(e) => {
                let why = match e {
                    StartError::Refused(why) => why,
                    StartError::Failed(e) => {
                        tracing::warn!(
                            database = %self.target.database.slug,
                            error = %e,
                            "a data API instance did not start"
                        );
                        InstanceError::Unavailable
                    }
                };
                if let Ok(mut failed) = self.failed.lock() {
                    *failed = Some((Instant::now(), why));
                }
                self.set_state(State::Failed);
            }
        }
    }

    /// Loads the schema and the roles' timeouts, under the guard of `loading`.
    pub(crate) async fn load_schema(
        &self,
        _loading: &MutexGuard<'_, ()>,
        cause: Cause,
    ) -> Result<(), StartError> {
        if let Ok(mut at) = self.load_began.lock() {
            *at = Instant::now();
        }
        self.loads_begun.fetch_add(1, Ordering::AcqRel);
        let seen = self.asked.heard();
        self.meter.loaded(cause);
        let pool = self.pools.here();
        let mut conn = pool.lend().await.map_err(lend_refused)?;
        // The cache's query as a subquery, so its one column arrives as text whatever type
        // it builds, and the catalog's fingerprints beside it, of the same snapshot.
        let sql = with_fingerprints(SchemaCache::LOAD_SQL);
        let exposed = SchemaCache::load_param(self.target.exposed_schemas());
        let rows = conn
            .query(&sql, &[Some(&exposed)])
            .await
            .map_err(|e| infra("loading the schema cache", e))?;
        let timeouts = conn
            .query(ROLE_TIMEOUTS, &[])
            .await
            .map_err(|e| infra("reading the roles' timeouts", e))?;
        conn.clean();
        drop(conn);
        if let Ok(mut map) = self.timeouts.write() {
            *map = timeouts
                .into_iter()
                .filter_map(|r| {
                    let mut columns = r.into_iter();
                    Some((columns.next()??, columns.next()??))
                })
                .collect();
        }
        let mut columns = rows
            .into_iter()
            .next()
            .ok_or_else(|| InfraError::new("the schema cache's query returned no row"))?
            .into_iter();
        let text = columns
            .next()
            .flatten()
            .ok_or_else(|| InfraError::new("the schema cache's query returned no cache"))?;
        let fingerprints = Fingerprints::read(columns)
            .ok_or_else(|| InfraError::new("the schema cache's query returned no fingerprint"))?;
        let cache = SchemaCache::from_json(&text).map_err(|e| infra("the schema cache", e.0))?;
        if let Ok(mut schema) = self.schema.write() {
            *schema = Arc::new(cache);
        }
        if let Ok(mut held) = self.fingerprints.lock() {
            *held = fingerprints;
        }
        self.asked.covered(seen);
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Whether the catalog's names of `missing`'s kind changed since the cache was loaded:
    /// one cheap statement (`catalog.rs`), under the guard of `loading`, so no load can
    /// change the fingerprint it is compared with meanwhile.
    pub(crate) async fn catalog_moved(
        &self,
        _loading: &MutexGuard<'_, ()>,
        missing: Missing,
    ) -> Result<bool, StartError> {
        self.meter.checked();
        let pool = self.pools.here();
        let mut conn = pool.lend().await.map_err(lend_refused)?;
        let exposed = SchemaCache::load_param(self.target.exposed_schemas());
        let rows = conn
            .query(question(missing), &[Some(&exposed)])
            .await
            .map_err(|e| infra("asking the catalog what changed", e))?;
        conn.clean();
        drop(conn);
        let now = rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten());
        let held = self.fingerprints.lock().map(|f| f.of(missing).to_owned());
        Ok(match (now, held) {
            (Some(now), Ok(held)) => now != held,
            // Nothing to compare: a load settles it.
            _ => true,
        })
    }

    /// Its listening connection ended: it fails, giving back the connection's place, and
    /// the next request starts another.
    pub(crate) fn listener_ended(&self) {
        let listener = self.listener.lock().ok().and_then(|mut l| l.take());
        drop(listener);
        self.set_state(State::Failed);
    }

    /// Stops listening and closes its idle connections; those lent close as they come
    /// back once the instance is dropped.
    pub fn stop(&self) {
        let listener = self.listener.lock().ok().and_then(|mut l| l.take());
        drop(listener);
        self.owner.close_idle();
        self.pools.close_idle();
        self.set_state(State::Failed);
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if self.serving.swap(false, Ordering::AcqRel) {
            self.meter.serving(false);
        }
    }
}

#[async_trait]
impl DataApiInstance for Instance {
    fn target(&self) -> &GatewayTarget {
        &self.target
    }

    fn users(&self) -> &dyn TenantUsers {
        &self.users
    }

    fn schema(&self) -> Arc<SchemaCache> {
        self.schema
            .read()
            .map(|s| s.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    async fn reload_schema(&self, missing: Missing) {
        crate::listen::on_miss(self, missing).await;
    }

    async fn run(
        &self,
        role: KeyRole,
        claims: &str,
        plan: &Plan,
        respond: Respond,
    ) -> Result<RestAnswer, RunError> {
        self.touch();
        let pool = self.pools.here();
        let mut conn = pool.lend().await.map_err(|e| {
            let (reason, error) = match e {
                Refusal::Full(full) => (full.reason(), full.error()),
                Refusal::Busy => ("busy", InstanceError::Saturated),
                Refusal::Connect(_) => ("unavailable", InstanceError::Unavailable),
            };
            self.meter.refused(reason);
            RunError::Instance(error)
        })?;
        conn.at_generation(self.generation.load(Ordering::Acquire));
        // The role is one of three fixed names, never the client's text; its timeout is
        // the catalog's (no setting keeps the authenticator's).
        let timeout = self
            .timeouts
            .read()
            .ok()
            .and_then(|t| t.get(role.as_str()).cloned());
        let deadline = self.deadline.of(timeout.as_deref());
        let ran = tokio::time::timeout(
            deadline,
            crate::request::run(&mut conn, role, timeout.as_deref(), claims, plan, respond),
        )
        .await;
        match ran {
            Ok(done) => done,
            Err(_) => {
                // The connection is let go of mid-answer: the pool ends its backend.
                tracing::warn!(
                    database = %self.target.database.slug,
                    role = role.as_str(),
                    "a data API request ran past its deadline"
                );
                Err(RunError::Refused(past(deadline)))
            }
        }
    }
}
