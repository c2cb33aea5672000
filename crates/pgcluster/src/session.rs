//! A connection as a database's owner that always ends, and ends its backend with it.
//!
//! The owner's SQL is the tenant's: it may leave the connection waiting for copy data, or
//! catch the cancel of a query Quire gave up on and go on running (`statement_timeout` is
//! the owner's to lift, `query_canceled` PL/pgSQL's to catch). So an [`OwnerSession`]
//! drives its connection on a task it owns, and when it is dropped before the server
//! answered everything asked (an error, the deadline, the request dropped because its
//! client went away), it aborts that task, which closes the socket, and hands the backend
//! to a reaper: a cancel, a short grace, then `pg_terminate_backend` from an admin
//! connection, which PL/pgSQL cannot catch. The backend is named by its pid and start
//! time, read when the session opens, so a pid the system gave to a newer backend is left
//! alone. `client_connection_check_interval` on the owner's connections (see
//! [`crate::PgCluster::tenant_config`]) usually ends a backend whose socket closed before the
//! grace does; the owner may change it, the terminate is the guarantee.

use std::sync::Arc;
use std::time::Duration;

use quire_kernel::InfraError;
use tokio::task::JoinHandle;
use tokio_postgres::{CancelToken, Client, Config, NoTls};

use crate::conn::{AdminPool, drive};
use crate::error::{infra, timed_out};

/// How long a settled session waits for its driver to say goodbye (`Terminate`) before it
/// aborts it.
const FINISH_WAIT: Duration = Duration::from_secs(1);

/// The backend's pid and start time (seconds since the epoch, as the server computes them
/// for both reads), from the backend itself. Schema-qualified throughout: the owner may put
/// objects of its own ahead of `pg_catalog` in its `search_path`.
const WHO_AM_I: &str = "SELECT pg_catalog.pg_backend_pid(), \
     pg_catalog.date_part('epoch', backend_start) FROM pg_catalog.pg_stat_activity \
     WHERE pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()";

/// Ends one backend, if it is still that session of that role.
const TERMINATE: &str = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
     WHERE pid = $1 AND usename = $2 AND date_part('epoch', backend_start) = $3";

/// What ending a session's backend from outside takes.
#[derive(Debug, Clone)]
pub(crate) struct Reaper {
    pub admin: Arc<AdminPool>,
    pub role: String,
    pub grace: Duration,
}

/// A connection as a database's owner, driven until this is dropped; see the module.
#[derive(Debug)]
pub(crate) struct OwnerSession {
    client: Client,
    guard: Guard,
}

/// Ends the driver when dropped, and the backend too unless the server had answered all
/// that was asked.
struct Guard {
    driver: JoinHandle<()>,
    settled: bool,
    backend: Backend,
    reaper: Reaper,
}

#[derive(Clone)]
struct Backend {
    cancel: CancelToken,
    pid: i32,
    started: f64,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("pid", &self.backend.pid)
            .field("settled", &self.settled)
            .finish_non_exhaustive()
    }
}

/// Why a session did not open.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// Connecting failed (the password, the role's connection limit, the cluster).
    Connect(InfraError),
    /// The owner's own settings refused the one statement the session runs first.
    Refused(tokio_postgres::Error),
}

impl OwnerSession {
    /// Connects with `config` and reads who the backend is, within `deadline`.
    pub(crate) async fn open(
        config: &Config,
        what: &str,
        reaper: Reaper,
        deadline: Duration,
    ) -> Result<Self, OpenError> {
        let (client, connection) = tokio::time::timeout(deadline, config.connect(NoTls))
            .await
            .map_err(|_| OpenError::Connect(timed_out(what, deadline)))?
            .map_err(|e| OpenError::Connect(infra(what, &e)))?;
        // Until the pid is known there is nothing to reap by: the guard only ends the driver.
        let mut guard = Guard {
            backend: Backend {
                cancel: client.cancel_token(),
                pid: 0,
                started: 0.0,
            },
            driver: tokio::spawn(drive(connection)),
            settled: true,
            reaper,
        };
        let rows = match tokio::time::timeout(deadline, client.query_typed(WHO_AM_I, &[])).await {
            Ok(Ok(rows)) => rows,
            Ok(Err(e)) if e.as_db_error().is_some() => return Err(OpenError::Refused(e)),
            Ok(Err(e)) => return Err(OpenError::Connect(infra(what, &e))),
            Err(_) => return Err(OpenError::Connect(timed_out(what, deadline))),
        };
        let row = rows.first().ok_or_else(|| {
            OpenError::Connect(InfraError::new(
                "an owner's session is missing from pg_stat_activity",
            ))
        })?;
        let read = |e: tokio_postgres::Error| OpenError::Connect(infra(what, &e));
        guard.backend.pid = row.try_get(0).map_err(read)?;
        guard.backend.started = row.try_get(1).map_err(read)?;
        Ok(Self { client, guard })
    }

    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// Something is asked of the server: until [`Self::settle`], dropping the session ends
    /// the backend from outside.
    pub(crate) fn begin(&mut self) {
        self.guard.settled = false;
    }

    /// The server has answered all that was asked: the backend is idle.
    pub(crate) fn settle(&mut self) {
        self.guard.settled = true;
    }

    /// Whether the server has answered all that was asked.
    pub(crate) fn settled(&self) -> bool {
        self.guard.settled
    }

    /// Closes the connection politely (`Terminate`), unless it takes long; then as a drop.
    pub(crate) async fn finish(self) {
        let Self { client, mut guard } = self;
        drop(client);
        let _ = tokio::time::timeout(FINISH_WAIT, &mut guard.driver).await;
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.driver.abort();
        if self.settled {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(reap(self.backend.clone(), self.reaper.clone()));
        }
    }
}

/// Ends a backend left running: a cancel (which also ends a query that honours it), the
/// grace, then a terminate if the backend is still there.
async fn reap(backend: Backend, reaper: Reaper) {
    let _ = backend.cancel.cancel_query(NoTls).await;
    tokio::time::sleep(reaper.grace).await;
    let ended = async {
        let mut conn = reaper.admin.get().await?;
        conn.query(
            "ending an owner's session left running",
            TERMINATE,
            &[&backend.pid, &reaper.role, &backend.started],
        )
        .await
    };
    match ended.await {
        Ok(rows) if rows.first().is_some_and(|r| r.get::<_, bool>(0)) => tracing::info!(
            role = %reaper.role,
            pid = backend.pid,
            "ended an owner's SQL session that outlived its request"
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!(
            role = %reaper.role,
            pid = backend.pid,
            error = %e,
            "could not end an owner's SQL session that outlived its request; the janitor's \
             sweep will"
        ),
    }
}
