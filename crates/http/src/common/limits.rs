//! What a client may hold open: a share of the connections per client address, counted
//! over both listeners, a share of a listener's connections for ordinary requests (the rest
//! kept for health checks), and a deadline on receiving a request's body (the API's
//! middleware here; the pages origin's server applies the same [`EdgeLimits`] itself).
//!
//! Headers have their own deadline (the server's client request timeout); without one on
//! the body, a client that declares a body and sends it a byte at a time holds a connection,
//! and its file descriptor, for ever, and a few thousand such clients stop the service.

use std::collections::HashMap;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Extensions, Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, HttpResponse, web};
use futures_util::Stream;

use crate::common::client_ip::TrustedProxies;

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

/// The paths a connection past its listener's ordinary share may still ask for.
const HEALTH_PATHS: [&str; 2] = ["/healthz", "/readyz"];

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

/// The `on_connect` hook of a listener: counts the connection against its client's share
/// and the listener's.
pub fn on_connect(
    counts: Arc<ConnectionCounts>,
    listener: Arc<ListenerShare>,
    limits: EdgeLimits,
    trusted: TrustedProxies,
) -> impl Fn(&dyn std::any::Any, &mut Extensions) + Send + Sync + 'static {
    move |io, data| {
        let peer = io
            .downcast_ref::<actix_web::rt::net::TcpStream>()
            .and_then(|s| s.peer_addr().ok());
        if let Some(peer) = peer {
            data.insert(
                counts
                    .open(peer.ip(), &limits, &trusted)
                    .on_listener(&listener),
            );
        }
    }
}

/// A request body that ends in an error once its deadline has passed.
struct DeadlineBody {
    inner: Payload,
    sleep: Pin<Box<tokio::time::Sleep>>,
    expired: Arc<AtomicBool>,
}

impl Stream for DeadlineBody {
    type Item = Result<web::Bytes, actix_web::error::PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.expired.load(Ordering::Relaxed) {
            return Poll::Ready(None);
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            self.expired.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(actix_web::error::PayloadError::Io(
                std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "request body not received in time",
                ),
            ))));
        }
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

fn refuse(
    req: ServiceRequest,
    status: actix_web::http::StatusCode,
    message: &str,
) -> ServiceResponse<BoxBody> {
    let response = HttpResponse::build(status)
        .insert_header((header::CONNECTION, "close"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .force_close()
        .json(serde_json::json!({ "error": error_code(status), "message": message }));
    req.into_response(response)
}

fn error_code(status: actix_web::http::StatusCode) -> &'static str {
    if status == actix_web::http::StatusCode::REQUEST_TIMEOUT {
        "request_timeout"
    } else {
        "too_many_connections"
    }
}

fn declared_length(req: &ServiceRequest) -> Option<u64> {
    req.headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

fn has_body(req: &ServiceRequest) -> bool {
    declared_length(req).is_some_and(|n| n > 0)
        || req.headers().contains_key(header::TRANSFER_ENCODING)
}

/// Middleware: refuses requests on a connection over its client's share, or other than a
/// health check over its listener's ordinary share (503, closed), and gives a request body
/// until [`EdgeLimits::body_deadline`]; a body still arriving then gets 408 and the
/// connection is closed.
///
/// # Errors
/// Those of the wrapped service.
pub async fn guard(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let (over_share, over_listener) = req
        .conn_data::<ClientSlot>()
        .map_or((false, false), |slot| (slot.over_share, slot.over_listener));
    if over_share {
        return Ok(refuse(
            req,
            actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
            "too many connections from your address; close some and try again",
        ));
    }
    if over_listener && !HEALTH_PATHS.contains(&req.path()) {
        return Ok(refuse(
            req,
            actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
            "the server holds as many connections as it takes; try again shortly",
        ));
    }
    if !has_body(&req) {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body);
    }
    let limits = req
        .app_data::<web::Data<EdgeLimits>>()
        .map_or_else(EdgeLimits::default, |l| *l.get_ref());
    let deadline = limits.body_deadline(declared_length(&req));
    let expired = Arc::new(AtomicBool::new(false));
    let mut req = req;
    let inner = req.take_payload();
    let body: Pin<Box<dyn Stream<Item = _>>> = Box::pin(DeadlineBody {
        inner,
        sleep: Box::pin(tokio::time::sleep(deadline)),
        expired: expired.clone(),
    });
    req.set_payload(Payload::from(body));
    let response = next.call(req).await?;
    if expired.load(Ordering::Relaxed) {
        let (req, _) = response.into_parts();
        let secs = deadline.as_secs();
        tracing::info!(deadline_secs = secs, "request body not received in time");
        return Ok(ServiceResponse::new(
            req,
            HttpResponse::RequestTimeout()
                .insert_header((header::CONNECTION, "close"))
                .force_close()
                .json(serde_json::json!({
                    "error": "request_timeout",
                    "message": format!("the request body did not arrive within {secs} s"),
                })),
        ));
    }
    Ok(response.map_into_boxed_body())
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
