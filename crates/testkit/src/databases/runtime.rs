//! The `DataApiRuntime` port in memory: an instance per request, over one
//! [`MemoryDataApi`] per database that keeps what the database's instances share (its
//! schema, its users, the outcomes a test scripts for its runs, the runs made).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use quire_dataapi::{Plan, PlanRow, RestAnswer, SchemaCache};
use quire_databases::{
    DataApiInstance, DataApiRuntime, DataApiSignals, GatewayTarget, InstanceError, KeyRole,
    Missing, PgRefusal, Respond, RunError, TenantUsers,
};
use quire_kernel::{DatabaseId, InfraError};

use super::MemoryUsers;

/// What a run of a plan meets, as a test scripts it.
#[derive(Debug, Clone)]
pub enum Scripted {
    /// The statement returns this row.
    Row(PlanRow),
    /// PostgreSQL refuses the statement.
    Refused(PgRefusal),
    /// The instance cannot take the request.
    Instance(InstanceError),
    /// The connection fails mid-way.
    Broken,
}

/// A run of a plan, as the instance saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    pub role: KeyRole,
    pub claims: String,
    pub plan: Plan,
    /// Whether its transaction committed: a read whatever its answer, a write only with
    /// an answer to its row; nothing PostgreSQL refused, nothing under `tx=rollback`.
    pub committed: bool,
}

/// One database's data API, as every instance of it on the fake runtime shares it.
#[derive(Debug)]
pub struct MemoryDataApi {
    pub users: Arc<MemoryUsers>,
    schema: Mutex<Arc<SchemaCache>>,
    /// What the next reload finds (DDL made since the last one); none: the same schema.
    next_schema: Mutex<Option<SchemaCache>>,
    /// Reloads load nothing, as when the catalog cannot be reached.
    reloads_refused: AtomicBool,
    reloads: AtomicUsize,
    /// What each reload was asked for, oldest first.
    missed: Mutex<Vec<Missing>>,
    outcomes: Mutex<VecDeque<Scripted>>,
    runs: Mutex<Vec<Ran>>,
}

impl Default for MemoryDataApi {
    fn default() -> Self {
        Self {
            users: Arc::default(),
            schema: Mutex::new(Arc::new(SchemaCache::default())),
            next_schema: Mutex::default(),
            reloads_refused: AtomicBool::new(false),
            reloads: AtomicUsize::new(0),
            missed: Mutex::default(),
            outcomes: Mutex::default(),
            runs: Mutex::default(),
        }
    }
}

impl MemoryDataApi {
    /// The schema its instances hold now.
    pub fn set_schema(&self, schema: SchemaCache) {
        *self.schema.lock().expect("schema lock") = Arc::new(schema);
    }

    /// The next reload loads `schema` (what DDL made before its notification came).
    pub fn on_reload(&self, schema: SchemaCache) {
        *self.next_schema.lock().expect("schema lock") = Some(schema);
    }

    /// Whether reloads load nothing from now on, as when the catalog cannot be reached.
    pub fn refuse_reloads(&self, refused: bool) {
        self.reloads_refused.store(refused, Ordering::SeqCst);
    }

    /// How many reloads loaded the schema.
    #[must_use]
    pub fn reloads(&self) -> usize {
        self.reloads.load(Ordering::SeqCst)
    }

    /// The kinds of name each reload was asked for, loaded or not, oldest first.
    #[must_use]
    pub fn missed(&self) -> Vec<Missing> {
        self.missed.lock().expect("missed lock").clone()
    }

    /// What the next run meets; unscripted runs return an empty row.
    pub fn script(&self, outcome: Scripted) {
        self.outcomes
            .lock()
            .expect("outcomes lock")
            .push_back(outcome);
    }

    /// The runs made, oldest first.
    #[must_use]
    pub fn runs(&self) -> Vec<Ran> {
        self.runs.lock().expect("runs lock").clone()
    }
}

/// One instance of a database's data API on the fake runtime.
#[derive(Debug)]
pub struct MemoryInstance {
    target: GatewayTarget,
    api: Arc<MemoryDataApi>,
}

#[async_trait]
impl DataApiInstance for MemoryInstance {
    fn target(&self) -> &GatewayTarget {
        &self.target
    }

    fn users(&self) -> &dyn TenantUsers {
        self.api.users.as_ref()
    }

    fn schema(&self) -> Arc<SchemaCache> {
        self.api.schema.lock().expect("schema lock").clone()
    }

