//! `PgCluster` against a real PostgreSQL (`QUIRE_TEST_POSTGRES_URL`, a superuser; reported
//! as ignored when unset, docs/decisions/test-skips.md): the `Cluster` port's contract list
//! (`quire-store-contract`, which the testkit's fake passes too), provisioning and its
//! undo, the database service's creation all or nothing on it (`all_or_nothing`), the
//! owner's SQL and what it leaves behind, the tables left open to `anon`, what each role can and cannot reach, and the
//! reload notifications.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod all_or_nothing;
mod contract;
mod isolation;
mod leftovers;
mod notify;
mod open_tables;
mod provision;
mod sql;

use std::time::Duration;

use futures_util::StreamExt;
use quire_databases::{Cluster, TenantAccess, TenantNames};
use quire_kernel::DatabaseId;
use quire_pgcluster::{PgCluster, PgClusterSettings, TenantRole};
use tokio::sync::mpsc;
use tokio_postgres::config::Host;
use tokio_postgres::{AsyncMessage, Client, Config, NoTls};

/// The test server; every test here carries the `no_postgres` ignore, so it is set.
pub(crate) fn admin_url() -> String {
    std::env::var("QUIRE_TEST_POSTGRES_URL").expect("QUIRE_TEST_POSTGRES_URL")
}

pub(crate) async fn cluster_with(settings: PgClusterSettings) -> PgCluster {
    PgCluster::connect(&admin_url(), settings).await.unwrap()
}

pub(crate) async fn cluster() -> PgCluster {
    cluster_with(PgClusterSettings::default()).await
}

/// A fresh tenant's names and passwords (not yet created).
pub(crate) fn new_tenant() -> TenantAccess {
    TenantAccess {
        names: TenantNames::of(DatabaseId(uuid::Uuid::new_v4())),
        owner_password: quire_kernel::secret::random_url_token(),
        authenticator_password: quire_kernel::secret::random_url_token(),
    }
}

/// Creates a tenant with every step of a creation.
pub(crate) async fn created(cluster: &PgCluster) -> TenantAccess {
    let tenant = new_tenant();
    cluster.create_roles(&tenant).await.unwrap();
    cluster.create_database(&tenant.names).await.unwrap();
    cluster.prepare_database(&tenant).await.unwrap();
    tenant
}

/// A plain admin connection to the test server's maintenance database.
pub(crate) async fn admin() -> Client {
    let url = admin_url();
    connect(&url.parse().unwrap()).await
}

pub(crate) async fn connect(config: &Config) -> Client {
    try_connect(config).await.unwrap()
}

pub(crate) async fn try_connect(config: &Config) -> Result<Client, tokio_postgres::Error> {
    let (client, conn) = config.connect(NoTls).await?;
    tokio::spawn(conn);
    Ok(client)
}

/// A connection as `role` that `LISTEN`s on `pgrst`, and what it hears.
pub(crate) async fn listener(
    cluster: &PgCluster,
    tenant: &TenantAccess,
) -> (Client, mpsc::UnboundedReceiver<(String, String)>) {
    let config = cluster.tenant_config(tenant, TenantRole::Authenticator);
    let (client, mut conn) = config.connect(NoTls).await.unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| conn.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(n) = message {
                let _ = tx.send((n.channel().to_owned(), n.payload().to_owned()));
            }
        }
    });
    client.batch_execute("LISTEN pgrst").await.unwrap();
    (client, rx)
}

/// The next notification within `wait`.
pub(crate) async fn heard(
    rx: &mut mpsc::UnboundedReceiver<(String, String)>,
    wait: Duration,
) -> Option<(String, String)> {
    tokio::time::timeout(wait, rx.recv()).await.ok().flatten()
}

/// `url` with another user and password, as a `key=value` string.
pub(crate) fn as_user(url: &str, user: &str, password: &str) -> String {
    let config: Config = url.parse().unwrap();
    let host = match &config.get_hosts()[0] {
        Host::Tcp(h) => h.clone(),
        Host::Unix(p) => p.display().to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().unwrap_or("postgres");
    format!("host='{host}' port={port} dbname='{db}' user='{user}' password='{password}'")
}

/// Whether a database and the two roles of `names` exist.
pub(crate) async fn exists(admin: &Client, names: &TenantNames) -> (bool, bool, bool) {
    let row = admin
        .query_one(
            "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1), \
                    EXISTS (SELECT FROM pg_roles WHERE rolname = $2), \
                    EXISTS (SELECT FROM pg_roles WHERE rolname = $3)",
            &[
                &names.database,
                &names.owner_role,
                &names.authenticator_role,
            ],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1), row.get(2))
}
