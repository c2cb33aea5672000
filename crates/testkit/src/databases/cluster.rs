//! The `Cluster` port in memory, with the real cluster's rules for what exists (a role or
//! database made twice is refused, a database needs its owner, a drop undoes any prefix of
//! a creation); and a decorator that makes one step of any cluster go wrong.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use quire_databases::{
    Cluster, ClusterError, OpenTable, SqlOutcome, SqlRefusal, TenantAccess, TenantNames,
};
use quire_kernel::InfraError;
use tokio::sync::Barrier;

/// The size every database of a [`MemoryCluster`] has unless a test says otherwise: about
/// an empty PostgreSQL database's.
pub const EMPTY_DATABASE_BYTES: u64 = 8_000_000;

/// A database of the fake cluster.
#[derive(Debug, Clone)]
struct Made {
    owner: String,
    prepared: bool,
}

#[derive(Debug, Default)]
struct State {
    roles: HashSet<String>,
    databases: HashMap<String, Made>,
    sql: Vec<(String, String)>,
    answers: VecDeque<Result<SqlOutcome, SqlRefusal>>,
    reloads: Vec<String>,
    /// Each database's open tables, as a test says; none unless it does.
    open: HashMap<String, Vec<OpenTable>>,
    /// Databases whose open tables cannot be read.
    unreadable: HashSet<String>,
}

/// A PostgreSQL cluster in memory: its roles and databases, the SQL each database was
/// given (answered as a test scripts it, else with no rows), the reloads announced and the
/// tables each leaves open to `anon` (as a test says them).
/// Every database is [`EMPTY_DATABASE_BYTES`] big, or as [`MemoryCluster::with_size`] says.
#[derive(Debug)]
pub struct MemoryCluster {
    state: Mutex<State>,
    size: u64,
    /// Size reads wait for each other, this many at a time.
    meet: Option<Barrier>,
}

impl Default for MemoryCluster {
    fn default() -> Self {
        Self::new()
    }
}

fn refused(what: impl Into<String>) -> InfraError {
    InfraError::new(what.into())
}

impl MemoryCluster {
    #[must_use]
    pub fn new() -> Self {
        Self {
            state: Mutex::default(),
            size: EMPTY_DATABASE_BYTES,
            meet: None,
        }
    }

    /// Every database is `bytes` big.
    #[must_use]
    pub fn with_size(mut self, bytes: u64) -> Self {
        self.size = bytes;
        self
    }

    /// Each read of the sizes waits until `parties` reads are waiting, then all go on: so
    /// that racing use cases all read the figures before any of them writes.
    #[must_use]
    pub fn meeting_at_sizes(mut self, parties: usize) -> Self {
        self.meet = Some(Barrier::new(parties));
        self
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state.lock().expect("cluster lock"))
    }

    /// The databases that exist, by name, sorted.
    #[must_use]
    pub fn databases(&self) -> Vec<String> {
        let mut names: Vec<String> = self.with(|s| s.databases.keys().cloned().collect());
        names.sort();
        names
    }

    /// Whether the roles or the database of `names` exist: what a drop must leave none of.
    #[must_use]
    pub fn holds_any_of(&self, names: &TenantNames) -> bool {
        self.with(|s| {
            s.databases.contains_key(&names.database)
                || s.roles.contains(&names.owner_role)
                || s.roles.contains(&names.authenticator_role)
        })
    }

    /// The next `run_sql` answers `answer` (a refusal is PostgreSQL's).
    pub fn answer_sql(&self, answer: Result<SqlOutcome, SqlRefusal>) {
        self.with(|s| s.answers.push_back(answer));
    }

    /// Database `names` leaves `tables` open to `anon` from now on (what its SQL made).
    pub fn open_tables_in(&self, names: &TenantNames, tables: Vec<OpenTable>) {
        self.with(|s| s.open.insert(names.database.clone(), tables));
    }

    /// Whether the open tables of database `names` can be read (its owner's connection
    /// limit reached, say).
    pub fn open_tables_unreadable(&self, names: &TenantNames, unreadable: bool) {
        self.with(|s| {
            if unreadable {
                s.unreadable.insert(names.database.clone());
            } else {
                s.unreadable.remove(&names.database);
            }
        });
    }

    /// The SQL given to each database, oldest first: `(database, sql)`.
    #[must_use]
    pub fn sql_run(&self) -> Vec<(String, String)> {
        self.with(|s| s.sql.clone())
    }

    /// The databases a reload was announced in, oldest first.
    #[must_use]
    pub fn reloads(&self) -> Vec<String> {
        self.with(|s| s.reloads.clone())
    }

    /// What database `names` leaves open, unless it cannot be read.
    fn open_in(s: &State, names: &TenantNames) -> Option<Vec<OpenTable>> {
        if s.unreadable.contains(&names.database) {
            return None;
        }
        Some(s.open.get(&names.database).cloned().unwrap_or_default())
    }

    /// The database of `names`, made and prepared.
    fn ready(s: &State, names: &TenantNames) -> Result<(), InfraError> {
        match s.databases.get(&names.database) {
            Some(made) if made.prepared && s.roles.contains(&made.owner) => Ok(()),
            Some(_) => Err(refused(format!("{} is not prepared", names.database))),
            None => Err(refused(format!(
                "database \"{}\" does not exist",
                names.database
            ))),
        }
    }
}