    async fn reload_schema(&self, missing: Missing) {
        self.api.missed.lock().expect("missed lock").push(missing);
        if self.api.reloads_refused.load(Ordering::SeqCst) {
            return;
        }
        if let Some(next) = self.api.next_schema.lock().expect("schema lock").take() {
            self.api.set_schema(next);
        }
        self.api.reloads.fetch_add(1, Ordering::SeqCst);
    }

    async fn run(
        &self,
        role: KeyRole,
        claims: &str,
        plan: &Plan,
        respond: Respond,
    ) -> Result<RestAnswer, RunError> {
        let outcome = self
            .api
            .outcomes
            .lock()
            .expect("outcomes lock")
            .pop_front()
            .unwrap_or(Scripted::Row(PlanRow::default()));
        let (answer, committed) = match outcome {
            Scripted::Row(row) => {
                let answer = respond(plan, row).map_err(RunError::Answer);
                let committed = (plan.read_only || answer.is_ok()) && !plan.rolls_back();
                (answer, committed)
            }
            Scripted::Refused(pg) => (Err(RunError::Refused(pg)), false),
            Scripted::Instance(e) => return Err(RunError::Instance(e)),
            Scripted::Broken => {
                return Err(RunError::Infra(InfraError::new(
                    "a data API connection failed: broken by the test",
                )));
            }
        };
        self.api.runs.lock().expect("runs lock").push(Ran {
            role,
            claims: claims.to_owned(),
            plan: plan.clone(),
            committed,
        });
        answer
    }
}

/// This replica's data API instances, in memory: a new instance for each request (none is
/// ever fresh, so every request reads the record), each database's shared state kept
/// across them. A target read before its database's last stop starts nothing, as on the
/// real runtime; [`MemoryRuntime::refuse`] makes every start fail.
#[derive(Debug, Default)]
pub struct MemoryRuntime {
    apis: Mutex<HashMap<DatabaseId, Arc<MemoryDataApi>>>,
    /// The slug of each instance started, oldest first.
    pub started: Mutex<Vec<String>>,
    refusal: Mutex<Option<InstanceError>>,
    stops: AtomicU64,
    /// Each database's last stop, as [`DataApiSignals::stops`] counted it.
    stopped: Mutex<HashMap<DatabaseId, u64>>,
}

impl MemoryRuntime {
    /// Database `id`'s data API, made at first use.
    #[must_use]
    pub fn database(&self, id: DatabaseId) -> Arc<MemoryDataApi> {
        self.apis
            .lock()
            .expect("runtime lock")
            .entry(id)
            .or_default()
            .clone()
    }

    /// Database `id`'s end users.
    #[must_use]
    pub fn users_of(&self, id: DatabaseId) -> Arc<MemoryUsers> {
        self.database(id).users.clone()
    }

    /// Every start fails with `refusal` from now on (`None`: starts succeed again).
    pub fn refuse(&self, refusal: Option<InstanceError>) {
        *self.refusal.lock().expect("runtime lock") = refusal;
    }

    /// Whether database `id` was told to stop.
    #[must_use]
    pub fn stopped(&self, id: DatabaseId) -> bool {
        self.stopped.lock().expect("runtime lock").contains_key(&id)
    }
}

impl DataApiSignals for MemoryRuntime {
    fn stop(&self, id: DatabaseId) {
        let count = self.stops.fetch_add(1, Ordering::SeqCst) + 1;
        self.stopped.lock().expect("runtime lock").insert(id, count);
    }

    fn stops(&self) -> u64 {
        self.stops.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl DataApiRuntime for MemoryRuntime {
    fn fresh(&self, _slug: &str) -> Option<Arc<dyn DataApiInstance>> {
        None
    }

    async fn instance(
        &self,
        target: GatewayTarget,
    ) -> Result<Arc<dyn DataApiInstance>, InstanceError> {
        if let Some(refusal) = self.refusal.lock().expect("runtime lock").clone() {
            return Err(refusal);
        }
        let id = target.database.id;
        let last_stop = self.stopped.lock().expect("runtime lock").get(&id).copied();
        if last_stop.is_some_and(|at| target.stops_seen < at) {
            return Err(InstanceError::Starting);
        }
        self.started
            .lock()
            .expect("runtime lock")
            .push(target.database.slug.as_str().to_owned());
        Ok(Arc::new(MemoryInstance {
            target,
            api: self.database(id),
        }))
    }
}
