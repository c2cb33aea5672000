//! One database's data API on this replica: its pool, its schema cache, its listener.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::StreamExt;
use quire_dataapi::{Plan, PlanRow, SchemaCache};
use quire_databases::{
    DataApiInstance, GatewayTarget, InstanceError, KeyRole, PgRefusal, RunError, TenantUsers,
};
use quire_kernel::InfraError;
use tokio::sync::{OwnedSemaphorePermit, watch};
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Client};

use crate::pool::{Acquire, Lent, Pools};
use crate::users::Users;
use crate::wire::{Row, Step, Wire, WireError};

/// The channel PostgREST listens on; the DDL trigger and `POST …/reload` notify it.
const CHANNEL: &str = "pgrst";

/// The settings statement's text, so that a read's and a write's cannot drift apart.
macro_rules! settings {
    () => {
        "SELECT set_config('role', $1, true), \
        set_config('statement_timeout', coalesce($2, current_setting('statement_timeout')), true), \
        set_config('request.jwt.claims', $3, true)"
    };
}

/// A request's role, timeout and claims, for the rest of its transaction (what PostgREST
/// sets, in one statement).
const SETUP: &str = settings!();

/// [`SETUP`] for a read, which also makes its transaction read-only (as `BEGIN READ
/// ONLY` would, a statement earlier).
pub const READ_SETUP: &str = concat!(
    settings!(),
    ", set_config('transaction_read_only', 'on', true)"
);

/// The `statement_timeout` each role has in this database (`ALTER ROLE … IN DATABASE`).
const ROLE_TIMEOUTS: &str = "SELECT r.rolname::text, split_part(c, '=', 2)
    FROM pg_db_role_setting s
    JOIN pg_roles r ON r.oid = s.setrole
    CROSS JOIN LATERAL unnest(s.setconfig) AS c
    WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND c LIKE 'statement_timeout=%'";

/// The least time between two schema loads a request's unknown name may cause: a client
/// asking for tables that do not exist must not make the catalog read on every request.
const RELOAD_ON_MISS_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Starting,
    Running,
    Failed,
}

pub(crate) struct Instance {
    target: GatewayTarget,
    pools: Pools,
    /// The database's end users, reached as its owner.
    users: Users,
    schema: RwLock<Arc<SchemaCache>>,
    /// Each shared role's `statement_timeout` in this database. PostgreSQL applies a
    /// role's settings at login, not on `SET ROLE`, so each request sets its role's (as
    /// PostgREST does).
    timeouts: RwLock<HashMap<String, String>>,
    loaded_at: Mutex<Instant>,
    /// Counts schema loads: statements prepared under an older one are prepared again.
    generation: AtomicU64,
    pub(crate) state: watch::Sender<State>,
    pub(crate) checked: Mutex<Instant>,
    pub(crate) last_used: Mutex<Instant>,
    pub(crate) failed_at: Mutex<Option<Instant>>,
    listener: Mutex<Option<(Client, OwnedSemaphorePermit, JoinHandle<()>)>>,
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

fn run_error(e: WireError) -> RunError {
    match e {
        WireError::Db(db) => RunError::Refused(PgRefusal {
            sqlstate: db.sqlstate,
            message: db.message,
            detail: db.detail,
            hint: db.hint,
        }),
        WireError::Broken(e) => RunError::Infra(infra("a data API connection failed", e)),
    }
}

impl Instance {
    pub fn new(target: GatewayTarget, pools: Pools, users: Users) -> Arc<Self> {
        let now = Instant::now();
        Arc::new(Self {
            target,
            pools,
            users,
            schema: RwLock::new(Arc::new(SchemaCache::from_parts(Vec::new(), Vec::new()))),
            timeouts: RwLock::new(HashMap::new()),
            loaded_at: Mutex::new(now),
            generation: AtomicU64::new(0),
            state: watch::channel(State::Starting).0,
            checked: Mutex::new(now),
            last_used: Mutex::new(now),
            failed_at: Mutex::new(None),
            listener: Mutex::new(None),
        })
    }

    pub fn state(&self) -> State {
        *self.state.borrow()
    }

    pub fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }

