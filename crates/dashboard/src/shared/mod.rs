//! What every dashboard page shares: the guards (extractors) and the session's request
//! helpers, the rendering and redirects, the header's navigation, times and the views
//! chart as people read them, quota figures, and the parts of the Links and Files pages
//! that a thing behind a link has whatever it leads to.

pub(crate) mod behind_link;
pub(crate) mod chart;
pub(crate) mod guards;
pub(crate) mod nav;
pub(crate) mod quota_view;
pub(crate) mod render;
pub(crate) mod session;
pub(crate) mod when;
