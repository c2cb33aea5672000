//! [`PgCluster`]: the `Cluster` port on one PostgreSQL cluster.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use quire_databases::{
    AUTH_SCHEMA_SQL, Cluster, ClusterError, OpenTable, SqlOutcome, TenantAccess, TenantBackend,
    TenantBackends, TenantNames,
};
use quire_kernel::{InfraError, InfraKind};
use tokio_postgres::Config;

use crate::conn::{AdminPool, check_transport, open, within};
use crate::error::{cluster_trouble, refusal, sqlstate_of};
use crate::provision::{
    EVENT_TRIGGER_SQL, SIZES_SQL, create_database_sql, database_access_sql, drop_database_sql,
    drop_roles_sql, grants_sql,
};
use crate::roles::{
    AdminRole, create_roles_sql, ensure_shared_roles, inspect_admin, restore_passwords_sql,
};
use crate::session::{OpenError, OwnerSession, Reaper, Terminator};
use crate::settings::PgClusterSettings;

/// Connections kept for ending tenants' sessions (the owner's SQL, the data API's): apart
/// from provisioning's, so a burst of abandoned queries never waits behind a `CREATE
/// DATABASE`, nor the other way round.
const REAPER_CONNECTIONS: usize = 2;

/// Which of a database's two login roles a connection is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TenantRole {
    /// Owns everything in the database; runs the SQL of `POST …/query`.
    Owner,
    /// `NOINHERIT`, a member of `anon`, `authenticated` and `service_role`: what the data
    /// API connects as, switching role per request with `SET LOCAL ROLE`.
    Authenticator,
}

/// The database service's PostgreSQL cluster, reached with an admin role that has
/// `CREATEDB` and `CREATEROLE` (or is a superuser).
#[derive(Debug)]
pub struct PgCluster {
    admin: AdminPool,
    /// Ends tenants' sessions left running: for the owner's sessions' own tasks, the data
    /// API ([`TenantBackends`]) and the sweep.
    terminator: Terminator,
    role: AdminRole,
    settings: PgClusterSettings,
}

