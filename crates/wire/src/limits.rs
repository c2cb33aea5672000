//! What a client may hold open, counted the same way on both listeners: a share of the
//! connections per client address, a share of a listener's connections for ordinary requests
//! (the rest kept for health checks), and the deadline on receiving a request's body.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::client_ip::TrustedProxies;

/// The edge's limits on what clients hold open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeLimits {
    /// Time to receive any request body, on top of [`EdgeLimits::body_min_rate`].
    pub body_timeout: Duration,
    /// Bytes per second a body must at least arrive at: the deadline grows with the
    /// declared length (or the largest body allowed, for a body of unknown length).
    pub body_min_rate: u64,
    /// The largest body any route takes, for bodies sent without a length.
    pub max_body: u64,
    /// Connections one client address may hold at once (trusted proxies excepted).
    pub per_client: u32,
}

impl Default for EdgeLimits {
    fn default() -> Self {
        Self {
            body_timeout: Duration::from_secs(10),
            body_min_rate: 64 * 1024,
            max_body: 80 * 1024 * 1024,
            per_client: 256,
        }
    }
}

impl EdgeLimits {
    /// The time allowed to receive a body of `length` bytes (`None`: unknown).
    #[must_use]
    pub fn body_deadline(&self, length: Option<u64>) -> Duration {
        let bytes = length.unwrap_or(self.max_body).min(self.max_body);
        self.body_timeout + Duration::from_secs(bytes / self.body_min_rate.max(1))
    }
}

/// Open connections per client address, shared by every worker of a listener.
#[derive(Debug, Default)]
pub struct ConnectionCounts {
    open: Mutex<HashMap<IpAddr, u32>>,
}

/// The connections open on one listener, and how many of them may carry ordinary requests.
/// The listener takes more (up to what the open-file limit allows), so that it keeps
/// accepting during a flood: a connection past the ordinary share is answered only for a
/// health or readiness check, and any other request on it gets 503 and is closed. A listener
/// that stopped accepting instead would leave the checks in its queue, where the kernel
/// drops connection attempts once the queue is full and clients retry them after seconds.
#[derive(Debug)]
pub struct ListenerShare {
    open: AtomicUsize,
    ordinary: usize,
}

impl ListenerShare {
    /// A listener on which `ordinary` connections carry any request.
    #[must_use]
    pub fn new(ordinary: usize) -> Arc<Self> {
        Arc::new(Self {
            open: AtomicUsize::new(0),
            ordinary,
        })
    }

    /// Connections open on the listener now.
    #[must_use]
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }
}

/// Put in each connection's data when it opens; gives its place back when it closes.
#[derive(Debug)]
pub struct ClientSlot {
    counts: Arc<ConnectionCounts>,
    ip: IpAddr,
    /// The client already held its share when this connection opened.
    pub over_share: bool,
    listener: Option<Arc<ListenerShare>>,
    /// The listener already held its ordinary share when this connection opened.
    pub over_listener: bool,
}

impl ClientSlot {
    /// Counts the connection on `listener` too.
    #[must_use]
    pub fn on_listener(mut self, listener: &Arc<ListenerShare>) -> Self {
        let open = listener.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.over_listener = open > listener.ordinary;
        self.listener = Some(listener.clone());
        self
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        if let Some(listener) = &self.listener {
            listener.open.fetch_sub(1, Ordering::Relaxed);
        }
        let mut open = self
            .counts
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

impl ConnectionCounts {
    /// Counts a new connection from `ip`.
    #[must_use]
    pub fn open(
        self: &Arc<Self>,
        ip: IpAddr,
        limits: &EdgeLimits,
        trusted: &TrustedProxies,
    ) -> ClientSlot {
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = open.entry(ip).or_insert(0);
        *n += 1;
        ClientSlot {
            counts: self.clone(),
            ip,
            over_share: *n > limits.per_client && !trusted.0.contains(&ip),
            listener: None,
            over_listener: false,
        }
    }

    /// Connections open from `ip` now.
    #[must_use]
    pub fn of(&self, ip: IpAddr) -> u32 {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&ip)
            .copied()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_deadline_grows_with_the_declared_length_up_to_the_largest_body() {
        let limits = EdgeLimits {
            body_timeout: Duration::from_secs(10),
            body_min_rate: 1000,
            max_body: 100_000,
            per_client: 2,
        };
        assert_eq!(limits.body_deadline(Some(0)), Duration::from_secs(10));
        assert_eq!(limits.body_deadline(Some(60_000)), Duration::from_secs(70));
        assert_eq!(
            limits.body_deadline(Some(u64::MAX)),
            Duration::from_secs(110)
        );
        assert_eq!(limits.body_deadline(None), Duration::from_secs(110));
    }

    #[test]
    fn a_client_over_its_share_is_marked_and_its_places_come_back() {
        let limits = EdgeLimits {
            per_client: 2,
            ..EdgeLimits::default()
        };
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let trusted = TrustedProxies(vec![proxy]);
        let counts = Arc::new(ConnectionCounts::default());
        let ip: IpAddr = "203.0.113.7".parse().unwrap();
        let a = counts.open(ip, &limits, &trusted);
        let b = counts.open(ip, &limits, &trusted);
        let c = counts.open(ip, &limits, &trusted);
        assert!(!a.over_share && !b.over_share && c.over_share);
        assert_eq!(counts.of(ip), 3);
        drop((a, c));
        assert_eq!(counts.of(ip), 1);
        assert!(!counts.open(ip, &limits, &trusted).over_share);
        let proxied: Vec<ClientSlot> = (0..5)
            .map(|_| counts.open(proxy, &limits, &trusted))
            .collect();
        assert!(
            proxied.iter().all(|s| !s.over_share),
            "a trusted proxy carries many clients"
        );
        drop((b, proxied));
        assert_eq!(counts.of(ip), 0);
    }

    #[test]
    fn connections_past_a_listeners_ordinary_share_are_marked_and_their_places_come_back() {
        let limits = EdgeLimits::default();
        let trusted = TrustedProxies(Vec::new());
        let counts = Arc::new(ConnectionCounts::default());
        let listener = ListenerShare::new(2);
        let open = |last: u8| {
            counts
                .open(IpAddr::from([127, 0, 0, last]), &limits, &trusted)
                .on_listener(&listener)
        };
        let (a, b, c) = (open(1), open(2), open(3));
        assert!(!a.over_listener && !b.over_listener && c.over_listener);
        assert_eq!(listener.open(), 3);
        drop((a, c));
        assert_eq!(listener.open(), 1);
        assert!(!open(4).over_listener);
        drop(b);
        assert_eq!(listener.open(), 0);
    }
}
