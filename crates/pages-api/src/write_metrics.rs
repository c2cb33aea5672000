//! What the page writes record in the metrics (a no-op unless the server exports them).

use std::time::Instant;

/// Records a publish or a replacement of a page's files in the metrics: how long the write
/// took from the parsed request to its answer, and the page's size when it landed.
pub(crate) fn record_write(operation: &'static str, started: Instant, size: Option<u64>) {
    let outcome = if size.is_some() { "ok" } else { "error" };
    metrics::histogram!(
        "quire_publish_duration_seconds",
        "operation" => operation,
        "outcome" => outcome,
    )
    .record(started.elapsed());
    if let Some(size) = size {
        #[allow(clippy::cast_precision_loss)] // a histogram's value: sizes far below 2^53
        metrics::histogram!("quire_publish_bytes", "operation" => operation).record(size as f64);
    }
}
