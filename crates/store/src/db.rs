//! Connection pools for both backends, migrations, readiness, and the two macros that let
//! one query body serve PostgreSQL and SQLite.
//!
//! `with_conn!(self, |conn| body)` checks out a pooled connection and expands `body` once
//! per backend, so each expansion is monomorphic diesel-async code. `with_tx!` does the same
//! inside a transaction (`BEGIN IMMEDIATE` on SQLite, so a write transaction never has to
//! upgrade a read lock and hit `SQLITE_BUSY`).
//!
//! Both run `body` as a task on the multi-threaded runtime the database was opened on, and
//! await its result. A caller whose future is dropped (a client that disconnects, a request
//! whose body is refused while its credential is being checked) therefore never cancels a
//! query halfway: the task finishes on its own. This matters beyond tidiness: the SQLite
//! wrapper guards cancellation with `block_in_place`, which panics on the current-thread
//! runtimes actix-web workers use. The body must own what it captures (`'static`).

use std::path::Path;
use std::time::Duration;

use deadpool::Runtime;
use deadpool::managed::QueueMode;
use diesel::{Connection, SqliteConnection};
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{
    AsyncConnection, AsyncMigrationHarness, AsyncPgConnection, SimpleAsyncConnection,
};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use futures_util::FutureExt;

use crate::error::StoreError;

pub(crate) type SqliteConn = SyncConnectionWrapper<SqliteConnection>;

const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");
/// The SQLite migrations, embedded; public for the tests that migrate step by step.
pub const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");

/// Names of the embedded PostgreSQL migrations, in order.
pub static MIGRATION_NAMES_POSTGRES: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| migration_names(&POSTGRES_MIGRATIONS));
/// Names of the embedded SQLite migrations, in order.
pub static MIGRATION_NAMES_SQLITE: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| migration_names(&SQLITE_MIGRATIONS));

fn migration_names(m: &EmbeddedMigrations) -> Vec<String> {
    use diesel::migration::MigrationSource;
    let list: Vec<Box<dyn diesel::migration::Migration<diesel::pg::Pg>>> =
        MigrationSource::<diesel::pg::Pg>::migrations(m).unwrap_or_default();
    list.iter().map(|m| m.name().to_string()).collect()
}

/// Which database a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// How to reach the database.
#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    /// `sqlite://PATH` or `postgres://…` (`postgresql://` too).
    pub url: String,
    /// Most connections the pool holds.
    pub max_connections: usize,
    /// How long a request waits for a free connection before failing.
    pub acquire_timeout: Duration,
}

impl DatabaseConfig {
    #[must_use]
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            max_connections: 8,
            acquire_timeout: Duration::from_secs(5),
        }
    }
}

pub(crate) enum DbPool {
    Postgres(Pool<AsyncPgConnection>),
    Sqlite(Pool<SqliteConn>),
}

/// What [`Database::pool_status`] reads off the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStatus {
    pub max: usize,
    pub open: usize,
    pub in_use: usize,
    pub waiting: usize,
}

