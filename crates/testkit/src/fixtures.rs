//! Small fixtures: a clock tests can move, a timer they fire, an offload that runs each job
//! on a thread of its own (and one that proves the async worker stayed free meanwhile), and
//! principals.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use quire_accounts::{AccountService, AccountStore, CreateAccount, CreatedAccount};

use quire_kernel::offload::{Job, Running};
use quire_kernel::{
    AccountId, App, Apps, Clock, InfraError, KeyId, Offload, Principal, PrincipalKind, ProjectId,
    Tier, Timer,
};
use time::{Duration, OffsetDateTime};

/// A clock that stands still until told to move.
#[derive(Debug)]
pub struct FixedClock(Mutex<OffsetDateTime>);

impl FixedClock {
    /// Starts at 2026-01-01T00:00:00Z.
    #[must_use]
    pub fn new() -> Self {
        Self::at(OffsetDateTime::from_unix_timestamp(1_767_225_600).expect("valid timestamp"))
    }

    #[must_use]
    pub fn at(t: OffsetDateTime) -> Self {
        Self(Mutex::new(t))
    }

    pub fn advance(&self, by: Duration) {
        let mut t = self.0.lock().expect("clock lock");
        *t += by;
    }
}

impl Default for FixedClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for FixedClock {
    fn now(&self) -> OffsetDateTime {
        *self.0.lock().expect("clock lock")
    }
}

/// A timer whose sleeps end only when the test says so: [`HandTimer::fire`] ends every
/// sleep begun before it, whatever its duration.
#[derive(Debug)]
pub struct HandTimer(tokio::sync::watch::Sender<u64>);

impl HandTimer {
    #[must_use]
    pub fn new() -> Self {
        Self(tokio::sync::watch::channel(0).0)
    }

    /// Ends every sleep in progress.
    pub fn fire(&self) {
        self.0.send_modify(|n| *n += 1);
    }
}

impl Default for HandTimer {
    fn default() -> Self {
        Self::new()
    }
}

impl Timer for HandTimer {
    fn sleep(
        &self,
        _duration: std::time::Duration,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>> {
        let mut fired = self.0.subscribe();
        Box::pin(async move {
            if fired.changed().await.is_err() {
                // The timer is gone: nothing will ever fire it.
                std::future::pending::<()>().await;
            }
        })
    }
}

/// An offload that runs each job on a new thread: off the test's runtime, as the server's
/// blocking pool is, with the job's panic resumed on whoever awaits it.
#[derive(Debug, Default)]
pub struct ThreadOffload;

impl Offload for ThreadOffload {
    fn run(&self, job: Job) -> Running {
        Box::pin(async move {
            let (done, result) = tokio::sync::oneshot::channel();
            std::thread::spawn(move || {
                let _ = done.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)));
            });
            match result.await {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
                Err(_) => Err(InfraError::new(
                    "an offloaded job's thread ended without a result",
                )),
            }
        })
    }
}

/// An offload that runs each job on a thread as [`ThreadOffload`] does, counting them; a
/// job, once done, waits for a [`Heartbeats::beat`], which only a task on the test's async
/// worker sends. On a one-worker runtime a job thus ends only if that worker was free to run
/// another task while the job ran; a use case that does the work inline runs no job.
#[derive(Debug)]
pub struct Heartbeats {
    jobs: AtomicUsize,
    beats: Sender<()>,
    heard: Arc<Mutex<Receiver<()>>>,
}

impl Heartbeats {
    #[must_use]
    pub fn new() -> Self {
        let (beats, heard) = channel();
        Self {
            jobs: AtomicUsize::new(0),
            beats,
            heard: Arc::new(Mutex::new(heard)),
        }
    }

    /// How many jobs were handed over so far.
    #[must_use]
    pub fn jobs(&self) -> usize {
        self.jobs.load(Ordering::SeqCst)
    }

    /// A task for the worker to run beside a use case that waits on a job: it yields once,
    /// then beats.
    ///
    /// # Panics
    /// Never: the receiving end lives as long as `self`.
    pub async fn beat(&self) {
        tokio::task::yield_now().await;
        self.beats.send(()).expect("the heartbeats are heard");
    }
}

impl Default for Heartbeats {
    fn default() -> Self {
        Self::new()
    }
}

impl Offload for Heartbeats {
    fn run(&self, job: Job) -> Running {
        self.jobs.fetch_add(1, Ordering::SeqCst);
        let heard = self.heard.clone();
        ThreadOffload.run(Box::new(move || {
            let done = job();
            let beat = heard
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .recv_timeout(std::time::Duration::from_secs(10));
            assert!(
                beat.is_ok(),
                "no other task ran on the async worker while the job ran"
            );
            done
        }))
    }
}

/// A master-key principal of `account`, whose home is `default_project`.
#[must_use]
pub fn master(account: AccountId, default_project: ProjectId) -> Principal {
    Principal {
        account_id: account,
        kind: PrincipalKind::Key {
            key_id: KeyId::new(),
            tier: Tier::Master,
        },
        home_project_id: default_project,
        is_platform_admin: false,
    }
}

/// An app-key principal with the given key id and home project.
#[must_use]
pub fn app_key(account: AccountId, key: KeyId, home: ProjectId, apps: &[App]) -> Principal {
    Principal {
        account_id: account,
        kind: PrincipalKind::Key {
            key_id: key,
            tier: Tier::App(Apps::new(apps.iter().copied()).expect("non-empty apps")),
        },
        home_project_id: home,
        is_platform_admin: false,
    }
}

/// What an operator would type for an activated account `handle` (email `handle@example.com`).
#[must_use]
pub fn new_account(handle: &str) -> CreateAccount {
    CreateAccount {
        email: format!("{handle}@example.com"),
        handle: handle.into(),
        password: None,
        platform_admin: false,
        activated: true,
    }
}

/// Creates an activated account `handle` with its default project and master key.
///
/// # Panics
/// When the store refuses it.
pub async fn create_account(
    store: Arc<dyn AccountStore>,
    clock: Arc<dyn Clock>,
    handle: &str,
) -> CreatedAccount {
    AccountService::new(store, clock, Arc::new(ThreadOffload))
        .create(new_account(handle))
        .await
        .expect("create account")
}