    /// Connects, loads the schema, starts listening: `Running`, or `Failed` with the cause
    /// logged (never a password: the errors name the role and database only).
    pub async fn start(self: Arc<Self>) {
        // The REST subset works without it, so a database whose owner made an `auth` of
        // another shape still serves; its auth requests fail until the owner repairs it.
        if let Err(e) = self.users.ensure_schema().await {
            tracing::warn!(
                database = %self.target.database.slug,
                error = %e,
                "a data API instance could not make its auth schema"
            );
        }
        let outcome = async {
            self.load_schema().await?;
            self.clone().listen().await
        }
        .await;
        match outcome {
            Ok(()) => {
                self.state.send_replace(State::Running);
            }
            Err(e) => {
                tracing::warn!(
                    database = %self.target.database.slug,
                    error = %e,
                    "a data API instance did not start"
                );
                if let Ok(mut at) = self.failed_at.lock() {
                    *at = Some(Instant::now());
                }
                self.state.send_replace(State::Failed);
            }
        }
    }

    async fn load_schema(&self) -> Result<(), InfraError> {
        let pool = self.pools.here();
        let mut conn = pool.get().await.map_err(acquire_infra)?;
        // The cache's query as a subquery, so its one column arrives as text whatever type
        // it builds.
        let sql = format!(
            "SELECT cache::text FROM ({}) AS loaded(cache)",
            SchemaCache::LOAD_SQL.trim().trim_end_matches(';')
        );
        let rows = conn
            .query(&sql, &[])
            .await
            .map_err(|e| infra("loading the schema cache", e))?;
        let timeouts = conn
            .query(ROLE_TIMEOUTS, &[])
            .await
            .map_err(|e| infra("reading the roles' timeouts", e))?;
        conn.clean();
        if let Ok(mut map) = self.timeouts.write() {
            *map = timeouts
                .into_iter()
                .filter_map(|r| {
                    let mut columns = r.into_iter();
                    Some((columns.next()??, columns.next()??))
                })
                .collect();
        }
        let text = rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten())
            .ok_or_else(|| InfraError::new("the schema cache's query returned no row"))?;
        let cache = SchemaCache::from_json(&text).map_err(|e| infra("the schema cache", e.0))?;
        if let Ok(mut schema) = self.schema.write() {
            *schema = Arc::new(cache);
        }
        if let Ok(mut at) = self.loaded_at.lock() {
            *at = Instant::now();
        }
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// A connection that hears `NOTIFY pgrst` and loads the schema again; if it ends, the
    /// instance fails, and the next request starts another.
    async fn listen(self: Arc<Self>) -> Result<(), InfraError> {
        let (client, mut connection, permit) = self
            .pools
            .here()
            .open_listening()
            .await
            .map_err(acquire_infra)?;
        let weak: Weak<Self> = Arc::downgrade(&self);
        let task = tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(message) = messages.next().await {
                match message {
                    Ok(AsyncMessage::Notification(n)) if n.channel() == CHANNEL => {
                        let Some(instance) = weak.upgrade() else {
                            return;
                        };
                        if let Err(e) = instance.load_schema().await {
                            tracing::warn!(error = %e, "a data API schema reload failed");
                        }
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            if let Some(instance) = weak.upgrade() {
                instance.state.send_replace(State::Failed);
            }
        });
        client
            .batch_execute(&format!("LISTEN {CHANNEL}"))
            .await
            .map_err(|e| infra("listening for schema reloads", e))?;
        if let Ok(mut listener) = self.listener.lock() {
            *listener = Some((client, permit, task));
        }
        Ok(())
    }

    /// Stops listening; the pool's connections close as the instance is dropped.
    pub fn stop(&self) {
        if let Ok(mut listener) = self.listener.lock()
            && let Some((_, _, task)) = listener.take()
        {
            task.abort();
        }
        self.state.send_replace(State::Failed);
    }
}

/// Ends a transaction a refused statement left failed, so the connection may serve again.
async fn roll_back(conn: &mut Lent<'_, Wire>) {
    if let Ok(answer) = conn.pipeline(&[Step::ROLLBACK]).await
        && answer.status == b'I'
    {
        conn.clean();
    }
}

fn plan_row(rows: &[Row]) -> Result<PlanRow, RunError> {
    let bad = |what: &str| RunError::Infra(InfraError::new(format!("a plan's row: {what}")));
    let row = rows.first().ok_or_else(|| bad("none returned"))?;
    let number = |i: usize| -> Result<Option<i64>, RunError> {
        match row.get(i) {
            Some(Some(text)) => text.parse().map(Some).map_err(|_| bad("not a number")),
            Some(None) => Ok(None),
            None => Err(bad("a column is missing")),
        }
    };
    Ok(PlanRow {
        total: number(0)?,
        page_total: number(1)?.ok_or_else(|| bad("no page total"))?,
        body: row.get(2).cloned().ok_or_else(|| bad("no body"))?,
    })
}

fn acquire_infra<E: std::fmt::Display>(e: Acquire<E>) -> InfraError {
    match e {
        Acquire::Saturated => InfraError::new("the data API connection cap is reached"),
        Acquire::Connect(e) => infra("connecting as the authenticator", e),
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

    async fn reload_schema(&self) -> bool {
        let recent = self
            .loaded_at
            .lock()
            .map(|at| at.elapsed() < RELOAD_ON_MISS_EVERY)
            .unwrap_or(true);
        !recent && self.load_schema().await.is_ok()
    }

    async fn run(&self, role: KeyRole, claims: &str, plan: &Plan) -> Result<PlanRow, RunError> {
        self.touch();
        let pool = self.pools.here();
        let mut conn = pool.get().await.map_err(|e| match e {
            Acquire::Saturated => RunError::Instance(InstanceError::Saturated),
            Acquire::Connect(_) => RunError::Instance(InstanceError::Unavailable),
        })?;
        conn.at_generation(self.generation.load(Ordering::Acquire));
        // The role is one of three fixed names, never the client's text; its timeout is
        // the catalog's (no setting keeps the authenticator's).
        let timeout = self
            .timeouts
            .read()
            .ok()
            .and_then(|t| t.get(role.as_str()).cloned());
        let setup_params = [Some(role.as_str()), timeout.as_deref(), Some(claims)];
        let params: Vec<Option<&str>> = plan.params.iter().map(Option::as_deref).collect();
        let statement = Step {
            sql: &plan.sql,
            params: &params,
        };
        if plan.read_only {
            // A read commits whatever its answer, so it needs no BEGIN or COMMIT: the
            // statements under one `Sync` are one transaction, which the server commits at
            // the `Sync`, or rolls back there when a statement is refused (the steps after
            // it are skipped). Either way the connection is idle again.
            let setup = Step {
                sql: READ_SETUP,
                params: &setup_params,
            };
            let answer = conn
                .pipeline(&[setup, statement])
                .await
                .map_err(run_error)?;
            if answer.status == b'I' {
                conn.clean();
            }
            if let Some(e) = answer.refused {
                return Err(run_error(WireError::Db(e)));
            }
            return plan_row(answer.rows.get(1).map_or(&[][..], Vec::as_slice));
        }
        let setup = Step {
            sql: SETUP,
            params: &setup_params,
        };
        // A write commits only an answer PostgREST would give (a singular PATCH that
        // touched two rows is undone), so its end waits for the row.
        let answer = conn
            .pipeline(&[Step::BEGIN, setup, statement])
            .await
            .map_err(run_error)?;
        if let Some(e) = answer.refused {
            roll_back(&mut conn).await;
            return Err(run_error(WireError::Db(e)));
        }
        let rows = answer.rows.get(2).map_or(&[][..], Vec::as_slice);
        let row = plan_row(rows);
        let keep = row
            .as_ref()
            .is_ok_and(|row| quire_dataapi::respond(plan, row.clone()).is_ok());
        let ended = conn
            .pipeline(&[if keep { Step::COMMIT } else { Step::ROLLBACK }])
            .await
            .map_err(run_error)?;
        if ended.status == b'I' {
            conn.clean();
        }
        if let Some(e) = ended.refused {
            return Err(run_error(WireError::Db(e)));
        }
        row
    }
}
