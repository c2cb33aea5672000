//! Worker threads, each with a single-threaded runtime of its own (as actix-web runs its
//! workers) and, when asked, a CPU of its own, serving the connections one accepting thread
//! hands them, the least loaded first (as actix-web's acceptor does); and their graceful
//! stop.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::Handler;
use super::connection::Connection;
use super::turns::{Turn, allowed_cpus, bind_to};
use crate::client_ip::TrustedProxies;
use crate::limits::{ConnectionCounts, EdgeLimits};

/// What a client of the pages listener may hold open, and for how long.
#[derive(Debug, Clone)]
pub struct WireLimits {
    /// Time for a request's head, from the connection's opening or the head's first byte.
    pub header_timeout: Duration,
    /// An idle connection between requests is closed after this.
    pub keep_alive: Duration,
    /// Connections each worker holds at once; once every worker holds this many, no more
    /// are accepted until one closes.
    pub max_connections: usize,
    /// The largest request body taken; a larger declared length is answered 413 at once.
    pub max_body: usize,
    /// The body deadline and the share of connections per client address.
    pub edge: EdgeLimits,
    /// On a stop by SIGTERM or SIGINT, requests in flight get this long to finish.
    pub shutdown_grace: Duration,
}

/// The worker threads of the pages listener.
#[derive(Debug, Clone, Copy)]
pub struct Workers {
    /// How many (at least one is started).
    pub count: usize,
    /// Worker `i` runs only on the `i`-th CPU the process may use (counting round when
    /// there are more workers than CPUs), as nginx's `worker_cpu_affinity auto`. Two
    /// workers left to the scheduler were found sharing one core while the clients' threads
    /// shared the other, a placement the kernel does not undo
    /// (`docs/decisions/pages-origin-scheduling.md`).
    pub pinned: bool,
}

/// The running workers.
#[derive(Debug)]
pub struct Running {
    workers: Vec<JoinHandle<()>>,
    loads: Arc<[AtomicUsize]>,
    /// `Some(grace)` once stopping.
    stop: watch::Sender<Option<Duration>>,
    grace: Duration,
}

/// Starts the worker threads, serving the connections that one accepting thread takes from
/// `listener` and hands each to the worker holding the fewest (each worker with a handle of
/// its own on `handler`). Connections count against their client's share in `counts`, which
/// the other listener shares. A worker that cannot be bound to its CPU runs unbound, with
/// a warning.
///
/// # Errors
/// The listener cannot be made non-blocking or shared, or a thread cannot be started.
pub fn start<H: Handler>(
    listener: &TcpListener,
    workers: Workers,
    limits: WireLimits,
    counts: &Arc<ConnectionCounts>,
    trusted: &TrustedProxies,
    handler: &H,
) -> std::io::Result<Running> {
    listener.set_nonblocking(true)?;
    let (stop, stopped) = watch::channel(None);
    let grace = limits.shutdown_grace;
    let limits = Arc::new(limits);
    let cpus = workers.pinned.then(cpus_to_pin).flatten();
    let workers = workers.count.max(1);
    let loads: Arc<[AtomicUsize]> = (0..workers).map(|_| AtomicUsize::new(0)).collect();
    let mut inboxes = Vec::with_capacity(workers);
    let mut threads = Vec::with_capacity(workers + 1);
    for index in 0..workers {
        let (inbox, handed) = mpsc::unbounded_channel();
        inboxes.push(inbox);
        let worker = Worker {
            handed,
            load: Load {
                loads: loads.clone(),
                index,
            },
            limits: limits.clone(),
            counts: counts.clone(),
            trusted: trusted.clone(),
            handler: handler.clone(),
            stop: stopped.clone(),
        };
        let cpu = cpus.as_ref().map(|cpus| cpus[index % cpus.len()]);
        let thread = std::thread::Builder::new()
            .name(format!("quire-pages-{index}"))
            .spawn(move || {
                if let Some(cpu) = cpu
                    && let Err(e) = bind_to(cpu)
                {
                    tracing::warn!(worker = index, cpu, error = %e, "a pages worker runs unbound");
                }
                on_own_runtime(worker.run());
            })?;
        threads.push(thread);
    }
    let acceptor_loads = loads.clone();
    let acceptor = Acceptor {
        listener: listener.try_clone()?,
        room: Arc::new(Semaphore::new(
            limits.max_connections.max(1).saturating_mul(workers),
        )),
        inboxes,
        loads,
        stop: stopped,
    };
    threads.push(
        std::thread::Builder::new()
            .name("quire-pages-accept".into())
            .spawn(move || on_own_runtime(acceptor.run()))?,
    );
    Ok(Running {
        workers: threads,
        loads: acceptor_loads,
        stop,
        grace,
    })
}

/// The CPUs to bind the workers to, logged; `None` (with a warning) when they cannot be read.
fn cpus_to_pin() -> Option<Vec<usize>> {
    match allowed_cpus() {
        Ok(cpus) if !cpus.is_empty() => {
            tracing::info!(
                ?cpus,
                "pages workers bound each to one of these CPUs in turn"
            );
            Some(cpus)
        }
        Ok(_) => None,
        Err(e) => {
            tracing::warn!(error = %e, "the CPUs this process may use are unknown: pages workers run unbound");
            None
        }
    }
}

/// Runs `work` to its end on a single-threaded runtime of this thread's own.
fn on_own_runtime(work: impl Future<Output = ()>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!(error = %e, "a pages thread could not start its runtime");
            return;
        }
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, work);
}

