//! An instance's `LISTEN pgrst` connection, the schema reloads it asks for, and those a
//! request's miss asks for.
//!
//! The connection is read without pause, so the cluster's notification queue never waits
//! on this instance, and what it asks for is coalesced: a notification that asks for a
//! reload wakes the reloader, which loads the schema at most once a second and only when a
//! notification arrived since the last load began. However many notifications a burst
//! holds, it costs a load at its start and one after its last, so the cache ends as the
//! catalog is.
//!
//! A request naming what the cache lacks does not wait for any of that: it asks the
//! catalog whether names of its kind changed since the load (`catalog.rs`), and loads when
//! they did ([`on_miss`]), so the request right after the DDL that made its table finds it
//! on every replica, whenever the notification comes, and with or without the DDL trigger.
//! A name that does not exist costs that one question, never a load, and the questions are
//! bounded: at most one every [`CHECK_EVERY`] per instance, each answering every miss of its
//! kind that arrived before it began.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use quire_databases::Missing;
use quire_kernel::InfraError;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Client};

use crate::cap::Hold;
use crate::instance::{Instance, RELOAD_EVERY};
use crate::meter::{Cause, Meter};

/// The channel PostgREST listens on; the DDL trigger and `POST …/reload` notify it.
const CHANNEL: &str = "pgrst";

/// Whether a `pgrst` payload asks for a schema reload, as PostgREST reads it: `reload
/// schema` (what the DDL trigger and `POST …/reload` send) or nothing. `reload config`
/// asks PostgREST to read its configuration from the database; an instance takes none
/// from there, so it is ignored with every other payload.
pub(crate) fn asks_reload(payload: &str) -> bool {
    matches!(payload, "" | "reload schema")
}

/// Notifications that asked for a reload, and how many of them the schema as loaded
/// covers.
#[derive(Default)]
pub(crate) struct Asked {
    count: AtomicU64,
    covered: AtomicU64,
    wake: Notify,
}

impl Asked {
    /// How many have been heard: a load that begins now covers them.
    pub fn heard(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }

    /// A load that began when [`Asked::heard`] said `seen` succeeded.
    pub fn covered(&self, seen: u64) {
        self.covered.fetch_max(seen, Ordering::AcqRel);
    }

    fn outstanding(&self) -> bool {
        self.covered.load(Ordering::Acquire) < self.heard()
    }
}

/// The listening connection, its place under the cap and its two tasks, which end when
/// this is dropped.
pub(crate) struct Listener {
    _client: Client,
    _hold: Hold,
    reader: JoinHandle<()>,
    reloader: JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.reader.abort();
        self.reloader.abort();
    }
}

fn infra(what: &str, e: impl std::fmt::Display) -> InfraError {
    InfraError::new(format!("{what}: {e}"))
}

