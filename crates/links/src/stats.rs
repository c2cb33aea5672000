//! What a link's visits leave besides their count: bot views, the hosts that referred
//! visitors, when it was last followed. No address and no user agent is kept
//! (`docs/decisions/link-service.md`).

use quire_kernel::LinkId;
use time::Date;

/// The visits of one link since the last flush, beside the views counted apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VisitNotes {
    pub link: LinkId,
    /// Views by preview and crawler user agents: counted here, never as views.
    pub bot_views: u64,
    /// Referrer hosts with the views they sent.
    pub referrers: Vec<(String, u64)>,
    /// A person's view was counted (the link's `lastViewedAt` moves).
    pub viewed: bool,
}

/// One UTC day of a link's counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayCount {
    pub day: Date,
    pub views: u64,
    pub bot_views: u64,
}

/// A link's counts over a span of days.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// The days with any view or bot view, oldest first.
    pub days: Vec<DayCount>,
    /// Referrer hosts with their views over the span, most first (ties by host).
    pub referrers: Vec<(String, u64)>,
}
