//! The data API's running side, as the gateway sees it: an instance per database on each
//! replica (a small pool as the authenticator role and the schema cache), started on first
//! use and stopped when idle, disabled or deleted. The instances are an adapter's
//! (`quire-data-runtime`); the data API's use cases reach them through [`DataApiRuntime`].

use std::fmt::Debug;
use std::sync::Arc;

use async_trait::async_trait;
use quire_dataapi::{Plan, PlanRow, RestAnswer, RestError, SchemaCache};
use quire_kernel::InfraError;

use crate::keys::KeyRole;
use crate::model::{Database, TenantAccess};
use crate::ports::{DataApiSignals, TenantUsers};

/// What a request of the data API needs of its database: the record, the roles' passwords
/// and the JWT secret, opened. `Debug` shows the slug only.
#[derive(Clone)]
pub struct GatewayTarget {
    pub database: Database,
    pub tenant: TenantAccess,
    pub jwt_secret: String,
    /// The runtime's [`DataApiSignals::stops`] before the record was read: an instance is
    /// never started for a target read before its database's last stop.
    pub stops_seen: u64,
}

impl GatewayTarget {
    /// The schemas the data API exposes, the default first ([`SchemaCache::LOAD_SQL`]'s
    /// parameter): the database's settings'.
    #[must_use]
    pub fn exposed_schemas(&self) -> &[String] {
        &self.database.data_api_settings.exposed_schemas
    }
}

impl Debug for GatewayTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayTarget")
            .field("slug", &self.database.slug)
            .finish_non_exhaustive()
    }
}

/// Why an instance cannot take a request now.
#[derive(Debug, Clone, thiserror::Error)]
pub enum InstanceError {
    /// Still connecting or loading its schema: retry shortly.
    #[error("database starting")]
    Starting,
    /// Its cluster did not answer, or refused the authenticator.
    #[error("upstream unavailable")]
    Unavailable,
    /// The replica holds as many data API connections as the cluster may take, all
    /// busy: retry shortly.
    #[error("too many data API connections")]
    Saturated,
    /// The database's account holds its share of the replica's data API connections, all
    /// busy: retry shortly (other accounts' databases are served meanwhile).
    #[error("too many data API connections for this account")]
    AccountBusy,
}

/// PostgreSQL refused a request's statement (PostgREST answers with its fields).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgRefusal {
    pub sqlstate: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum RunError {
    #[error("PostgreSQL refused the statement ({})", .0.sqlstate)]
    Refused(PgRefusal),
    /// The row came back, and its answer is a refusal (PostgREST's 406 for a singular
    /// answer of other than one row): a write was rolled back.
    #[error("the row's answer is a refusal ({})", .0.code)]
    Answer(RestError),
    #[error(transparent)]
    Instance(#[from] InstanceError),
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// What a request named that the schema cache lacks (PostgREST's `PGRST205`, `PGRST204`
/// and `PGRST202`): which part of the catalog a reload on its account must look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Missing {
    /// A table or view.
    Table,
    /// A column of a table or view the cache has.
    Column,
    /// A function, or one taking the arguments named.
    Function,
}

impl Missing {
    /// The kind PostgREST's `code` says a name was, when it says the cache lacks it.
    #[must_use]
    pub fn of_code(code: &str) -> Option<Self> {
        match code {
            "PGRST205" => Some(Self::Table),
            "PGRST204" => Some(Self::Column),
            "PGRST202" => Some(Self::Function),
            _ => None,
        }
    }
}

/// How a request answers the row its plan returned: PostgREST's answer, or its refusal
/// ([`quire_dataapi::respond`]). The request's use case hands it to the instance, which
/// must know the answer before it ends a write's transaction, so that it runs once.
pub type Respond = fn(&Plan, PlanRow) -> Result<RestAnswer, RestError>;

/// One database's data API on this replica.
#[async_trait]
pub trait DataApiInstance: Send + Sync + Debug {
    fn target(&self) -> &GatewayTarget;

    /// The database's end users (its `auth` schema).
    fn users(&self) -> &dyn TenantUsers;

    /// The schema as last loaded.
    fn schema(&self) -> Arc<SchemaCache>;

    /// A request named a `missing` kind of thing the cache lacks, perhaps just made by DDL
    /// whose notification has not arrived: once this returns, the cache is no older than
    /// the catalog was when it was called, as far as names of that kind go (loaded again
    /// when the catalog says they changed since the last load; at a cost the instance
    /// bounds, however many unknown names clients send).
    async fn reload_schema(&self, missing: Missing);

    /// Runs `plan` in one transaction as `role` (`SET LOCAL ROLE`) with `claims` as
    /// `request.jwt.claims`, a `READ ONLY` one when the plan says so, and answers the row
    /// it returned with `respond`, in the transaction: a write commits only a row that
    /// `respond` answers, as PostgREST does (a read ends either way).
    ///
    /// # Errors
    /// `Refused` with PostgreSQL's error (the transaction rolled back); `Answer` with the
    /// refusal `respond` made of the row (a write rolled back); `Instance` when the
    /// instance cannot take it; `Infra` when the connection failed mid-way.
    async fn run(
        &self,
        role: KeyRole,
        claims: &str,
        plan: &Plan,
        respond: Respond,
    ) -> Result<RestAnswer, RunError>;
}

/// No instances: for a server without a cluster, and for tests of the records alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRuntime;

impl DataApiSignals for NoRuntime {
    fn stop(&self, _id: quire_kernel::DatabaseId) {}
}

#[async_trait]
impl DataApiRuntime for NoRuntime {
    fn fresh(&self, _slug: &str) -> Option<Arc<dyn DataApiInstance>> {
        None
    }

    async fn instance(
        &self,
        _target: GatewayTarget,
    ) -> Result<Arc<dyn DataApiInstance>, InstanceError> {
        Err(InstanceError::Unavailable)
    }
}

/// This replica's data API instances.
#[async_trait]
pub trait DataApiRuntime: DataApiSignals {
    /// The running instance of database `slug`, when this replica has one whose record
    /// it checked within the last second; `None` sends the gateway to the records.
    fn fresh(&self, slug: &str) -> Option<Arc<dyn DataApiInstance>>;

    /// The instance for `target`, started if it is not running (waiting a little for it),
    /// its record taken as checked now.
    ///
    /// # Errors
    /// `Starting` when it is not up within the wait, or when the target was read before
    /// the database's last stop (the record may have changed: a retry reads it again);
    /// `Unavailable` when its cluster does not answer; `Saturated` or `AccountBusy` when
    /// no connection can be had for it.
    async fn instance(
        &self,
        target: GatewayTarget,
    ) -> Result<Arc<dyn DataApiInstance>, InstanceError>;
}

#[cfg(test)]
mod tests {
    use super::Missing;

    #[test]
    fn postgrests_codes_for_what_the_cache_lacks_name_its_kind() {
        assert_eq!(Missing::of_code("PGRST205"), Some(Missing::Table));
        assert_eq!(Missing::of_code("PGRST204"), Some(Missing::Column));
        assert_eq!(Missing::of_code("PGRST202"), Some(Missing::Function));
        for other in ["PGRST100", "PGRST203", "42703", ""] {
            assert_eq!(Missing::of_code(other), None, "{other}");
        }
    }
}
