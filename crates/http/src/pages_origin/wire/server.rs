//! Worker threads, each with a single-threaded runtime of its own (as actix-web runs its
//! workers), accepting from one listening socket; and their graceful stop.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::TcpListener;
use std::rc::Rc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{Semaphore, watch};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::Handler;
use super::connection::Connection;
use crate::common::client_ip::TrustedProxies;
use crate::common::limits::{ConnectionCounts, EdgeLimits};

/// What a client of the pages listener may hold open, and for how long.
#[derive(Debug, Clone)]
pub struct WireLimits {
    /// Time for a request's head, from the connection's opening or the head's first byte.
    pub header_timeout: Duration,
    /// An idle connection between requests is closed after this.
    pub keep_alive: Duration,
    /// Connections each worker holds at once; past it, it accepts no more until one closes.
    pub max_connections: usize,
    /// The largest request body taken; a larger declared length is answered 413 at once.
    pub max_body: usize,
    /// The body deadline and the share of connections per client address.
    pub edge: EdgeLimits,
    /// On a stop by SIGTERM or SIGINT, requests in flight get this long to finish.
    pub shutdown_grace: Duration,
}

/// The running workers.
#[derive(Debug)]
pub struct Running {
    workers: Vec<JoinHandle<()>>,
    /// `Some(grace)` once stopping.
    stop: watch::Sender<Option<Duration>>,
    grace: Duration,
}

/// Starts `workers` threads serving `listener` (each with a handle of its own) with
/// `handler`. Connections count against
/// their client's share in `counts`, which the other listener shares.
///
/// # Errors
/// The listener cannot be made non-blocking or shared with a worker, or a thread cannot be
/// started.
pub fn start<H: Handler>(
    listener: &TcpListener,
    workers: usize,
    limits: WireLimits,
    counts: &Arc<ConnectionCounts>,
    trusted: &TrustedProxies,
    handler: &H,
) -> std::io::Result<Running> {
    listener.set_nonblocking(true)?;
    let (stop, stopped) = watch::channel(None);
    let grace = limits.shutdown_grace;
    let limits = Arc::new(limits);
    let mut threads = Vec::with_capacity(workers.max(1));
    for index in 0..workers.max(1) {
        let worker = Worker {
            listener: listener.try_clone()?,
            limits: limits.clone(),
            counts: counts.clone(),
            trusted: trusted.clone(),
            handler: handler.clone(),
            stop: stopped.clone(),
        };
        let thread = std::thread::Builder::new()
            .name(format!("quire-pages-{index}"))
            .spawn(move || worker.run())?;
        threads.push(thread);
    }
    Ok(Running {
        workers: threads,
        stop,
        grace,
    })
}

impl Running {
    /// Serves until SIGTERM or SIGINT (requests in flight get the grace to finish) or
    /// SIGQUIT (they do not), then stops.
    ///
    /// # Errors
    /// The signals cannot be listened for.
    pub async fn run(self) -> std::io::Result<()> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut quit = signal(SignalKind::quit())?;
        let grace = tokio::select! {
            _ = terminate.recv() => self.grace,
            _ = interrupt.recv() => self.grace,
            _ = quit.recv() => Duration::ZERO,
        };
        self.stop(grace).await;
        Ok(())
    }

    /// Stops accepting, closes idle connections, gives requests in flight up to `grace`, and
    /// returns once every worker has ended.
    pub async fn stop(self, grace: Duration) {
        self.stop.send_replace(Some(grace));
        let workers = self.workers;
        let joined = tokio::task::spawn_blocking(move || {
            for worker in workers {
                if worker.join().is_err() {
                    tracing::error!("a pages worker panicked");
                }
            }
        })
        .await;
        if joined.is_err() {
            tracing::error!("the pages workers could not be joined");
        }
    }
}

/// Each open connection's task, with whether it is waiting for a request: on a stop those
/// are closed at once, the others answer what they have and then close.
type OpenConnections = HashMap<u64, (AbortHandle, Rc<Cell<bool>>)>;

struct Worker<H> {
    listener: TcpListener,
    limits: Arc<WireLimits>,
    counts: Arc<ConnectionCounts>,
    trusted: TrustedProxies,
    handler: H,
    stop: watch::Receiver<Option<Duration>>,
}

impl<H: Handler> Worker<H> {
    fn run(self) {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => {
                tracing::error!(error = %e, "a pages worker could not start its runtime");
                return;
            }
        };
        let local = tokio::task::LocalSet::new();
        local.block_on(&runtime, self.accept());
    }

    async fn accept(mut self) {
        let listener = match tokio::net::TcpListener::from_std(self.listener) {
            Ok(listener) => listener,
            Err(e) => {
                tracing::error!(error = %e, "a pages worker could not listen");
                return;
            }
        };
        let max = self.limits.max_connections.max(1);
        let open = Arc::new(Semaphore::new(max));
        let stopping = Rc::new(Cell::new(false));
        let connections: Rc<RefCell<OpenConnections>> = Rc::default();
        let mut next_id = 0_u64;
        loop {
            let permit = tokio::select! {
                permit = open.clone().acquire_owned() => permit,
                _ = self.stop.changed() => break,
            };
            let Ok(permit) = permit else { break };
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                _ = self.stop.changed() => break,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "the pages listener could not accept");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let slot = self
                .counts
                .open(peer.ip(), &self.limits.edge, &self.trusted);
            let idle = Rc::new(Cell::new(false));
            let accepted = Instant::now();
            let connection = Connection {
                stream,
                peer: peer.ip(),
                over_share: slot.over_share,
                handler: self.handler.clone(),
                limits: self.limits.clone(),
                stopping: stopping.clone(),
                idle: idle.clone(),
                accepted,
                wait: Box::pin(tokio::time::sleep_until(
                    accepted + self.limits.header_timeout,
                )),
            };
            let (id, registry) = (next_id, connections.clone());
            next_id += 1;
            let task = tokio::task::spawn_local(async move {
                connection.serve().await;
                registry.borrow_mut().remove(&id);
                drop((slot, permit));
            });
            connections
                .borrow_mut()
                .insert(id, (task.abort_handle(), idle));
        }
        drop(listener);
        stopping.set(true);
        for (task, idle) in connections.borrow().values() {
            if idle.get() {
                task.abort();
            }
        }
        // Every connection holds a permit until it ends: all of them back means all ended.
        let grace = (*self.stop.borrow()).unwrap_or_default();
        let all = u32::try_from(max).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(grace, open.acquire_many(all)).await;
    }
}
