//! What of PostgREST's behaviour that PostgREST leaves off by default a plan may use: the
//! database's settings, as the gateway hands them over ([`crate::plan_with`]). The exposed
//! schemas are the schema cache's own (`SchemaCache::schemas`), since the cache is loaded
//! for them.

use crate::error::RestError;
use crate::grammar::SelectItem;

/// The settings a request is planned under; the default is PostgREST's: all off, no cap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Settings {
    /// `count()`, `sum()`, `avg()`, `min()`, `max()` in `select` (`db-aggregates-enabled`);
    /// off, they are `400 PGRST123`.
    pub aggregates: bool,
    /// `Accept: application/vnd.pgrst.plan` answers the plan (`db-plan-enabled`); off, it
    /// is a media type like any other not served (`406 PGRST107`).
    pub explain: bool,
    /// `Prefer: tx=commit` and `tx=rollback` honoured (`db-tx-end =
    /// commit-allow-override`); off, they are ignored.
    pub tx_override: bool,
    /// Most rows a read or a call answers, and each resource embedded in them
    /// (`db-max-rows`); a write's returned rows are not capped, as in PostgREST.
    pub max_rows: Option<u64>,
}

/// Whether `items` (at any depth of embedding) holds an aggregate.
fn aggregates_in(items: &[SelectItem]) -> bool {
    items.iter().any(|i| match i {
        SelectItem::Aggregate(_) => true,
        SelectItem::Embed(e) => aggregates_in(&e.select),
        _ => false,
    })
}

/// # Errors
/// 400 PGRST123 when `select` aggregates and aggregates are off.
pub(crate) fn check_aggregates(settings: Settings, select: &[SelectItem]) -> Result<(), RestError> {
    if settings.aggregates || !aggregates_in(select) {
        return Ok(());
    }
    Err(RestError::new(
        400,
        "PGRST123",
        "Use of aggregate functions is not allowed",
    ))
}