/// The database: a pool over one of the two backends. Cheap to clone.
#[derive(Clone)]
pub struct Database {
    pub(crate) pool: std::sync::Arc<DbPool>,
    pub(crate) runtime: tokio::runtime::Handle,
    url: String,
    /// Seals the keys that sign (server secrets, OAuth keys) at rest; see
    /// [`Database::with_sealing_key`].
    sealing: Option<quire_accounts::SealingKey>,
    #[cfg(feature = "fault-injection")]
    fault: std::sync::Arc<std::sync::Mutex<Option<&'static str>>>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}

fn sqlite_path(url: &str) -> Option<&str> {
    url.strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
}

impl Database {
    /// Builds the pool (connections open lazily, so an unreachable database is reported by
    /// the first query, by [`Database::ping`] and by `/readyz`, not here).
    ///
    /// # Errors
    /// [`StoreError::Pool`] for an unsupported URL scheme or a pool that cannot be built.
    /// Must be called within a multi-threaded tokio runtime: queries run on it.
    pub fn connect(config: &DatabaseConfig) -> Result<Self, StoreError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            StoreError::Pool("Database::connect must run inside a tokio runtime".into())
        })?;
        let url = config.url.clone();
        let pool = if let Some(path) = sqlite_path(&url) {
            if let Some(parent) = Path::new(path).parent()
                && !parent.as_os_str().is_empty()
            {
                std::fs::create_dir_all(parent)
                    .map_err(|e| StoreError::Pool(format!("cannot create {parent:?}: {e}")))?;
            }
            let mut manager_config = ManagerConfig::<SqliteConn>::default();
            manager_config.custom_setup = Box::new(|url| {
                let url = url.to_owned();
                async move {
                    let mut conn = SqliteConn::establish(&url).await?;
                    conn.batch_execute(
                        "PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;",
                    )
                    .await
                    .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
                    Ok(conn)
                }
                .boxed()
            });
            let manager =
                AsyncDieselConnectionManager::<SqliteConn>::new_with_config(path, manager_config);
            DbPool::Sqlite(build_pool(manager, config)?)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new(url.clone());
            DbPool::Postgres(build_pool(manager, config)?)
        } else {
            return Err(StoreError::Pool(
                "database URL must start with sqlite:// or postgres://".into(),
            ));
        };
        Ok(Self {
            pool: std::sync::Arc::new(pool),
            runtime,
            url,
            sealing: None,
            #[cfg(feature = "fault-injection")]
            fault: std::sync::Arc::default(),
        })
    }

    /// The key under which the keys that sign (server secrets, OAuth signing keys) are
    /// sealed at rest, so a copy of the database alone signs nothing. Without it, reading
    /// or writing those is an error.
    #[must_use]
    pub fn with_sealing_key(mut self, key: quire_accounts::SealingKey) -> Self {
        self.sealing = Some(key);
        self
    }

    pub(crate) fn sealing_key(&self) -> Result<quire_accounts::SealingKey, StoreError> {
        self.sealing.clone().ok_or_else(|| {
            StoreError::Sealing("the store was given no sealing key (QUIRE_SECRET_KEY_FILE)".into())
        })
    }

    #[must_use]
    pub fn backend(&self) -> Backend {
        match *self.pool {
            DbPool::Postgres(_) => Backend::Postgres,
            DbPool::Sqlite(_) => Backend::Sqlite,
        }
    }

    /// Applies pending migrations; returns how many ran. Blocks a worker thread while it
    /// runs, so it is done on the blocking pool.
    ///
    /// # Errors
    /// [`StoreError::Migration`] when the database cannot be reached or a migration fails.
    pub async fn migrate(&self) -> Result<usize, StoreError> {
        let url = self.url.clone();
        let backend = self.backend();
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || -> Result<usize, StoreError> {
            let err = |e: &dyn std::fmt::Display| StoreError::Migration(e.to_string());
            match backend {
                Backend::Sqlite => {
                    let path = sqlite_path(&url).unwrap_or(&url);
                    let mut conn = SqliteConnection::establish(path).map_err(|e| err(&e))?;
                    diesel::connection::SimpleConnection::batch_execute(
                        &mut conn,
                        "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;",
                    )
                    .map_err(|e| err(&e))?;
                    let ran = conn
                        .run_pending_migrations(SQLITE_MIGRATIONS)
                        .map_err(|e| err(&e))?;
                    Ok(ran.len())
                }
                Backend::Postgres => {
                    let conn = handle
                        .block_on(AsyncPgConnection::establish(&url))
                        .map_err(|e| err(&e))?;
                    let mut harness = AsyncMigrationHarness::new(conn);
                    let ran = harness
                        .run_pending_migrations(POSTGRES_MIGRATIONS)
                        .map_err(|e| err(&e))?;
                    Ok(ran.len())
                }
            }
        })
        .await
        .map_err(|e| StoreError::Migration(e.to_string()))?
    }

    /// The pool's connections now: how many may be open, are open, and are in use, and how
    /// many callers wait for one.
    #[must_use]
    pub fn pool_status(&self) -> PoolStatus {
        let status = match &*self.pool {
            DbPool::Postgres(pool) => pool.status(),
            DbPool::Sqlite(pool) => pool.status(),
        };
        PoolStatus {
            max: status.max_size,
            open: status.size,
            in_use: status.size.saturating_sub(status.available),
            waiting: status.waiting,
        }
    }

    /// Runs `SELECT 1` on a pooled connection.
    ///
    /// # Errors
    /// [`StoreError`] when no connection can be had or the query fails.
    pub async fn ping(&self) -> Result<(), StoreError> {
        with_conn!(self, |conn| {
            conn.batch_execute("SELECT 1").await?;
            Ok(())
        })
    }

    /// Makes the next transaction that reaches checkpoint `step` fail there (once).
    #[cfg(feature = "fault-injection")]
    pub fn fail_at(&self, step: &'static str) {
        if let Ok(mut f) = self.fault.lock() {
            *f = Some(step);
        }
    }

    /// A named point inside a multi-step transaction where tests may inject a failure.
    #[allow(clippy::unused_self)]
    pub(crate) fn checkpoint(&self, step: &'static str) -> Result<(), StoreError> {
        #[cfg(feature = "fault-injection")]
        if let Ok(mut f) = self.fault.lock()
            && *f == Some(step)
        {
            *f = None;
            return Err(StoreError::Fault(step));
        }
        let _ = step;
        Ok(())
    }
}

