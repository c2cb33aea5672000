//! `quire-links`: short links and the access policy they carry (access, argon2id password
//! hash, expiry, view budget and count, allow list), for pages and for any URL.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-projects` (the project addressing
//! rules) and small pure crates (`url` for the target rules, rand for public ids). A link
//! names its [`Target`]: a page's link is written by the page service and edited through
//! its page; a URL link is a resource of its own, with the use cases of [`LinkService`]
//! (`/api/link/v1`). The rules of the policy fields all kinds share are in [`rules`], and the
//! two operations every service repeats on a policy (build one from a create, apply an
//! update to a link) are [`PolicyInput`] and [`PolicyPatch`]; the rules of a target URL are
//! in [`target_url`]. A link is reachable at `/s/{code}` by its public id and,
//! when it has one, its alias; the two share one namespace. Ports: [`LinkStore`] (used by
//! the page and link services and the pages origin alike), [`AccountDirectory`],
//! [`PublicIds`], and the kernel's `Clock`, `Offload` and `PageChanges`.

mod model;
mod policy;
mod policy_input;
mod ports;
pub mod rules;
mod service;
mod stats;
pub mod target_url;

pub use model::{Link, RedirectStatus, Target};
pub use policy::{Access, AllowEntry, Policy};
pub use policy_input::{AllowOrder, PolicyError, PolicyInput, PolicyPatch, ValidPolicy};
pub use ports::{AccountDirectory, LinkStore, LinkWriteError, PublicIds, RandomPublicIds};
pub use service::{
    LinkConfig, LinkError, LinkPatch, LinkPorts, LinkService, LinkView, MAX_STATS_DAYS, NewLink,
    StatsSpan,
};
pub use stats::{DayCount, LinkStats, VisitNotes};
pub use target_url::{DenyHosts, UrlRefusal, UrlRules};
