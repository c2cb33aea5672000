//! The replica's cap on data API connections and each account's share of it. Every
//! connection an instance opens (its listener, the authenticator's, the owner's) holds a
//! [`Hold`] for as long as it is open, counted against the cap and against the account the
//! database belongs to. When either is reached, the registry is asked to make room (it
//! closes idle connections, then stops idle instances, least recently used first); when
//! nothing can go, the caller waits for a connection to close, and is refused at its
//! deadline with the reason.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use quire_databases::InstanceError;
use quire_kernel::AccountId;
use tokio::sync::Notify;

use crate::meter::Meter;

/// Which limit a connection ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Full {
    /// The account holds its share of the cap.
    Share,
    /// The replica holds the whole cap.
    Cap,
}

impl Full {
    /// The label of its refusals in the metrics.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Share => "share",
            Self::Cap => "cap",
        }
    }

    /// What the gateway answers.
    pub fn error(self) -> InstanceError {
        match self {
            Self::Share => InstanceError::AccountBusy,
            Self::Cap => InstanceError::Saturated,
        }
    }
}

/// What frees connections when a limit is reached: the registry of instances.
pub(crate) trait MakeRoom: Send + Sync {
    /// Closes at least one connection that counts against `full` for `account` (the
    /// account's own when it is at its share, any account's when the cap is reached);
    /// whether it did.
    fn make_room(&self, full: Full, account: AccountId) -> bool;
}

#[derive(Default)]
struct Counts {
    open: usize,
    by_account: HashMap<AccountId, usize>,
}

pub(crate) struct Cap {
    max: usize,
    share: usize,
    counts: Mutex<Counts>,
    /// Woken when a connection closes.
    freed: Notify,
    room: OnceLock<Weak<dyn MakeRoom>>,
    meter: Arc<Meter>,
}

impl Cap {
    /// A cap of `max` connections, of which one account may hold `share` (at most `max`).
    pub fn new(max: usize, share: usize, meter: Arc<Meter>) -> Arc<Self> {
        let share = share.min(max);
        meter.limits(max, share);
        Arc::new(Self {
            max,
            share,
            counts: Mutex::new(Counts::default()),
            freed: Notify::new(),
            room: OnceLock::new(),
            meter,
        })
    }

    /// Who makes room when a limit is reached (set once, by the registry).
    pub fn made_room_by(&self, room: Weak<dyn MakeRoom>) {
        let _ = self.room.set(room);
    }

    pub fn meter(&self) -> &Arc<Meter> {
        &self.meter
    }

    /// Connections open under the cap, all accounts together and `account`'s.
    pub fn open(&self, account: AccountId) -> (usize, usize) {
        self.counts.lock().map_or((0, 0), |c| {
            (c.open, c.by_account.get(&account).copied().unwrap_or(0))
        })
    }

    fn try_take(self: &Arc<Self>, account: AccountId) -> Result<Hold, Full> {
        let mut counts = self.counts.lock().map_err(|_| Full::Cap)?;
        let mine = counts.by_account.get(&account).copied().unwrap_or(0);
        if mine >= self.share {
            return Err(Full::Share);
        }
        if counts.open >= self.max {
            return Err(Full::Cap);
        }
        counts.open += 1;
        *counts.by_account.entry(account).or_default() += 1;
        self.meter.open(counts.open);
        Ok(Hold {
            cap: self.clone(),
            account,
        })
    }

    fn release(&self, account: AccountId) {
        if let Ok(mut counts) = self.counts.lock() {
            counts.open = counts.open.saturating_sub(1);
            if let Some(mine) = counts.by_account.get_mut(&account) {
                *mine = mine.saturating_sub(1);
                if *mine == 0 {
                    counts.by_account.remove(&account);
                }
            }
            self.meter.open(counts.open);
        }
        self.freed.notify_waiters();
    }

    fn make_room(&self, full: Full, account: AccountId) -> bool {
        let room = self.room.get().and_then(Weak::upgrade);
        room.is_some_and(|room| room.make_room(full, account))
    }

