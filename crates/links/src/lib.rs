//! `quire-links`: short links and the policy they carry (access, argon2id password hash,
//! expiry, view budget and count, allow-list grants).
//!
//! Pure domain: it depends on `quire-kernel` and `quire-pages` (whose `LinkService` port the
//! [`EmbeddedLinkService`] implements in process), and persists through its own
//! [`LinkStore`] port. A link is reachable at `/s/{code}` by its public id and, when it has
//! one, its alias; the two share one namespace.

mod embedded;
mod model;
mod ports;

pub use embedded::EmbeddedLinkService;
pub use model::{AllowGrant, Link};
pub use ports::{LinkStore, LinkWriteError};
