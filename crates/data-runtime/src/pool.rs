//! A small pool of connections as one role to one database: tokio-postgres's clients for
//! the owner, pipelining connections (`wire/`) for the authenticator. Each connection
//! holds a permit of the replica-wide cap for as long as it is open.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_postgres::{Client, Config, NoTls};

use crate::wire::{Wire, WireError};

/// A connection a pool can open and keep.
#[async_trait]
pub(crate) trait Connection: Send + Sized + 'static {
    /// The error of a connection the cluster did not take.
    type Error: std::fmt::Display + Send;

    /// Opens one as `config` says.
    ///
    /// # Errors
    /// When the cluster cannot be reached or refuses the login.
    async fn open(config: &Config) -> Result<Self, Self::Error>;

    /// Whether it closed or broke, and must not serve another request.
    fn is_closed(&self) -> bool;
}

/// The owner's connections: tokio-postgres's client, whose task runs beside it.
#[async_trait]
impl Connection for Client {
    type Error = tokio_postgres::Error;

    async fn open(config: &Config) -> Result<Self, Self::Error> {
        let (client, connection) = config.connect(NoTls).await?;
        tokio::spawn(async move {
            // Ends when the client is dropped or the server closes the connection.
            let _ = connection.await;
        });
        Ok(client)
    }

    fn is_closed(&self) -> bool {
        Client::is_closed(self)
    }
}

/// The authenticator's connections: one pipeline per request (`wire/`).
#[async_trait]
impl Connection for Wire {
    type Error = WireError;

    async fn open(config: &Config) -> Result<Self, Self::Error> {
        Wire::connect(config).await
    }

    fn is_closed(&self) -> bool {
        self.is_broken()
    }
}

/// A connection and the share of the replica's cap it holds.
pub(crate) struct Pooled<C> {
    pub conn: C,
    _permit: OwnedSemaphorePermit,
}

/// Why no connection could be had.
#[derive(Debug)]
pub(crate) enum Acquire<E> {
    /// The replica holds as many data API connections as it may, and none came free.
    Saturated,
    /// The cluster did not take a new connection.
    Connect(E),
}

pub(crate) struct Pool<C> {
    config: Config,
    idle: Mutex<Vec<Pooled<C>>>,
    /// Connections this pool may have open, idle or lent.
    size: Arc<Semaphore>,
    /// The replica's cap, shared by every pool.
    cap: Arc<Semaphore>,
    wait: Duration,
}

/// A lent connection: back to the pool when dropped, if it was marked clean and did not
/// break. A request dropped halfway (its client went away) may leave a transaction open,
/// so its connection is closed rather than handed to the next request.
pub(crate) struct Lent<'p, C: Connection> {
    pool: &'p Pool<C>,
    conn: Option<Pooled<C>>,
    clean: bool,
    _slot: tokio::sync::SemaphorePermit<'p>,
}

impl<C: Connection> Lent<'_, C> {
    /// No transaction is open on it: it may serve the next request.
    pub fn clean(&mut self) {
        self.clean = true;
    }
}

impl<C: Connection> std::ops::Deref for Lent<'_, C> {
    type Target = C;

    fn deref(&self) -> &C {
        match &self.conn {
            Some(conn) => &conn.conn,
            None => unreachable!("a lent connection is held until dropped"),
        }
    }
}

impl<C: Connection> std::ops::DerefMut for Lent<'_, C> {
    fn deref_mut(&mut self) -> &mut C {
        match &mut self.conn {
            Some(conn) => &mut conn.conn,
            None => unreachable!("a lent connection is held until dropped"),
        }
    }
}

impl<C: Connection> Drop for Lent<'_, C> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take()
            && self.clean
            && !conn.conn.is_closed()
            && let Ok(mut idle) = self.pool.idle.lock()
        {
            idle.push(conn);
        }
    }
}

impl<C: Connection> Pool<C> {
    pub fn new(config: Config, size: usize, cap: Arc<Semaphore>, wait: Duration) -> Self {
        Self {
            config,
            idle: Mutex::new(Vec::new()),
            size: Arc::new(Semaphore::new(size)),
            cap,
            wait,
        }
    }

    /// An idle connection, or a new one.
    pub async fn get(&self) -> Result<Lent<'_, C>, Acquire<C::Error>> {
        let slot = tokio::time::timeout(self.wait, self.size.acquire())
            .await
            .map_err(|_| Acquire::Saturated)?
            .map_err(|_| Acquire::Saturated)?;
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let conn = match idle {
            Some(conn) => conn,
            None => self.open().await?,
        };
        Ok(Lent {
            pool: self,
            conn: Some(conn),
            clean: false,
            _slot: slot,
        })
    }

    /// A connection outside the pool's count (the instance's listener), under the cap.
    pub async fn open(&self) -> Result<Pooled<C>, Acquire<C::Error>> {
        let permit = tokio::time::timeout(self.wait, self.cap.clone().acquire_owned())
            .await
            .map_err(|_| Acquire::Saturated)?
            .map_err(|_| Acquire::Saturated)?;
        let conn = C::open(&self.config).await.map_err(Acquire::Connect)?;
        Ok(Pooled {
            conn,
            _permit: permit,
        })
    }

    /// A connection whose messages (notifications) the caller reads itself.
    pub async fn open_listening(
        &self,
    ) -> Result<
        (
            Client,
            tokio_postgres::Connection<tokio_postgres::Socket, tokio_postgres::tls::NoTlsStream>,
            OwnedSemaphorePermit,
        ),
        Acquire<tokio_postgres::Error>,
    > {
        let permit = tokio::time::timeout(self.wait, self.cap.clone().acquire_owned())
            .await
            .map_err(|_| Acquire::Saturated)?
            .map_err(|_| Acquire::Saturated)?;
        let (client, connection) = self.config.connect(NoTls).await.map_err(Acquire::Connect)?;
        Ok((client, connection, permit))
    }
}

/// An instance's connections: a pool for each thread that serves its requests. Each API
/// worker runs a runtime of its own on one thread, and a connection's task runs where it
/// was opened, so a connection lent to another thread would cost a cross-thread wake-up
/// for every message; the instance's connections are shared out among the threads instead.
pub(crate) struct Pools {
    config: Config,
    per_thread: usize,
    cap: Arc<Semaphore>,
    wait: Duration,
    pools: Mutex<HashMap<std::thread::ThreadId, Arc<Pool<Wire>>>>,
}

impl Pools {
    pub fn new(
        config: Config,
        size: usize,
        threads: usize,
        cap: Arc<Semaphore>,
        wait: Duration,
    ) -> Self {
        Self {
            config,
            per_thread: size.div_ceil(threads.max(1)).max(1),
            cap,
            wait,
            pools: Mutex::new(HashMap::new()),
        }
    }

    /// The pool of the calling thread.
    pub fn here(&self) -> Arc<Pool<Wire>> {
        let thread = std::thread::current().id();
        let mut pools = self
            .pools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pools
            .entry(thread)
            .or_insert_with(|| {
                Arc::new(Pool::new(
                    self.config.clone(),
                    self.per_thread,
                    self.cap.clone(),
                    self.wait,
                ))
            })
            .clone()
    }
}