#[async_trait]
impl Cluster for MemoryCluster {
    async fn create_roles(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        let names = &tenant.names;
        self.with(|s| {
            for role in [&names.owner_role, &names.authenticator_role] {
                if s.roles.contains(role) {
                    return Err(refused(format!("role \"{role}\" already exists")));
                }
            }
            s.roles.insert(names.owner_role.clone());
            s.roles.insert(names.authenticator_role.clone());
            Ok(())
        })
    }

    async fn create_database(&self, names: &TenantNames) -> Result<(), InfraError> {
        self.with(|s| {
            if s.databases.contains_key(&names.database) {
                return Err(refused(format!(
                    "database \"{}\" already exists",
                    names.database
                )));
            }
            if !s.roles.contains(&names.owner_role) {
                return Err(refused(format!(
                    "role \"{}\" does not exist",
                    names.owner_role
                )));
            }
            s.databases.insert(
                names.database.clone(),
                Made {
                    owner: names.owner_role.clone(),
                    prepared: false,
                },
            );
            Ok(())
        })
    }

    async fn prepare_database(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        let names = &tenant.names;
        self.with(|s| match s.databases.get_mut(&names.database) {
            Some(made) => {
                made.prepared = true;
                Ok(())
            }
            None => Err(refused(format!(
                "database \"{}\" does not exist",
                names.database
            ))),
        })
    }

    async fn drop_tenant(&self, names: &TenantNames) -> Result<(), InfraError> {
        self.with(|s| {
            s.databases.remove(&names.database);
            s.roles.remove(&names.owner_role);
            s.roles.remove(&names.authenticator_role);
        });
        Ok(())
    }

    async fn run_sql(
        &self,
        tenant: &TenantAccess,
        sql: &str,
        _max_rows: usize,
    ) -> Result<SqlOutcome, ClusterError> {
        self.with(|s| {
            Self::ready(s, &tenant.names)?;
            s.sql.push((tenant.names.database.clone(), sql.to_owned()));
            let open = Self::open_in(s, &tenant.names);
            match s.answers.pop_front() {
                Some(Ok(outcome)) => Ok(SqlOutcome {
                    open_tables: open,
                    ..outcome
                }),
                Some(Err(refusal)) => Err(ClusterError::Refused(refusal)),
                None => Ok(SqlOutcome {
                    columns: Vec::new(),
                    rows: Vec::new(),
                    row_count: 0,
                    open_tables: open,
                }),
            }
        })
    }

