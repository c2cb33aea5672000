//! One log line per API request, at info, once its answer is known: the method, the route as
//! registered (`/api/page/v1/pages/{id}`), the status and the time taken. The same three
//! label the request's count and latency in the metrics.
//!
//! The raw path and query are never logged: a query may carry a one-time token (activation,
//! password reset, a page pass) and a path is as long as the client likes. Anything logged
//! while the request runs carries the same method and route.

use std::time::Instant;

use actix_web::Error;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use tracing::Instrument;

/// Route recorded for a request no route matched (its path is the client's text).
const UNMATCHED: &str = "(no route)";

/// Middleware: logs and counts the request once, when it completes.
///
/// # Errors
/// Those of the wrapped service, unchanged.
pub async fn log_request(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody + 'static>, Error> {
    let started = Instant::now();
    let route = req.match_pattern();
    let route = route.as_deref().unwrap_or(UNMATCHED).to_owned();
    let method = req.method().as_str().to_owned();
    let span = tracing::info_span!("request", method = %method, route = %route);
    let outcome = next.call(req).instrument(span.clone()).await;
    let status = match &outcome {
        Ok(response) => response.status(),
        Err(error) => error.as_response_error().status_code(),
    };
    let took = started.elapsed();
    tracing::info!(
        parent: &span,
        status = status.as_u16(),
        micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
        "answered"
    );
    let status = quire_wire::message::status_text(status.as_u16());
    metrics::counter!(
        "quire_http_requests_total",
        "method" => method.clone(),
        "route" => route.clone(),
        "status" => status,
    )
    .increment(1);
    metrics::histogram!(
        "quire_http_request_duration_seconds",
        "method" => method,
        "route" => route,
    )
    .record(took);
    outcome
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use actix_web::middleware::from_fn;
    use actix_web::{App, HttpResponse, test, web};
    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    /// Collects what the subscriber writes.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Self;
        fn make_writer(&'a self) -> Self {
            self.clone()
        }
    }

    #[actix_web::test]
    async fn one_line_per_request_with_the_route_and_never_the_query() {
        let captured = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(captured.clone())
            .with_ansi(false)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let app = test::init_service(
            App::new()
                .wrap(from_fn(log_request))
                .route(
                    "/reset/{step}",
                    web::get().to(|| async { HttpResponse::Ok().finish() }),
                )
                .route(
                    "/gone",
                    web::get().to(|| async { HttpResponse::Gone().finish() }),
                ),
        )
        .await;
        for uri in [
            "/reset/confirm?token=s3cr3t-token-value",
            "/gone",
            "/no/such/path?token=another-secret",
        ] {
            test::call_service(&app, test::TestRequest::get().uri(uri).to_request()).await;
        }
        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "one line per request: {text}");
        assert!(lines[0].contains("route=/reset/{step}") && lines[0].contains("status=200"));
        assert!(lines[1].contains("route=/gone") && lines[1].contains("status=410"));
        assert!(lines[2].contains("(no route)") && lines[2].contains("status=404"));
        assert!(
            lines
                .iter()
                .all(|l| l.contains(" INFO ") && l.contains("method=GET"))
        );
        assert!(
            !text.contains("secret") && !text.contains("confirm"),
            "{text}"
        );
    }
}
