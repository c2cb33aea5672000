//! [`PgCluster`]: the `Cluster` port on one PostgreSQL cluster.

use std::collections::HashMap;

use async_trait::async_trait;
use quire_databases::{
    AUTH_SCHEMA_SQL, Cluster, ClusterError, SqlOutcome, TenantAccess, TenantNames,
};
use quire_kernel::InfraError;
use tokio_postgres::{Client, Config};

use crate::conn::{AdminPool, check_transport, open, within};
use crate::error::sqlstate_of;
use crate::provision::{
    EVENT_TRIGGER_SQL, SIZES_SQL, create_database_sql, database_access_sql, drop_database_sql,
    drop_roles_sql, grants_sql,
};
use crate::roles::{
    AdminRole, create_roles_sql, ensure_shared_roles, inspect_admin, restore_passwords_sql,
};
use crate::settings::PgClusterSettings;

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
    /// runs once).
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
        Ok(Self {
            admin,
            role,
            settings,
        })
    }

    /// How to connect to a tenant's database as one of its roles: the cluster's host, port
    /// and connection options, that database, that role and its password. For the data API
    /// (pools as the authenticator) and for tests.
    #[must_use]
    pub fn tenant_config(&self, tenant: &TenantAccess, role: TenantRole) -> Config {
        let mut config = self.admin.config().clone();
        config.dbname(&tenant.names.database);
        match role {
            TenantRole::Owner => config
                .user(&tenant.names.owner_role)
                .password(&tenant.owner_password)
                .application_name("quire-sql"),
            TenantRole::Authenticator => config
                .user(&tenant.names.authenticator_role)
                .password(&tenant.authenticator_password)
                .application_name("quire-data-api"),
        };
        config
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

    /// A connection as the owner, repairing a password the owner changed.
    async fn owner_client(&self, tenant: &TenantAccess) -> Result<Client, InfraError> {
        let config = self.tenant_config(tenant, TenantRole::Owner);
        const WHAT: &str = "connecting as the database's owner";
        match open(&config, WHAT).await {
            Err(e) if sqlstate_of(&e) == Some("28P01") => {
                tracing::warn!(
                    role = %tenant.names.owner_role,
                    "a database's owner no longer has its stored password; restoring it"
                );
                self.restore_passwords(tenant).await?;
                open(&config, WHAT).await
            }
            other => other,
        }
    }
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
        let owner = self.owner_client(tenant).await?;
        let auth = format!("BEGIN;\n{AUTH_SCHEMA_SQL}\nCOMMIT;");
        within(
            &owner,
            self.admin.deadline(),
            "making a database's auth schema",
            owner.batch_execute(&auth),
        )
        .await
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
        let started = tokio::time::Instant::now();
        let deadline = self.settings.sql_deadline();
        let client = self.owner_client(tenant).await?;
        let left = deadline.saturating_sub(started.elapsed());
        // The connection closes when `client` is dropped, after the answer.
        crate::run::run_sql(&client, sql, max_rows, left, deadline).await
    }

    async fn announce_reload(&self, tenant: &TenantAccess) -> Result<(), InfraError> {
        let client = self.owner_client(tenant).await?;
        crate::notify::announce(&client, self.admin.deadline()).await
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
