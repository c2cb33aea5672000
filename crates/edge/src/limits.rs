//! What a client may hold open: a share of the connections per client address, counted
//! over both listeners, a share of a listener's connections for ordinary requests (the rest
//! kept for health checks), and a deadline on receiving a request's body (the API's
//! middleware here; the pages origin's server applies the same [`EdgeLimits`] itself).
//!
//! Headers have their own deadline (the server's client request timeout); without one on
//! the body, a client that declares a body and sends it a byte at a time holds a connection,
//! and its file descriptor, for ever, and a few thousand such clients stop the service.

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Extensions, Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, HttpResponse, web};
use futures_util::Stream;

use quire_wire::client_ip::TrustedProxies;
pub use quire_wire::limits::{ClientSlot, ConnectionCounts, EdgeLimits, ListenerShare};

/// The paths a connection past its listener's ordinary share may still ask for.
const HEALTH_PATHS: [&str; 2] = ["/healthz", "/readyz"];

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

/// A request body that ends in an error once its deadline has passed. The connection's
/// payload is shared with [`guard`], which may keep it past the handler (see there).
struct DeadlineBody {
    inner: Rc<RefCell<Payload>>,
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
        Pin::new(&mut *self.inner.borrow_mut()).poll_next(cx)
    }
}

/// An answer's body that keeps the request's body reader alive until it is sent. actix-web
/// drains a chunked request body whose reader is gone, for as long as the client sends it,
/// before it closes; while the reader lives it closes after the answer instead, reading for
/// at most the client disconnect timeout (1 s) so the answer is not lost to a reset. So an
/// answer that closes its connection (a 413 past a cap, a 408) keeps it: a client that sends
/// its whole body before reading sees the connection end.
struct KeepsReader {
    body: BoxBody,
    _reader: Rc<RefCell<Payload>>,
}

impl MessageBody for KeepsReader {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> actix_web::body::BodySize {
        self.body.size()
    }

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<web::Bytes, Self::Error>>> {
        Pin::new(&mut self.body).poll_next(cx)
    }
}

/// `response`, keeping `reader` until its body is sent when it closes its connection.
fn closing_after(
    response: ServiceResponse<BoxBody>,
    reader: Rc<RefCell<Payload>>,
) -> ServiceResponse<BoxBody> {
    if response.response().head().keep_alive() {
        return response;
    }
    response.map_body(|_, body| {
        BoxBody::new(KeepsReader {
            body,
            _reader: reader,
        })
    })
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
    let inner = Rc::new(RefCell::new(req.take_payload()));
    let body: Pin<Box<dyn Stream<Item = _>>> = Box::pin(DeadlineBody {
        inner: inner.clone(),
        sleep: Box::pin(tokio::time::sleep(deadline)),
        expired: expired.clone(),
    });
    req.set_payload(Payload::from(body));
    let response = next.call(req).await?;
    if expired.load(Ordering::Relaxed) {
        let (req, _) = response.into_parts();
        let secs = deadline.as_secs();
        tracing::info!(deadline_secs = secs, "request body not received in time");
        let timeout = HttpResponse::RequestTimeout()
            .insert_header((header::CONNECTION, "close"))
            .force_close()
            .json(serde_json::json!({
                "error": "request_timeout",
                "message": format!("the request body did not arrive within {secs} s"),
            }));
        return Ok(closing_after(ServiceResponse::new(req, timeout), inner));
    }
    Ok(closing_after(response.map_into_boxed_body(), inner))
}