    /// A place under the cap for one more of `account`'s connections: at once, after
    /// making room, or when one closes within `wait`.
    ///
    /// # Errors
    /// The limit still reached at the deadline.
    pub async fn take(self: &Arc<Self>, account: AccountId, wait: Duration) -> Result<Hold, Full> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Listening before looking, so a connection closed in between is not missed.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            let full = match self.try_take(account) {
                Ok(hold) => return Ok(hold),
                Err(full) => full,
            };
            if self.make_room(full, account) {
                continue;
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return Err(full);
            }
        }
    }
}

/// One open connection's place under the cap, given back when dropped.
pub(crate) struct Hold {
    cap: Arc<Cap>,
    account: AccountId,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.cap.release(self.account);
    }
}

/// An account's way to the cap: what its instances' pools take their places from.
#[derive(Clone)]
pub(crate) struct Share {
    pub cap: Arc<Cap>,
    pub account: AccountId,
}

impl Share {
    /// [`Cap::take`] for this account.
    ///
    /// # Errors
    /// The limit still reached at the deadline.
    pub async fn take(&self, wait: Duration) -> Result<Hold, Full> {
        self.cap.take(self.account, wait).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Makes room by dropping holds it was given, oldest first.
    #[derive(Default)]
    struct Idle {
        held: Mutex<Vec<Hold>>,
        asked: Mutex<Vec<Full>>,
        made: AtomicUsize,
    }

    impl MakeRoom for Idle {
        fn make_room(&self, full: Full, _account: AccountId) -> bool {
            self.asked.lock().unwrap().push(full);
            let held = {
                let mut held = self.held.lock().unwrap();
                (!held.is_empty()).then(|| held.remove(0))
            };
            let made = held.is_some();
            drop(held);
            if made {
                self.made.fetch_add(1, Ordering::Relaxed);
            }
            made
        }
    }

    fn cap(max: usize, share: usize) -> (Arc<Cap>, Arc<Idle>) {
        let cap = Cap::new(max, share, Arc::new(Meter::default()));
        let idle = Arc::new(Idle::default());
        let weak = Arc::downgrade(&idle);
        cap.made_room_by(weak);
        (cap, idle)
    }

    #[tokio::test]
    async fn an_account_stops_at_its_share_and_others_go_on_to_the_cap() {
        let (cap, idle) = cap(5, 3);
        let (ann, bob) = (AccountId::new(), AccountId::new());
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(cap.take(ann, Duration::ZERO).await.unwrap());
        }
        assert_eq!(cap.take(ann, Duration::ZERO).await.err(), Some(Full::Share));
        held.push(cap.take(bob, Duration::ZERO).await.unwrap());
        held.push(cap.take(bob, Duration::ZERO).await.unwrap());
        assert_eq!(cap.take(bob, Duration::ZERO).await.err(), Some(Full::Cap));
        assert_eq!(cap.open(ann), (5, 3));
        assert_eq!(*idle.asked.lock().unwrap(), [Full::Share, Full::Cap]);
        // Each close frees a place for whoever is under its limits.
        held.remove(0);
        assert_eq!(cap.open(ann), (4, 2));
        held.push(cap.take(bob, Duration::ZERO).await.unwrap());
        assert_eq!(cap.take(bob, Duration::ZERO).await.err(), Some(Full::Share));
        assert_eq!(cap.take(ann, Duration::ZERO).await.err(), Some(Full::Cap));
    }

    #[tokio::test]
    async fn a_full_cap_is_made_room_in_or_waited_for() {
        let (cap, idle) = cap(2, 2);
        let ann = AccountId::new();
        let idle_one = cap.take(ann, Duration::ZERO).await.unwrap();
        idle.held.lock().unwrap().push(idle_one);
        let busy = cap.take(ann, Duration::ZERO).await.unwrap();
        // The idle one is closed to make room.
        let _next = cap.take(ann, Duration::ZERO).await.unwrap();
        assert_eq!(idle.made.load(Ordering::Relaxed), 1);
        // Nothing idle: the caller waits until the busy one closes.
        let waiting = tokio::spawn({
            let cap = cap.clone();
            async move { cap.take(ann, Duration::from_secs(30)).await.is_ok() }
        });
        tokio::task::yield_now().await;
        drop(busy);
        assert!(waiting.await.unwrap());
    }

    #[test]
    fn a_share_is_at_most_the_cap() {
        let (cap, _) = cap(4, 10);
        assert_eq!(cap.share, 4);
    }
}
