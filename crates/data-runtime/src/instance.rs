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
use tokio_postgres::types::ToSql;
use tokio_postgres::{AsyncMessage, Client};

use crate::pool::{Acquire, Pools};
use crate::users::Users;

/// The channel PostgREST listens on; the DDL trigger and `POST …/reload` notify it.
const CHANNEL: &str = "pgrst";

/// The least time between two schema loads a request's unknown name may cause: a client
/// asking for tables that do not exist must not make the catalog read on every request.
/// A request's role, timeout and claims, for the rest of its transaction (what PostgREST
/// sets, in one statement).
const SETUP: &str = "SELECT set_config('role', $1, true), \
    set_config('statement_timeout', coalesce($2, current_setting('statement_timeout')), true), \
    set_config('request.jwt.claims', $3, true)";

/// The `statement_timeout` each role has in this database (`ALTER ROLE … IN DATABASE`).
const ROLE_TIMEOUTS: &str = "SELECT r.rolname::text, split_part(c, '=', 2)
    FROM pg_db_role_setting s
    JOIN pg_roles r ON r.oid = s.setrole
    CROSS JOIN LATERAL unnest(s.setconfig) AS c
    WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND c LIKE 'statement_timeout=%'";

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

fn refusal(e: &tokio_postgres::Error) -> Option<PgRefusal> {
    let db = e.as_db_error()?;
    Some(PgRefusal {
        sqlstate: db.code().code().to_owned(),
        message: db.message().to_owned(),
        detail: db.detail().map(str::to_owned),
        hint: db.hint().map(str::to_owned),
    })
}

fn run_error(e: &tokio_postgres::Error) -> RunError {
    match refusal(e) {
        Some(r) => RunError::Refused(r),
        None => RunError::Infra(infra("a data API connection failed", e)),
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
        let row = conn
            .query_one(&sql, &[])
            .await
            .map_err(|e| infra("loading the schema cache", e))?;
        let timeouts = conn
            .query(ROLE_TIMEOUTS, &[])
            .await
            .map_err(|e| infra("reading the roles' timeouts", e))?;
        conn.clean();
        if let Ok(mut map) = self.timeouts.write() {
            *map = timeouts
                .iter()
                .filter_map(|r| Some((r.try_get(0).ok()?, r.try_get(1).ok()?)))
                .collect();
        }
        let text: String = row
            .try_get(0)
            .map_err(|e| infra("reading the schema cache", e))?;
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

/// The error of a request's statement; a plan PostgreSQL calls stale (the table changed
/// under a prepared statement, before the schema's notification came) empties the
/// connection's statements, so the next request prepares afresh.
fn forget_stale(conn: &mut crate::pool::Lent<'_>, e: &tokio_postgres::Error) -> RunError {
    let error = run_error(e);
    if matches!(&error, RunError::Refused(r) if r.sqlstate == "0A000") {
        conn.forget_statements();
    }
    error
}

fn plan_row(rows: &[tokio_postgres::Row]) -> Result<PlanRow, RunError> {
    let row = rows
        .first()
        .ok_or_else(|| RunError::Infra(InfraError::new("a plan returned no row")))?;
    let read = |e: tokio_postgres::Error| RunError::Infra(infra("a plan's row", e));
    Ok(PlanRow {
        total: row.try_get(0).map_err(read)?,
        page_total: row.try_get(1).map_err(read)?,
        body: row.try_get(2).map_err(read)?,
    })
}

fn acquire_infra(e: Acquire) -> InfraError {
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
        let begin = if plan.read_only {
            "BEGIN READ ONLY"
        } else {
            "BEGIN"
        };
        // The role is one of three fixed names, never the client's text; its timeout is
        // the catalog's (no setting keeps the authenticator's).
        let timeout = self
            .timeouts
            .read()
            .ok()
            .and_then(|t| t.get(role.as_str()).cloned());
        let generation = self.generation.load(Ordering::Acquire);
        let prepared = async {
            let setup = conn.prepared(SETUP, 3, generation).await?;
            let statement = conn
                .prepared(&plan.sql, plan.params.len(), generation)
                .await?;
            Ok::<_, tokio_postgres::Error>((setup, statement))
        }
        .await;
        let (setup, statement) = match prepared {
            Ok(both) => both,
            Err(e) => {
                // Nothing was begun: the connection is as clean as it was lent.
                conn.clean();
                return Err(run_error(&e));
            }
        };
        let role_name = role.as_str();
        let setup_params: [&(dyn ToSql + Sync); 3] = [&role_name, &timeout, &claims];
        let params: Vec<&(dyn ToSql + Sync)> = plan
            .params
            .iter()
            .map(|p| p as &(dyn ToSql + Sync))
            .collect();
        let begun = async {
            let (began, claimed, rows) = tokio::join!(
                conn.batch_execute(begin),
                conn.query(&setup, &setup_params),
                conn.query(&statement, &params),
            );
            began?;
            claimed?;
            rows
        };
        let rows = if plan.read_only {
            // A read commits whatever its answer: BEGIN, the role, the claims, the
            // statement and COMMIT go as one pipeline, one round trip. A statement that
            // fails aborts the transaction, and the COMMIT then rolls it back.
            let (rows, committed) = tokio::join!(begun, conn.batch_execute("COMMIT"));
            committed.map_err(|e| run_error(&e))?;
            conn.clean();
            match rows {
                Ok(rows) => rows,
                Err(e) => return Err(forget_stale(&mut conn, &e)),
            }
        } else {
            // A write commits only an answer PostgREST would give (a singular PATCH that
            // touched two rows is undone), so its end waits for the row.
            let rows = match begun.await {
                Ok(rows) => rows,
                Err(e) => {
                    if conn.batch_execute("ROLLBACK").await.is_ok() {
                        conn.clean();
                    }
                    return Err(forget_stale(&mut conn, &e));
                }
            };
            let keep = plan_row(&rows)
                .ok()
                .is_some_and(|row| quire_dataapi::respond(plan, row).is_ok());
            conn.batch_execute(if keep { "COMMIT" } else { "ROLLBACK" })
                .await
                .map_err(|e| run_error(&e))?;
            conn.clean();
            rows
        };
        plan_row(&rows)
    }
}
