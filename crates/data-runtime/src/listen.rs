//! An instance's `LISTEN pgrst` connection and the schema reloads it asks for.
//!
//! The connection is read without pause, so the cluster's notification queue never waits
//! on this instance, and what it asks for is coalesced: a notification that asks for a
//! reload wakes the reloader, which loads the schema at most once a second (the limit a
//! request's unknown name has too) and only when a notification arrived since the last
//! load began. However many notifications a burst holds, it costs a load at its start and
//! one after its last, so the cache ends as the catalog is. A request naming what the cache
//! lacks loads it too, under the same limit ([`on_miss`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use futures_util::StreamExt;
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

/// A request named what the cache lacks: the schema is loaded again, unless a load began
/// within the last second. Then, if a notification is waiting for its load (most likely
/// the DDL that made what the request names), the request waits for that load, at the
/// second's end, rather than hear that its table does not exist; whether a load ended.
pub(crate) async fn on_miss(instance: &Instance) -> bool {
    let generation = || instance.generation.load(Ordering::Acquire);
    let before = generation();
    let mut guard = instance.loading.lock().await;
    // A load that ended while this waited for it is as good as one of its own.
    if generation() != before {
        return true;
    }
    let since = instance.since_load();
    if since < RELOAD_EVERY {
        if !instance.asked.outstanding() {
            return false;
        }
        drop(guard);
        tokio::time::sleep(RELOAD_EVERY - since).await;
        guard = instance.loading.lock().await;
        if generation() != before {
            return true;
        }
    }
    instance.load_schema(&guard, Cause::Miss).await.is_ok()
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
