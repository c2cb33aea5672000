//! What the data API needs of the rest: the stops its running instances must hear at
//! once, the cluster's hand to end a tenant's backend they let go of, and who a Quire key
//! is, for a request that presents one.

use std::fmt::Debug;

use async_trait::async_trait;
use quire_kernel::{DatabaseId, InfraError, Principal};

/// What this replica's running data API instances must hear at once (other replicas
/// read the records).
pub trait DataApiSignals: Send + Sync + Debug {
    /// The database's data API was turned off, or the database is going, or its secret
    /// changed: stop serving it, and refuse a target read before this call
    /// ([`DataApiSignals::stops`]).
    fn stop(&self, id: DatabaseId);

    /// How many stops this replica has heard so far, read before a database's record is:
    /// a target whose record was read before its database's last stop is stale (it may
    /// hold the secret the stop was for). A runtime that keeps no instances has none.
    fn stops(&self) -> u64 {
        0
    }
}

/// Who a backend is, read by the session itself at connect (one row: the pid, and
/// `backend_start` in microseconds since the epoch), so that a pid the system gave to a newer
/// backend since is never taken for it. Schema-qualified throughout: a tenant may put
/// objects of its own ahead of `pg_catalog` in the `search_path` of its database.
pub const BACKEND_IDENTITY_SQL: &str = "SELECT pg_catalog.pg_backend_pid(), \
     (pg_catalog.date_part('epoch', backend_start) OPERATOR(pg_catalog.*) 1000000)\
     ::pg_catalog.int8 FROM pg_catalog.pg_stat_activity \
     WHERE pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()";

/// A backend of one of a tenant's roles, as [`BACKEND_IDENTITY_SQL`] named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantBackend {
    pub role: String,
    pub pid: i32,
    /// `backend_start`, in microseconds since the epoch.
    pub started: i64,
}

/// Ends a tenant's backend from outside, which no exception handler of the tenant's
/// catches: what the data API asks of the cluster's adapter for a connection it let go of
/// before the server had answered (a request dropped, or past its deadline).
#[async_trait]
pub trait TenantBackends: Send + Sync + Debug {
    /// Terminates `backend` if it is still that session of that role, and waits a little
    /// for it to be gone; whether there was one to end.
    ///
    /// # Errors
    /// The cluster failed.
    async fn terminate(&self, backend: &TenantBackend) -> Result<bool, InfraError>;
}

/// Who a Quire key (`qk_…`) is, for a data API request that presents one instead of the
/// database's keys: the keys service's answer, reached through the gateway that has it.
#[async_trait]
pub trait QuireKeys: Send + Sync + Debug {
    /// The principal of `key` when it is a live key of an activated account; `None` for
    /// any other credential. A store that failed is `None` too: the request is refused as
    /// with an invalid key, which a retry may pass.
    async fn principal(&self, key: &str) -> Option<Principal>;
}