/// A connection in `hold`'s place that `LISTEN`s on `pgrst`; if it ends, the instance
/// fails, and the next request starts another.
pub(crate) async fn listen(instance: &Arc<Instance>, hold: Hold) -> Result<Listener, InfraError> {
    let (client, mut connection, hold) = instance
        .pools
        .here()
        .open_listening(hold)
        .await
        .map_err(|e| infra("connecting as the authenticator", e))?;
    let asked = instance.asked.clone();
    let meter = instance.meter.clone();
    let weak: Weak<Instance> = Arc::downgrade(instance);
    let reader = tokio::spawn({
        let weak = weak.clone();
        async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(message) = messages.next().await {
                match message {
                    Ok(AsyncMessage::Notification(n)) if n.channel() == CHANNEL => {
                        heard(&asked, &meter, n.payload());
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            if let Some(instance) = weak.upgrade() {
                instance.listener_ended();
            }
        }
    });
    let reloader = tokio::spawn(reload_when_asked(weak, instance.asked.clone()));
    let listener = Listener {
        _client: client,
        _hold: hold,
        reader,
        reloader,
    };
    listener
        ._client
        .batch_execute(&format!("LISTEN {CHANNEL}"))
        .await
        .map_err(|e| infra("listening for schema reloads", e))?;
    Ok(listener)
}

fn heard(asked: &Asked, meter: &Meter, payload: &str) {
    let asks = asks_reload(payload);
    meter.heard(asks);
    if asks {
        asked.count.fetch_add(1, Ordering::AcqRel);
        // One stored wake-up however many arrive before the reloader looks: the burst is
        // coalesced here.
        asked.wake.notify_one();
    }
}

async fn reload_when_asked(instance: Weak<Instance>, asked: Arc<Asked>) {
    loop {
        asked.wake.notified().await;
        let Some(instance) = instance.upgrade() else {
            return;
        };
        let since = instance.since_load();
        if since < RELOAD_EVERY {
            tokio::time::sleep(RELOAD_EVERY - since).await;
        }
        let guard = instance.loading.lock().await;
        // A load that began after the last notification (a request's miss, or the
        // previous round of this loop) already read what it announced.
        if asked.outstanding()
            && let Err(e) = instance.load_schema(&guard, Cause::Notification).await
        {
            tracing::warn!(
                database = %instance.target_slug(),
                error = %e,
                "a data API schema reload failed"
            );
        }
    }
}

/// The least time between two questions a miss asks the catalog, whatever their kinds: a
/// client naming tables that do not exist in a loop costs at most 50 cheap statements a
/// second per instance (and a request right after the DDL waits at most this long more).
pub(crate) const CHECK_EVERY: Duration = Duration::from_millis(20);

/// The questions misses asked: how many of each kind began, and when the last began.
#[derive(Debug, Default)]
pub(crate) struct Checks {
    begun: [AtomicU64; 3],
    last: Mutex<Option<Instant>>,
}

impl Checks {
    fn slot(missing: Missing) -> usize {
        match missing {
            Missing::Table => 0,
            Missing::Column => 1,
            Missing::Function => 2,
        }
    }

    fn begun(&self, missing: Missing) -> u64 {
        self.begun[Self::slot(missing)].load(Ordering::Acquire)
    }

    /// How long until another may begin.
    fn wait(&self) -> Duration {
        let last = self.last.lock().ok().and_then(|l| *l);
        last.map_or(Duration::ZERO, |at| {
            CHECK_EVERY.saturating_sub(at.elapsed())
        })
    }

    fn begin(&self, missing: Missing) {
        if let Ok(mut last) = self.last.lock() {
            *last = Some(Instant::now());
        }
        self.begun[Self::slot(missing)].fetch_add(1, Ordering::AcqRel);
    }
}

/// A request named a `missing` kind of thing the cache lacks: once this returns, the cache
/// holds every such name the catalog held when it was called. Under the `loading` lock,
/// either a load or a question of the same kind that began after the call answers for it
/// (a question that found the catalog as loaded needs no load; one that did not loaded),
/// or it asks the question itself, once [`CHECK_EVERY`] has passed since the last, and
/// loads if the answer says the cache is stale. Its snapshot is taken after the call began,
/// so after whatever DDL the caller's request came after. A failure (no connection to be
/// had, the catalog not answering) is logged and leaves the cache as it is: the request
/// then hears that the name does not exist.
pub(crate) async fn on_miss(instance: &Instance, missing: Missing) {
    let loads = || instance.loads_begun.load(Ordering::Acquire);
    let checks = &instance.checks;
    let (loads_before, checks_before) = (loads(), checks.begun(missing));
    let mut guard = instance.loading.lock().await;
    loop {
        if loads() != loads_before || checks.begun(missing) != checks_before {
            return;
        }
        let wait = checks.wait();
        if wait.is_zero() {
            break;
        }
        drop(guard);
        tokio::time::sleep(wait).await;
        guard = instance.loading.lock().await;
    }
    checks.begin(missing);
    let outcome = match instance.catalog_moved(&guard, missing).await {
        Ok(true) => instance.load_schema(&guard, Cause::Miss).await,
        Ok(false) => Ok(()),
        Err(e) => Err(e),
    };
    if let Err(e) = outcome {
        tracing::warn!(
            database = %instance.target_slug(),
            error = %e,
            "a data API schema check or load for an unknown name failed"
        );
    }
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;

    use super::*;

    #[test]
    fn postgrest_payloads_ask_for_a_schema_reload_and_others_do_not() {
        assert!(asks_reload("reload schema"));
        assert!(asks_reload(""));
        for other in [
            "reload config",
            "Reload Schema",
            "reload schema ",
            "x",
            "reload",
        ] {
            assert!(!asks_reload(other), "{other:?}");
        }
    }

    #[tokio::test]
    async fn a_burst_wakes_the_reloader_once_and_leaves_one_load_outstanding() {
        let asked = Asked::default();
        let meter = Meter::default();
        for _ in 0..1000 {
            heard(&asked, &meter, "reload schema");
        }
        heard(&asked, &meter, "something else");
        assert_eq!(asked.heard(), 1000);
        assert_eq!(meter.figures().notifications, 1001);
        assert!(asked.outstanding());
        // One stored wake-up, not a thousand.
        assert!(asked.wake.notified().now_or_never().is_some());
        assert!(asked.wake.notified().now_or_never().is_none());
        asked.covered(asked.heard());
        assert!(!asked.outstanding());
    }
}