    async fn open_tables(&self, tenants: &[TenantAccess]) -> HashMap<String, Vec<OpenTable>> {
        self.with(|s| {
            tenants
                .iter()
                .filter(|t| Self::ready(s, &t.names).is_ok())
                .filter_map(|t| Some((t.names.database.clone(), Self::open_in(s, &t.names)?)))
                .collect()
        })
    }

    async fn announce_reload(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        self.with(|s| {
            Self::ready(s, &tenant.names)?;
            s.reloads.push(tenant.names.database.clone());
            Ok(())
        })
    }

    async fn sizes(&self, names: &[TenantNames]) -> Result<HashMap<String, u64>, InfraError> {
        if let Some(meet) = &self.meet {
            meet.wait().await;
        }
        Ok(self.with(|s| {
            names
                .iter()
                .filter(|n| s.databases.contains_key(&n.database))
                .map(|n| (n.database.clone(), self.size))
                .collect()
        }))
    }
}

/// A step of a creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterStep {
    Roles,
    Database,
    Prepare,
}

/// How a step goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The step did its work, then reported a failure (the worst case for an undo).
    AfterWork,
    /// The step never returns: the request dies there.
    Hang,
}

/// Any cluster, with one step of a creation made to go wrong; it remembers the names it
/// was given, in order.
#[derive(Debug)]
pub struct FaultyCluster {
    inner: Arc<dyn Cluster>,
    at: Option<(ClusterStep, Fault)>,
    names: Mutex<Vec<TenantNames>>,
}

impl FaultyCluster {
    /// `inner`, its step `at` going wrong (`None`: none does).
    #[must_use]
    pub fn new(inner: Arc<dyn Cluster>, at: Option<(ClusterStep, Fault)>) -> Self {
        Self {
            inner,
            at,
            names: Mutex::new(Vec::new()),
        }
    }

    /// The names of each tenant whose roles it was asked to make, oldest first.
    #[must_use]
    pub fn names(&self) -> Vec<TenantNames> {
        self.names.lock().expect("names lock").clone()
    }

    async fn step(&self, step: ClusterStep) -> Result<(), InfraError> {
        match self.at {
            Some((s, Fault::AfterWork)) if s == step => {
                Err(InfraError::new(format!("injected failure after {step:?}")))
            }
            Some((s, Fault::Hang)) if s == step => std::future::pending().await,
            _ => Ok(()),
        }
    }
}

#[async_trait]
impl Cluster for FaultyCluster {
    async fn create_roles(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        self.names
            .lock()
            .expect("names lock")
            .push(tenant.names.clone());
        self.inner.create_roles(tenant).await?;
        self.step(ClusterStep::Roles).await
    }

    async fn create_database(&self, names: &TenantNames) -> Result<(), InfraError> {
        self.inner.create_database(names).await?;
        self.step(ClusterStep::Database).await
    }

    async fn prepare_database(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        self.inner.prepare_database(tenant).await?;
        self.step(ClusterStep::Prepare).await
    }

    async fn drop_tenant(&self, names: &TenantNames) -> Result<(), InfraError> {
        self.inner.drop_tenant(names).await
    }

    async fn run_sql(
        &self,
        tenant: &TenantAccess,
        sql: &str,
        max_rows: usize,
    ) -> Result<SqlOutcome, ClusterError> {
        self.inner.run_sql(tenant, sql, max_rows).await
    }

    async fn end_abandoned_sessions(&self) -> Result<u64, InfraError> {
        self.inner.end_abandoned_sessions().await
    }

    async fn open_tables(&self, tenants: &[TenantAccess]) -> HashMap<String, Vec<OpenTable>> {
        self.inner.open_tables(tenants).await
    }

    async fn announce_reload(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        self.inner.announce_reload(tenant).await
    }

    async fn sizes(&self, names: &[TenantNames]) -> Result<HashMap<String, u64>, InfraError> {
        self.inner.sizes(names).await
    }
}
