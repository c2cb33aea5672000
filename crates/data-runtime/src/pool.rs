//! A small pool of connections as one role to one database: tokio-postgres's clients for
//! the owner, pipelining connections (`wire/`) for the authenticator. Each connection
//! holds its place under the replica's cap and its account's share (`cap.rs`) for as long
//! as it is open, and an authenticator's connection let go of mid-answer until its backend
//! is gone too (`abandon.rs`); idle ones may be closed from outside to make room.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Semaphore;
use tokio_postgres::{Client, Config, NoTls};

use crate::abandon::Ender;
use crate::cap::{Full, Hold, Share};
use crate::wire::{Leftover, Wire, WireError};

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

    /// What its backend may still run when it is let go of now, to be ended from outside.
    fn left_running(&self) -> Option<Leftover> {
        None
    }
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

    fn left_running(&self) -> Option<Leftover> {
        Wire::left_running(self)
    }
}

/// A connection and its place under the replica's cap.
pub(crate) struct Pooled<C> {
    pub conn: C,
    hold: Hold,
}

/// Why no connection could be had, as the owner's pool (`users.rs`) tells it.
#[derive(Debug)]
pub(crate) enum Acquire<E> {
    /// No connection came free in time: the pool's own, the account's share or the
    /// replica's cap are all in use.
    Saturated,
    /// The cluster did not take a new connection.
    Connect(E),
}

/// Why no connection could be had, in full.
#[derive(Debug)]
pub(crate) enum Refusal<E> {
    /// The account's share or the replica's cap is reached and nothing could go.
    Full(Full),
    /// Every connection this pool may have is lent.
    Busy,
    /// The cluster did not take a new connection.
    Connect(E),
}

impl<E> From<Refusal<E>> for Acquire<E> {
    fn from(refusal: Refusal<E>) -> Self {
        match refusal {
            Refusal::Full(_) | Refusal::Busy => Self::Saturated,
            Refusal::Connect(e) => Self::Connect(e),
        }
    }
}

struct Shared<C> {
    config: Config,
    idle: Mutex<Vec<Pooled<C>>>,
    /// Connections this pool may have open, idle or lent.
    size: Semaphore,
    limit: usize,
    /// The account's way to the replica's cap.
    share: Share,
    wait: Duration,
    /// The role its connections log in as, and what ends their leftovers.
    role: String,
    ender: Option<Arc<Ender>>,
}

/// A pool; clones are the same pool (the registry keeps one of the owner's, to close its
/// idle connections when room is needed).
pub(crate) struct Pool<C> {
    shared: Arc<Shared<C>>,
}

impl<C> Clone for Pool<C> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
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
        let shared = &*self.pool.shared;
        shared.share.cap.meter().returned();
        let Some(conn) = self.conn.take() else {
            return;
        };
        if self.clean && !conn.conn.is_closed() {
            if let Ok(mut idle) = shared.idle.lock() {
                idle.push(conn);
            }
            return;
        }
        if let Some(ender) = &shared.ender
            && let Some(left) = conn.conn.left_running()
        {
            let Pooled { conn, hold } = conn;
            // The socket closes first: the backend's next write fails.
            drop(conn);
            ender.end(&shared.role, left, hold);
        }
    }
}

