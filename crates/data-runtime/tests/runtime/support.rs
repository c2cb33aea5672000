//! What every module of the runtime's tests needs: the cluster, a tenant database made as
//! the service makes one, its instance once started, and polling with a deadline.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_accounts::SealedSecret;
use quire_data_runtime::{Runtime, RuntimeSettings};
use quire_dataapi::{Plan, RestRequest};
use quire_databases::{
    Cluster, DataApiInstance, DataApiRuntime, Database, DatabaseStatus, GatewayTarget,
    InstanceError, TenantAccess, TenantNames,
};
use quire_kernel::{AccountId, DatabaseId, ProjectId, ProjectSlug};
use quire_pgcluster::{PgCluster, PgClusterSettings, TenantRole};
use tokio_postgres::{Client, NoTls};

pub fn admin_url() -> String {
    std::env::var("QUIRE_TEST_POSTGRES_URL").expect("QUIRE_TEST_POSTGRES_URL")
}

pub async fn cluster() -> PgCluster {
    PgCluster::connect(&admin_url(), PgClusterSettings::default())
        .await
        .unwrap()
}

pub async fn connect(config: &tokio_postgres::Config) -> Client {
    let (client, conn) = config.connect(NoTls).await.unwrap();
    tokio::spawn(conn);
    client
}

/// Waits for `done`, polling, for at most 30 s.
pub async fn eventually<F, Fut>(what: &str, done: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    polled(what, Duration::from_secs(30), done).await;
}

/// Waits for `done`, polling, for at most `wait`.
pub async fn polled<F, Fut>(what: &str, wait: Duration, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + wait;
    while !done().await {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A tenant database made as the service makes one, and the gateway's view of it.
pub struct Tenant {
    pub access: TenantAccess,
    pub target: GatewayTarget,
}

impl Tenant {
    /// The database of `account` at `slug`, with `setup` run in it as its owner.
    pub async fn new(cluster: &PgCluster, account: AccountId, slug: &str, setup: &str) -> Self {
        let id = DatabaseId::new();
        let access = TenantAccess {
            names: TenantNames::of(id),
            owner_password: quire_kernel::secret::random_url_token(),
            authenticator_password: quire_kernel::secret::random_url_token(),
        };
        cluster.create_roles(&access).await.unwrap();
        cluster.create_database(&access.names).await.unwrap();
        cluster.prepare_database(&access).await.unwrap();
        if !setup.is_empty() {
            cluster.run_sql(&access, setup, 1).await.unwrap();
        }
        let now = time::OffsetDateTime::now_utc();
        let sealed = SealedSecret::stored(String::new());
        let database = Database {
            id,
            account_id: account,
            project_id: ProjectId::new(),
            slug: ProjectSlug::parse(slug).unwrap(),
            name: slug.to_owned(),
            status: DatabaseStatus::Ready,
            lease_until: None,
            expires_at: None,
            owner_secret: sealed.clone(),
            authenticator_secret: sealed.clone(),
            jwt_secret: Some(sealed),
            data_api_enabled: true,
            data_api_settings: quire_databases::DataApiSettings::default(),
            created_at: now,
            updated_at: now,
        };
        let target = GatewayTarget {
            database,
            tenant: access.clone(),
            jwt_secret: "a secret of the test".to_owned(),
            stops_seen: 0,
        };
        Self { access, target }
    }

    pub fn slug(&self) -> &str {
        self.target.database.slug.as_str()
    }

    /// A connection as the database's owner, as its SQL runs.
    pub async fn owner(&self, cluster: &PgCluster) -> Client {
        connect(&cluster.tenant_config(&self.access, TenantRole::Owner)).await
    }

    /// A superuser's connection to the database.
    pub async fn superuser(&self) -> Client {
        let mut config: tokio_postgres::Config = admin_url().parse().unwrap();
        config.dbname(&self.access.names.database);
        // A test may give the database idle timeouts of a millisecond; the superuser's own
        // session, idle between its login and its first query, must not be what they end.
        config.options("-c idle_session_timeout=0 -c idle_in_transaction_session_timeout=0");
        connect(&config).await
    }

    pub async fn drop_from(self, cluster: &PgCluster) {
        cluster.drop_tenant(&self.access.names).await.unwrap();
    }
}

/// The instance, once started (a start may take longer than a request waits, and a
/// refused one is answered so for a second before it is tried again).
pub async fn started(runtime: &Runtime, tenant: &Tenant) -> Arc<dyn DataApiInstance> {
    started_for(runtime, &tenant.target).await
}

/// The instance for `target`, once started, as [`started`].
pub async fn started_for(runtime: &Runtime, target: &GatewayTarget) -> Arc<dyn DataApiInstance> {
    let slug = target.database.slug.as_str();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match runtime.instance(target.clone()).await {
            Ok(instance) => return instance,
            Err(InstanceError::Unavailable) => panic!("{slug} did not start"),
            Err(e) => {
                assert!(Instant::now() < deadline, "{slug} did not start: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// A plan calling the function `name` with no arguments.
pub fn rpc(instance: &dyn DataApiInstance, name: &str) -> Plan {
    let path = format!("rpc/{name}");
    quire_dataapi::plan(
        &RestRequest {
            method: "POST",
            path: &path,
            query: "",
            prefer: None,
            accept: None,
            range: None,
            content_type: Some("application/json"),
            body: b"{}",
            ..RestRequest::default()
        },
        &instance.schema(),
    )
    .unwrap()
}

/// One connection per pool, a cap of `max` and a share of `share` per account, and short
/// waits.
pub fn settings(max: usize, share: usize) -> RuntimeSettings {
    RuntimeSettings {
        pool_size: 1,
        threads: 1,
        max_connections: max,
        account_connections: share,
        start_wait: Duration::from_secs(10),
        acquire_wait: Duration::from_millis(300),
        ..RuntimeSettings::default()
    }
}
