//! `quire-links`: short links and the access policy they carry (access, argon2id password
//! hash, expiry, view budget and count, allow list).
//!
//! Pure domain: it depends on `quire-kernel` only. One port, [`LinkStore`], reaches a link
//! with its [`Policy`] as it is: the page service writes a page's link through it, the pages
//! origin reads and counts through it. A link is reachable at `/s/{code}` by its public id
//! and, when it has one, its alias; the two share one namespace.

mod model;
mod policy;
mod ports;

pub use model::Link;
pub use policy::{Access, AllowEntry, Policy};
pub use ports::{LinkStore, LinkWriteError};
