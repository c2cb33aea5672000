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
//! grace does; the owner may change it, the terminate is the guarantee. The data API ends
//! the backends its requests leave with the same [`Terminator`], through the cluster's
//! `TenantBackends`.

use std::sync::Arc;
use std::time::Duration;

use quire_databases::{BACKEND_IDENTITY_SQL, TenantBackend};
use quire_kernel::InfraError;
use tokio::task::JoinHandle;
use tokio_postgres::{CancelToken, Client, Config, NoTls};

use crate::conn::{AdminPool, drive};
use crate::error::{infra, timed_out};

/// How long a settled session waits for its driver to say goodbye (`Terminate`) before it
/// aborts it.
const FINISH_WAIT: Duration = Duration::from_secs(1);

/// How long a terminate waits for its backend to be gone (PostgreSQL 14 and later), so
/// that whoever asked may count it as gone.
const TERMINATE_WAIT_MS: i64 = 5_000;

/// Ends one backend, if it is still that session of that role, and waits for it to go.
/// Its start reads as [`BACKEND_IDENTITY_SQL`] reads it.
const TERMINATE: &str = "SELECT pg_terminate_backend(pid, $4) FROM pg_stat_activity \
     WHERE pid = $1 AND usename = $2 \
       AND (date_part('epoch', backend_start) * 1000000)::int8 = $3";

/// [`TERMINATE`] before PostgreSQL 14, which cannot wait.
const TERMINATE_AT_ONCE: &str = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
     WHERE pid = $1 AND usename = $2 \
       AND (date_part('epoch', backend_start) * 1000000)::int8 = $3";

/// PostgreSQL 14 brought `pg_terminate_backend`'s wait.
const TERMINATE_WAITS_SINCE: i32 = 140_000;

/// Admin connections kept for ending tenants' backends, and whether the server can wait for
/// one to be gone.
#[derive(Debug, Clone)]
pub(crate) struct Terminator {
    pub admin: Arc<AdminPool>,
    pub server_version: i32,
}

impl Terminator {
    /// Terminates `backend` if it is still that session of that role; whether there was one.
    pub(crate) async fn terminate(&self, backend: &TenantBackend) -> Result<bool, InfraError> {
        const WHAT: &str = "ending a tenant's session left running";
        let mut conn = self.admin.get().await?;
        let rows = if self.server_version >= TERMINATE_WAITS_SINCE {
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] = [
                &backend.pid,
                &backend.role,
                &backend.started,
                &TERMINATE_WAIT_MS,
            ];
            conn.query(WHAT, TERMINATE, &params).await?
        } else {
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
                [&backend.pid, &backend.role, &backend.started];
            conn.query(WHAT, TERMINATE_AT_ONCE, &params).await?
        };
        Ok(!rows.is_empty())
    }
}

/// What ending a session's backend from outside takes.
#[derive(Debug, Clone)]
pub(crate) struct Reaper {
    pub terminator: Terminator,
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
    started: i64,
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
                started: 0,
            },
            driver: tokio::spawn(drive(connection)),
            settled: true,
            reaper,
        };
        let rows =
            match tokio::time::timeout(deadline, client.query_typed(BACKEND_IDENTITY_SQL, &[]))
                .await
            {
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
    let named = TenantBackend {
        role: reaper.role,
        pid: backend.pid,
        started: backend.started,
    };
    match reaper.terminator.terminate(&named).await {
        Ok(true) => tracing::info!(
            role = %named.role,
            pid = named.pid,
            "ended an owner's SQL session that outlived its request"
        ),
        Ok(false) => {}
        Err(e) => tracing::warn!(
            role = %named.role,
            pid = named.pid,
            error = %e,
            "could not end an owner's SQL session that outlived its request; the janitor's \
             sweep will"
        ),
    }
}
