//! A small pool of connections as one role to one database. Each connection holds a permit
//! of the replica-wide cap for as long as it is open.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Config, NoTls, Statement};

/// Most statements one connection keeps prepared; past it the cache starts again.
const STATEMENTS_KEPT: usize = 256;

/// A connection, the share of the replica's cap it holds, and the statements prepared on
/// it (by their text, for the schema generation they were prepared under).
pub(crate) struct Pooled {
    pub client: Client,
    _permit: OwnedSemaphorePermit,
    statements: HashMap<String, Statement>,
    generation: u64,
}

/// Why no connection could be had.
#[derive(Debug)]
pub(crate) enum Acquire {
    /// The replica holds as many data API connections as it may, and none came free.
    Saturated,
    /// The cluster did not take a new connection.
    Connect(tokio_postgres::Error),
}

pub(crate) struct Pool {
    config: Config,
    idle: Mutex<Vec<Pooled>>,
    /// Connections this pool may have open, idle or lent.
    size: Arc<Semaphore>,
    /// The replica's cap, shared by every pool.
    cap: Arc<Semaphore>,
    wait: Duration,
}

/// A lent connection: back to the pool when dropped, if it was marked clean and did not
/// break. A request dropped halfway (its client went away) may leave a transaction open,
/// so its connection is closed rather than handed to the next request.
pub(crate) struct Lent<'p> {
    pool: &'p Pool,
    conn: Option<Pooled>,
    clean: bool,
    _slot: tokio::sync::SemaphorePermit<'p>,
}

impl Lent<'_> {
    /// No transaction is open on it: it may serve the next request.
    pub fn clean(&mut self) {
        self.clean = true;
    }

    /// `sql` prepared on this connection with every parameter `text`: from the cache when
    /// it was prepared under the schema `generation`, else now (one round trip). A schema
    /// loaded again empties the cache, so no plan outlives the DDL that changed its types.
    pub async fn prepared(
        &mut self,
        sql: &str,
        params: usize,
        generation: u64,
    ) -> Result<Statement, tokio_postgres::Error> {
        let Some(conn) = self.conn.as_mut() else {
            unreachable!("a lent connection is held until dropped");
        };
        if conn.generation != generation || conn.statements.len() >= STATEMENTS_KEPT {
            conn.statements.clear();
            conn.generation = generation;
        }
        if let Some(statement) = conn.statements.get(sql) {
            return Ok(statement.clone());
        }
        let types = vec![Type::TEXT; params];
        let statement = conn.client.prepare_typed(sql, &types).await?;
        conn.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// Forgets the prepared statements (PostgreSQL said a plan no longer fits).
    pub fn forget_statements(&mut self) {
        if let Some(conn) = self.conn.as_mut() {
            conn.statements.clear();
        }
    }
}

impl std::ops::Deref for Lent<'_> {
    type Target = Client;

    fn deref(&self) -> &Client {
        match &self.conn {
            Some(conn) => &conn.client,
            None => unreachable!("a lent connection is held until dropped"),
        }
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take()
            && self.clean
            && !conn.client.is_closed()
            && let Ok(mut idle) = self.pool.idle.lock()
        {
            idle.push(conn);
        }
    }
}

impl Pool {
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
    pub async fn get(&self) -> Result<Lent<'_>, Acquire> {
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
    pub async fn open(&self) -> Result<Pooled, Acquire> {
        let permit = tokio::time::timeout(self.wait, self.cap.clone().acquire_owned())
            .await
            .map_err(|_| Acquire::Saturated)?
            .map_err(|_| Acquire::Saturated)?;
        let (client, connection) = self.config.connect(NoTls).await.map_err(Acquire::Connect)?;
        tokio::spawn(async move {
            // Ends when the client is dropped or the server closes the connection.
            let _ = connection.await;
        });
        Ok(Pooled {
            client,
            _permit: permit,
            statements: HashMap::new(),
            generation: 0,
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
        Acquire,
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
    pools: Mutex<HashMap<std::thread::ThreadId, Arc<Pool>>>,
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
    pub fn here(&self) -> Arc<Pool> {
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