fn build_pool<C>(
    manager: AsyncDieselConnectionManager<C>,
    config: &DatabaseConfig,
) -> Result<Pool<C>, StoreError>
where
    C: 'static,
    AsyncDieselConnectionManager<C>: deadpool::managed::Manager,
{
    // Last in, first out: a run of queries (a whole list read a chunk at a time) reuses the
    // connection just returned, whose cache is warm. First in, first out would rotate them
    // over every connection, and SQLite keeps a page cache per connection (2 MiB each).
    Pool::builder(manager)
        .max_size(config.max_connections)
        .queue_mode(QueueMode::Lifo)
        .wait_timeout(Some(config.acquire_timeout))
        .create_timeout(Some(config.acquire_timeout))
        .recycle_timeout(Some(config.acquire_timeout))
        .runtime(Runtime::Tokio1)
        .build()
        .map_err(|e| StoreError::Pool(e.to_string()))
}

/// A connection of `pool`, the wait for it recorded in the metrics
/// (`quire_db_pool_wait_seconds`, and `quire_db_pool_timeouts_total` when none came in time).
pub(crate) async fn checkout<C>(
    pool: &Pool<C>,
) -> Result<diesel_async::pooled_connection::deadpool::Object<C>, StoreError>
where
    C: 'static,
    AsyncDieselConnectionManager<C>: deadpool::managed::Manager,
    deadpool::managed::PoolError<
        <AsyncDieselConnectionManager<C> as deadpool::managed::Manager>::Error,
    >: std::fmt::Display,
{
    let asked = std::time::Instant::now();
    let got = pool.get().await;
    metrics::histogram!("quire_db_pool_wait_seconds").record(asked.elapsed());
    if matches!(got, Err(deadpool::managed::PoolError::Timeout(_))) {
        metrics::counter!("quire_db_pool_timeouts_total").increment(1);
    }
    got.map_err(pool_error)
}

pub(crate) fn pool_error(e: impl std::fmt::Display) -> StoreError {
    StoreError::Pool(e.to_string())
}

pub(crate) fn join_error(e: &tokio::task::JoinError) -> StoreError {
    StoreError::Pool(format!("database task failed: {e}"))
}

/// Runs `work` (a future evaluating to `Result<T, StoreError>`, which may use `$dbv`, an owned
/// clone of the database) as a task on the database's runtime and awaits its result.
macro_rules! on_db_runtime {
    ($db:expr, $dbv:ident, $work:expr) => {{
        let $dbv: $crate::db::Database = $db.clone();
        let runtime = $dbv.runtime.clone();
        runtime
            .spawn(async move {
                let result: Result<_, $crate::error::StoreError> = $work.await;
                result
            })
            .await
            .map_err(|e| $crate::db::join_error(&e))
            .and_then(|r| r)
    }};
}

/// Runs `body` with `conn` bound to a pooled connection of whichever backend is in use, on
/// the database's runtime (see the module doc); `db` may name an owned clone of the
/// [`Database`]. Evaluates to `Result<T, StoreError>`; `?` inside `body` converts diesel errors.
macro_rules! with_conn {
    ($db:expr, |$dbv:ident, $conn:ident| $body:expr) => {
        $crate::db::on_db_runtime!($db, $dbv, async {
            match &*$dbv.pool {
                $crate::db::DbPool::Postgres(pool) => {
                    let mut obj = $crate::db::checkout(pool).await?;
                    let $conn: &mut diesel_async::AsyncPgConnection = &mut *obj;
                    $body
                }
                $crate::db::DbPool::Sqlite(pool) => {
                    let mut obj = $crate::db::checkout(pool).await?;
                    let $conn: &mut $crate::db::SqliteConn = &mut *obj;
                    $body
                }
            }
        })
    };
    ($db:expr, |$conn:ident| $body:expr) => {
        $crate::db::with_conn!($db, |_db, $conn| $body)
    };
}

/// As [`with_conn!`], inside one transaction that commits when `body` returns `Ok` and rolls
/// back otherwise.
macro_rules! with_tx {
    ($db:expr, |$dbv:ident, $conn:ident| $body:expr) => {
        $crate::db::on_db_runtime!($db, $dbv, async {
            match &*$dbv.pool {
                $crate::db::DbPool::Postgres(pool) => {
                    let mut obj = $crate::db::checkout(pool).await?;
                    let conn: &mut diesel_async::AsyncPgConnection = &mut *obj;
                    diesel_async::AsyncConnection::transaction(
                        conn,
                        async |$conn| -> Result<_, $crate::error::StoreError> { $body },
                    )
                    .await
                }
                $crate::db::DbPool::Sqlite(pool) => {
                    let mut obj = $crate::db::checkout(pool).await?;
                    let conn: &mut $crate::db::SqliteConn = &mut *obj;
                    conn.immediate_transaction(
                        async |$conn| -> Result<_, $crate::error::StoreError> { $body },
                    )
                    .await
                }
            }
        })
    };
    ($db:expr, |$conn:ident| $body:expr) => {
        $crate::db::with_tx!($db, |_db, $conn| $body)
    };
}

pub(crate) use {on_db_runtime, with_conn, with_tx};