impl<C: Connection> Pool<C> {
    /// A pool of `size` connections as `config` says; `ender` ends what those let go of
    /// mid-answer leave running.
    pub fn new(
        config: Config,
        size: usize,
        share: Share,
        wait: Duration,
        ender: Option<Arc<Ender>>,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                role: config.get_user().unwrap_or_default().to_owned(),
                config,
                idle: Mutex::new(Vec::new()),
                size: Semaphore::new(size),
                limit: size,
                share,
                wait,
                ender,
            }),
        }
    }

    /// An idle connection, or a new one.
    pub async fn get(&self) -> Result<Lent<'_, C>, Acquire<C::Error>> {
        self.lend().await.map_err(Acquire::from)
    }

    /// [`Pool::get`], saying which limit refused.
    pub async fn lend(&self) -> Result<Lent<'_, C>, Refusal<C::Error>> {
        let shared = &*self.shared;
        let slot = tokio::time::timeout(shared.wait, shared.size.acquire())
            .await
            .map_err(|_| Refusal::Busy)?
            .map_err(|_| Refusal::Busy)?;
        let idle = shared.idle.lock().ok().and_then(|mut idle| idle.pop());
        let conn = match idle {
            Some(conn) => conn,
            None => self.open().await?,
        };
        shared.share.cap.meter().lent();
        Ok(Lent {
            pool: self,
            conn: Some(conn),
            clean: false,
            _slot: slot,
        })
    }

    /// A new connection under the account's share and the cap.
    async fn open(&self) -> Result<Pooled<C>, Refusal<C::Error>> {
        let shared = &*self.shared;
        let hold = shared
            .share
            .take(shared.wait)
            .await
            .map_err(Refusal::Full)?;
        let conn = C::open(&shared.config).await.map_err(Refusal::Connect)?;
        Ok(Pooled { conn, hold })
    }

    /// How many of its connections are lent now (or being opened for a request).
    pub fn lent(&self) -> usize {
        self.shared
            .limit
            .saturating_sub(self.shared.size.available_permits())
    }

    /// Closes one idle connection; whether there was one.
    pub fn close_idle_one(&self) -> bool {
        let conn = self.shared.idle.lock().ok().and_then(|mut idle| idle.pop());
        conn.is_some()
    }

    /// Closes every idle connection.
    pub fn close_idle(&self) {
        let idle = self
            .shared
            .idle
            .lock()
            .map(|mut idle| std::mem::take(&mut *idle))
            .unwrap_or_default();
        drop(idle);
    }
}

impl Pool<Wire> {
    /// A connection whose messages (notifications) the caller reads itself, holding the
    /// place `hold` reserved for it.
    pub async fn open_listening(
        &self,
        hold: Hold,
    ) -> Result<
        (
            Client,
            tokio_postgres::Connection<tokio_postgres::Socket, tokio_postgres::tls::NoTlsStream>,
            Hold,
        ),
        tokio_postgres::Error,
    > {
        let (client, connection) = self.shared.config.connect(NoTls).await?;
        Ok((client, connection, hold))
    }
}

/// An instance's connections: a pool for each thread that serves its requests. Each API
/// worker runs a runtime of its own on one thread, and a connection's task runs where it
/// was opened, so a connection lent to another thread would cost a cross-thread wake-up
/// for every message; the instance's connections are shared out among the threads instead.
pub(crate) struct Pools {
    config: Config,
    per_thread: usize,
    share: Share,
    wait: Duration,
    ender: Arc<Ender>,
    pools: Mutex<HashMap<std::thread::ThreadId, Arc<Pool<Wire>>>>,
}

impl Pools {
    pub fn new(
        config: Config,
        size: usize,
        threads: usize,
        share: Share,
        wait: Duration,
        ender: Arc<Ender>,
    ) -> Self {
        Self {
            config,
            per_thread: size.div_ceil(threads.max(1)).max(1),
            share,
            wait,
            ender,
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
                    self.share.clone(),
                    self.wait,
                    Some(self.ender.clone()),
                ))
            })
            .clone()
    }

    fn each(&self) -> Vec<Arc<Pool<Wire>>> {
        self.pools
            .lock()
            .map(|pools| pools.values().cloned().collect())
            .unwrap_or_default()
    }

    /// How many connections are lent now, over every thread's pool.
    pub fn lent(&self) -> usize {
        self.each().iter().map(|p| p.lent()).sum()
    }

    /// Closes one idle connection of any thread's pool; whether there was one.
    pub fn close_idle_one(&self) -> bool {
        self.each().iter().any(|p| p.close_idle_one())
    }

    /// Closes every idle connection.
    pub fn close_idle(&self) {
        for pool in self.each() {
            pool.close_idle();
        }
    }
}
