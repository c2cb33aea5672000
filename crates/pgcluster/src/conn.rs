//! Opening connections, driving them, and the few admin connections kept for provisioning.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::StreamExt;
use quire_kernel::InfraError;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{Client, Config, Connection, NoTls};

use crate::error::{infra, timed_out};

/// Refuses a configuration asking for TLS, which this adapter does not speak yet, and warns
/// when the cluster is reached unencrypted over a network.
pub(crate) fn check_transport(config: &Config) -> Result<(), InfraError> {
    if config.get_ssl_mode() == SslMode::Require {
        return Err(InfraError::new(
            "QUIRE_DATABASES_URL asks for TLS (sslmode=require), which Quire's database service \
             does not support yet: reach PostgreSQL over a unix socket or a loopback address \
             (sslmode=disable or prefer)",
        ));
    }
    for host in config.get_hosts() {
        if let Host::Tcp(name) = host
            && !is_loopback(name)
        {
            // SCRAM keeps passwords off the wire, but the statements and rows are not.
            tracing::warn!(
                host = %name,
                "the database service reaches PostgreSQL unencrypted over the network"
            );
        }
    }
    Ok(())
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Opens a connection with `config` and drives it on its own task until the client is
/// dropped.
pub(crate) async fn open(config: &Config, what: &str) -> Result<Client, InfraError> {
    let (client, connection) = config.connect(NoTls).await.map_err(|e| infra(what, &e))?;
    tokio::spawn(drive(connection));
    Ok(client)
}

/// Polls a connection to its end. tokio-postgres' own driver logs every notice at info;
/// here they are dropped, since a tenant's SQL chooses their text (`RAISE NOTICE`) and
/// `DROP … IF EXISTS` makes them by design.
pub(crate) async fn drive<S, T>(mut connection: Connection<S, T>)
where
    S: AsyncRead + AsyncWrite + Unpin,
    T: AsyncRead + AsyncWrite + Unpin,
{
    let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
    // Notices and notifications alike are dropped; an error ends the connection.
    while let Some(Ok(_)) = messages.next().await {}
}

/// Runs `fut` on `client` within `deadline`; past it, asks the server to cancel the query
/// (so nothing keeps running there) and reports the step as unavailable.
pub(crate) async fn within<T>(
    client: &Client,
    deadline: Duration,
    what: &str,
    fut: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, InfraError> {
    match tokio::time::timeout(deadline, fut).await {
        Ok(done) => done.map_err(|e| infra(what, &e)),
        Err(_) => {
            let _ = client.cancel_token().cancel_query(NoTls).await;
            Err(timed_out(what, deadline))
        }
    }
}

/// A few connections to the maintenance database, opened when first needed and kept for
/// the next step. Provisioning is rare and each step short, so a list and a semaphore do
/// what a pool crate would.
#[derive(Debug)]
pub(crate) struct AdminPool {
    config: Config,
    idle: Mutex<Vec<Client>>,
    slots: Semaphore,
    deadline: Duration,
}

impl AdminPool {
    pub(crate) fn new(config: Config, size: usize, deadline: Duration) -> Self {
        Self {
            config,
            idle: Mutex::new(Vec::new()),
            slots: Semaphore::new(size.max(1)),
            deadline,
        }
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    pub(crate) fn deadline(&self) -> Duration {
        self.deadline
    }

    /// A connection: an idle one that is still open, or a new one.
    pub(crate) async fn get(&self) -> Result<AdminConn<'_>, InfraError> {
        let slot = tokio::time::timeout(self.deadline, self.slots.acquire())
            .await
            .map_err(|_| timed_out("waiting for an admin connection", self.deadline))?
            .map_err(|_| InfraError::new("the admin connections are closed"))?;
        let reused = self.idle.lock().ok().and_then(|mut idle| {
            while let Some(client) = idle.pop() {
                if !client.is_closed() {
                    return Some(client);
                }
            }
            None
        });
        let client = match reused {
            Some(client) => client,
            None => open(&self.config, "connecting to the cluster as its admin role").await?,
        };
        Ok(AdminConn {
            pool: self,
            client: Some(client),
            _slot: slot,
        })
    }
}

/// A lent admin connection, back to the pool when dropped unless a step on it timed out.
#[derive(Debug)]
pub(crate) struct AdminConn<'p> {
    pool: &'p AdminPool,
    client: Option<Client>,
    _slot: SemaphorePermit<'p>,
}

impl AdminConn<'_> {
    fn client(&self) -> Result<&Client, InfraError> {
        self.client
            .as_ref()
            .ok_or_else(|| InfraError::new("an admin connection was used after it broke"))
    }

    /// Runs one or more statements (simple protocol) within the pool's deadline. A step that
    /// times out costs the connection: whatever the cancelled query left is not reused.
    pub(crate) async fn batch(&mut self, what: &str, sql: &str) -> Result<(), InfraError> {
        let deadline = self.pool.deadline;
        let client = self.client()?;
        let done = within(client, deadline, what, client.batch_execute(sql)).await;
        self.keep_if(&done);
        done
    }

    /// Runs a query with bound parameters within the pool's deadline.
    pub(crate) async fn query(
        &mut self,
        what: &str,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>, InfraError> {
        let deadline = self.pool.deadline;
        let client = self.client()?;
        let done = within(client, deadline, what, client.query(sql, params)).await;
        self.keep_if(&done);
        done
    }

    fn keep_if<T>(&mut self, done: &Result<T, InfraError>) {
        if let Err(e) = done
            && e.kind() == quire_kernel::InfraKind::Unavailable
        {
            self.client = None;
        }
    }
}

impl Drop for AdminConn<'_> {
    fn drop(&mut self) {
        if let Some(client) = self.client.take()
            && !client.is_closed()
            && let Ok(mut idle) = self.pool.idle.lock()
        {
            idle.push(client);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_loopback;

    #[test]
    fn loopback_hosts() {
        for host in ["localhost", "127.0.0.1", "::1", "[::1]", "127.1.2.3"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in ["db.example", "10.0.0.1", "192.168.1.2"] {
            assert!(!is_loopback(host), "{host}");
        }
    }
}