/// How many connections the workers hold open now, readable while they serve.
#[derive(Debug, Clone)]
pub struct ConnectionsOpen(Arc<[AtomicUsize]>);

impl ConnectionsOpen {
    #[must_use]
    pub fn now(&self) -> usize {
        self.0.iter().map(|l| l.load(Ordering::Relaxed)).sum()
    }
}

impl Running {
    /// The count of open connections, for the metrics.
    #[must_use]
    pub fn open_connections(&self) -> ConnectionsOpen {
        ConnectionsOpen(self.loads.clone())
    }

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

/// An accepted connection on its way to a worker, with its place in the connection budget.
struct Handoff {
    stream: std::net::TcpStream,
    peer: SocketAddr,
    room: OwnedSemaphorePermit,
}

/// Takes connections from the listening socket and hands each to the worker holding the
/// fewest. Workers that accepted for themselves from a shared socket split a burst of
/// connections by who woke first: under `wrk -c64`, one worker was measured holding all 64
/// while the other idled, at half the throughput of an even split.
struct Acceptor {
    listener: TcpListener,
    /// The connection budget of all workers together.
    room: Arc<Semaphore>,
    inboxes: Vec<mpsc::UnboundedSender<Handoff>>,
    loads: Arc<[AtomicUsize]>,
    stop: watch::Receiver<Option<Duration>>,
}

impl Acceptor {
    async fn run(mut self) {
        let listener = match tokio::net::TcpListener::from_std(self.listener) {
            Ok(listener) => listener,
            Err(e) => {
                tracing::error!(error = %e, "the pages listener could not be watched");
                return;
            }
        };
        loop {
            let room = tokio::select! {
                room = self.room.clone().acquire_owned() => room,
                _ = self.stop.changed() => break,
            };
            let Ok(room) = room else { break };
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
            let Ok(stream) = stream.into_std() else {
                continue;
            };
            // With the whole budget shared out evenly, the least loaded worker has room.
            let Some(index) =
                (0..self.loads.len()).min_by_key(|&i| self.loads[i].load(Ordering::Relaxed))
            else {
                break;
            };
            self.loads[index].fetch_add(1, Ordering::Relaxed);
            let handoff = Handoff { stream, peer, room };
            if self.inboxes[index].send(handoff).is_err() {
                // That worker has stopped: so are the others.
                break;
            }
        }
    }
}

/// Runs when a connection's task ends, however it ends (aborted at a stop too): takes the
/// connection off its worker's books, then gives its room back (in that order, so the
/// acceptor never sees room free while the worker still counts the connection).
struct Ending {
    id: u64,
    connections: Rc<RefCell<OpenConnections>>,
    all_closed: Rc<Notify>,
    load: Rc<Load>,
    _room: OwnedSemaphorePermit,
}

impl Drop for Ending {
    fn drop(&mut self) {
        let mut open = self.connections.borrow_mut();
        open.remove(&self.id);
        if open.is_empty() {
            self.all_closed.notify_one();
        }
        self.load.ended();
    }
}

/// A worker's count of open connections, which the acceptor reads to choose.
struct Load {
    loads: Arc<[AtomicUsize]>,
    index: usize,
}

impl Load {
    fn ended(&self) {
        self.loads[self.index].fetch_sub(1, Ordering::Relaxed);
    }
}

struct Worker<H> {
    handed: mpsc::UnboundedReceiver<Handoff>,
    load: Load,
    limits: Arc<WireLimits>,
    counts: Arc<ConnectionCounts>,
    trusted: TrustedProxies,
    handler: H,
    stop: watch::Receiver<Option<Duration>>,
}

impl<H: Handler> Worker<H> {
    async fn run(mut self) {
        let load = Rc::new(self.load);
        let turn = Rc::new(Turn::new());
        let stopping = Rc::new(Cell::new(false));
        let connections: Rc<RefCell<OpenConnections>> = Rc::default();
        let all_closed = Rc::new(Notify::new());
        let mut next_id = 0_u64;
        loop {
            let handed = tokio::select! {
                handed = self.handed.recv() => handed,
                _ = self.stop.changed() => break,
            };
            let Some(Handoff { stream, peer, room }) = handed else {
                break;
            };
            let stream = match tokio::net::TcpStream::from_std(stream) {
                Ok(stream) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, "a pages worker could not take a connection");
                    load.ended();
                    continue;
                }
            };
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
                turn: turn.clone(),
                idle: idle.clone(),
                accepted,
                wait: Box::pin(tokio::time::sleep_until(
                    accepted + self.limits.header_timeout,
                )),
            };
            let id = next_id;
            next_id += 1;
            let ending = Ending {
                id,
                connections: connections.clone(),
                all_closed: all_closed.clone(),
                load: load.clone(),
                _room: room,
            };
            let task = tokio::task::spawn_local(async move {
                let _ending = ending;
                connection.serve().await;
                drop(slot);
            });
            connections
                .borrow_mut()
                .insert(id, (task.abort_handle(), idle));
        }
        stopping.set(true);
        let waiting: Vec<AbortHandle> = connections
            .borrow()
            .values()
            .filter(|(_, idle)| idle.get())
            .map(|(task, _)| task.clone())
            .collect();
        for task in waiting {
            task.abort();
        }
        let grace = (*self.stop.borrow()).unwrap_or_default();
        let _ = tokio::time::timeout(grace, async {
            while !connections.borrow().is_empty() {
                all_closed.notified().await;
            }
        })
        .await;
    }
}