impl PgCluster {
    /// Connects to the cluster named by `url` (`QUIRE_DATABASES_URL`: a URL or `key=value`
    /// string as libpq takes them; `host=/path/to/dir` for a unix socket), checks the
    /// role's attributes, and creates the shared roles `anon`, `authenticated` and
    /// `service_role` where missing.
    ///
    /// # Errors
    /// The URL does not parse or asks for TLS (not supported yet); the cluster does not
    /// answer; the role lacks `CREATEDB`/`CREATEROLE`; the shared roles are missing and the
    /// role may not create `service_role BYPASSRLS` (the message holds the SQL a superuser
    /// runs once). Owner roles whose connection limit could not be brought up to date are
    /// only logged.
    pub async fn connect(url: &str, settings: PgClusterSettings) -> Result<Self, InfraError> {
        let mut config: Config = url.parse().map_err(|e| {
            InfraError::new(format!(
                "QUIRE_DATABASES_URL is not a PostgreSQL connection string: {e}"
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(settings.connect_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("quire");
        }
        check_transport(&config)?;
        let reaper = Arc::new(AdminPool::new(
            config.clone(),
            REAPER_CONNECTIONS,
            settings.admin_deadline,
        ));
        let admin = AdminPool::new(config, settings.admin_connections, settings.admin_deadline);
        let role = {
            let mut conn = admin.get().await?;
            let role = inspect_admin(&mut conn).await?;
            ensure_shared_roles(&mut conn, &role).await?;
            role
        };
        if !role.superuser {
            tracing::info!(
                role = %role.name,
                "the database service's admin role is no superuser: databases get no DDL \
                 event trigger, so their data API loads a new schema only on request \
                 (POST …/reload) or when a request names what its cache lacks"
            );
        }
        if role.server_version < CHECK_INTERVAL_SINCE {
            tracing::warn!(
                version = role.server_version,
                "the database service's cluster is older than PostgreSQL 14: a query of an \
                 owner whose client has gone runs on until Quire terminates it"
            );
        }
        match crate::sweep::keep_connection_limits(&admin, &settings).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                roles = n,
                limit = settings.owner_connection_limit,
                "gave database owner roles the configured connection limit"
            ),
            Err(e) => tracing::warn!(
                error = %e,
                "database owner roles' connection limits were not brought up to date"
            ),
        }
        Ok(Self {
            admin,
            terminator: Terminator {
                admin: reaper,
                server_version: role.server_version,
            },
            role,
            settings,
        })
    }

    /// How to connect to a tenant's database as one of its roles: the cluster's host, port
    /// and connection options, that database, that role and its password. For the data API
    /// (pools as the authenticator) and for tests.
    ///
    /// The owner's connections also carry, as startup options (which outrank any role
    /// setting the owner makes), `standard_conforming_strings` on, so the server reads
    /// strings as [`crate::split`] does, and `client_connection_check_interval`.
    #[must_use]
    pub fn tenant_config(&self, tenant: &TenantAccess, role: TenantRole) -> Config {
        let mut config = self.admin.config().clone();
        config.dbname(&tenant.names.database);
        match role {
            TenantRole::Owner => {
                let mut options = config.get_options().unwrap_or_default().to_owned();
                options.push_str(" -c standard_conforming_strings=on");
                if let Some(check) = self.client_check_interval() {
                    let check = check.as_millis().max(1);
                    options.push_str(&format!(" -c client_connection_check_interval={check}"));
                }
                config
                    .user(&tenant.names.owner_role)
                    .password(&tenant.owner_password)
                    .application_name("quire-sql")
                    .options(options.trim_start())
            }
            TenantRole::Authenticator => config
                .user(&tenant.names.authenticator_role)
                .password(&tenant.authenticator_password)
                .application_name("quire-data-api"),
        };
        config
    }

    /// `client_connection_check_interval` for tenants' connections, when the cluster has
    /// it (PostgreSQL 14 and later) and it is not turned off: the owner's carry it, and so
    /// should the data API's.
    #[must_use]
    pub fn client_check_interval(&self) -> Option<std::time::Duration> {
        let every = self.settings.client_check_interval;
        (self.role.server_version >= CHECK_INTERVAL_SINCE && !every.is_zero()).then_some(every)
    }

    /// The admin role's connection settings with no database role in them: host, port,
    /// options. What `quire-data-runtime` takes as its base.
    #[must_use]
    pub fn base_config(&self) -> Config {
        self.admin.config().clone()
    }

    /// Whether the admin role is a superuser, hence whether new databases get the event
    /// trigger that announces DDL to the data API.
    #[must_use]
    pub fn announces_ddl(&self) -> bool {
        self.role.superuser
    }

    #[must_use]
    pub fn settings(&self) -> &PgClusterSettings {
        &self.settings
    }

    /// Sets both roles' passwords to the stored ones again. Any role may change its own
    /// password (`ALTER ROLE current_user PASSWORD …`), so a tenant's SQL can make the
    /// stored ones stale; the owner's connections repair this themselves, and the data API
    /// may call this when the authenticator is refused its password (SQLSTATE 28P01).
    ///
    /// # Errors
    /// The cluster failed or refused (the roles are gone).
    pub async fn restore_passwords(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        let sql = restore_passwords_sql(tenant)?;
        let mut conn = self.admin.get().await?;
        conn.batch("restoring a database's role passwords", &sql)
            .await
    }

    /// A session as the owner (see [`crate::session`]), repairing a password the owner
    /// changed.
    pub(crate) async fn owner_session(
        &self,
        tenant: &TenantAccess,
    ) -> Result<OwnerSession, ClusterError> {
        let config = self.tenant_config(tenant, TenantRole::Owner);
        const WHAT: &str = "connecting as the database's owner";
        let reaper = Reaper {
            terminator: self.terminator.clone(),
            role: tenant.names.owner_role.clone(),
            grace: self.settings.sql_cancel_grace,
        };
        let deadline = self.settings.connect_timeout;
        let opened = match OwnerSession::open(&config, WHAT, reaper.clone(), deadline).await {
            Err(OpenError::Connect(e)) if sqlstate_of(&e) == Some("28P01") => {
                tracing::warn!(
                    role = %tenant.names.owner_role,
                    "a database's owner no longer has its stored password; restoring it"
                );
                self.restore_passwords(tenant).await?;
                OwnerSession::open(&config, WHAT, reaper, deadline).await
            }
            other => other,
        };
        opened.map_err(|e| match e {
            OpenError::Connect(e) if owner_limit_reached(&e) => ClusterError::Busy(
                "this database has as many connections open as it may (its owner's \
                 connection limit): try again when a query has ended"
                    .into(),
            ),
            OpenError::Connect(e) => ClusterError::Infra(e),
            OpenError::Refused(e) => match e.as_db_error() {
                Some(db) if !cluster_trouble(db.code().code()) => {
                    ClusterError::Refused(refusal(db))
                }
                _ => ClusterError::Infra(crate::error::infra(WHAT, &e)),
            },
        })
    }

    /// The owner's SQL, once [`crate::copy`] has looked at it.
    async fn run_checked_sql(
        &self,
        tenant: &TenantAccess,
        sql: &str,
        max_rows: usize,
    ) -> Result<SqlOutcome, ClusterError> {
        let mut session = self.owner_session(tenant).await?;
        let deadline = self.settings.sql_deadline();
        let mut outcome = crate::run::run_sql(&mut session, sql, max_rows, deadline).await;
        if let Ok(done) = &mut outcome
            && session.settled()
        {
            done.open_tables = crate::open::after_sql(&mut session).await;
        }
        // Dropped unsettled (an error, the deadline, or this future dropped), the session
        // ends its backend itself.
        if session.settled() {
            session.finish().await;
        }
        outcome
    }

    /// A session as the owner for one of Quire's own steps, whose failures are Quire's.
    async fn owner_step_session(&self, tenant: &TenantAccess) -> Result<OwnerSession, InfraError> {
        self.owner_session(tenant).await.map_err(|e| match e {
            ClusterError::Infra(e) => e,
            other => InfraError::caused_by(InfraKind::Unavailable, other),
        })
    }
}

/// PostgreSQL 14 brought `client_connection_check_interval`.
const CHECK_INTERVAL_SINCE: i32 = 140_000;

/// Whether connecting failed on the role's `CONNECTION LIMIT` (SQLSTATE 53300 is also the
/// whole cluster's `max_connections`, which is the operator's trouble, not the tenant's).
fn owner_limit_reached(e: &InfraError) -> bool {
    sqlstate_of(e) == Some("53300") && e.to_string().contains("for role")
}

#[async_trait]
impl Cluster for PgCluster {
    async fn create_roles(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        let sql = create_roles_sql(tenant, &self.role, &self.settings)?;
        let mut conn = self.admin.get().await?;
        conn.batch("creating a database's roles", &sql).await
    }

    async fn create_database(&self, names: &TenantNames) -> Result<(), InfraError> {
        let mut conn = self.admin.get().await?;
        conn.batch("creating a database", &create_database_sql(names)?)
            .await?;
        conn.batch(
            "granting access to a database",
            &database_access_sql(names, &self.settings.timeouts)?,
        )
        .await
    }

    async fn prepare_database(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        let names = &tenant.names;
        let mut config = self.admin.config().clone();
        config.dbname(&names.database);
        let client = open(&config, "connecting to a new database as the admin role").await?;
        let mut sql = grants_sql(names)?;
        if self.role.superuser {
            sql.push_str(EVENT_TRIGGER_SQL);
        }
        within(
            &client,
            self.admin.deadline(),
            "preparing a database",
            client.batch_execute(&sql),
        )
        .await?;
        // The `auth` schema belongs to the owner, so the owner makes it.
        let mut owner = self.owner_step_session(tenant).await?;
        let auth = format!("BEGIN;\n{AUTH_SCHEMA_SQL}\nCOMMIT;");
        owner.begin();
        let client = owner.client();
        within(
            client,
            self.settings.sql_deadline(),
            "making a database's auth schema",
            client.batch_execute(&auth),
        )
        .await?;
        owner.settle();
        owner.finish().await;
        Ok(())
    }

    async fn drop_tenant(&self, names: &TenantNames) -> Result<(), InfraError> {
        let mut conn = self.admin.get().await?;
        conn.batch("dropping a database", &drop_database_sql(names)?)
            .await?;
        conn.batch("dropping a database's roles", &drop_roles_sql(names)?)
            .await
    }

    async fn run_sql(
        &self,
        tenant: &TenantAccess,
        sql: &str,
        max_rows: usize,
    ) -> Result<SqlOutcome, ClusterError> {
        if let Some(refused) = crate::copy::client_copy(sql) {
            return Err(ClusterError::Refused(refused));
        }
        self.run_checked_sql(tenant, sql, max_rows).await
    }

    async fn end_abandoned_sessions(&self) -> Result<u64, InfraError> {
        crate::sweep::end_abandoned(&self.terminator.admin, &self.settings).await
    }

    async fn open_tables(&self, tenants: &[TenantAccess]) -> HashMap<String, Vec<OpenTable>> {
        self.read_open_tables(tenants).await
    }

    async fn announce_reload(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        let mut owner = self.owner_step_session(tenant).await?;
        owner.begin();
        crate::notify::announce(owner.client(), self.settings.sql_deadline()).await?;
        owner.settle();
        owner.finish().await;
        Ok(())
    }

    async fn sizes(&self, names: &[TenantNames]) -> Result<HashMap<String, u64>, InfraError> {
        if names.is_empty() {
            return Ok(HashMap::new());
        }
        let databases: Vec<&str> = names.iter().map(|n| n.database.as_str()).collect();
        let mut conn = self.admin.get().await?;
        let rows = conn
            .query("reading database sizes", SIZES_SQL, &[&databases])
            .await?;
        Ok(rows
            .iter()
            .map(|row| {
                let size: i64 = row.get(1);
                (row.get(0), u64::try_from(size).unwrap_or(0))
            })
            .collect())
    }
}

/// The data API's connections that it let go of mid-request, ended as the owner's are.
#[async_trait]
impl TenantBackends for PgCluster {
    async fn terminate(&self, backend: &TenantBackend) -> Result<bool, InfraError> {
        // The admin role's own sessions, or another application's, are never this port's.
        if !crate::sweep::tenant_role(&backend.role) {
            return Ok(false);
        }
        self.terminator.terminate(backend).await
    }
}

#[cfg(test)]
mod tests;
