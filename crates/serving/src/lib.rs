//! `quire-serving`: the pages origin's application layer. It turns a request for
//! `/{slug}/{path}` on an owner's origin (or `/{handle}/{slug}/{path}` on a shared one, or a
//! short link `/s/{code}`) into an [`Answer`]: the file, a redirect, the password form, a
//! hand-off to the dashboard to sign in, 403, 404 or 410.
//!
//! Two layers, kept in separate modules:
//! - the visitor policy, pure: paths (`path`), what a link admits and what may be cached
//!   (`policy`), signed cookie and pass claims (`token`), and the order of a visit's
//!   decisions (`service`);
//! - the performance layer: pages and small files in bounded moka caches and per-thread
//!   front caches (`sites`, `cache`), gzip, views tallied in memory between flushes
//!   (`views`), budgeted views served from blocks leased from the store (`leases`), and the
//!   bytes each budgeted object's view cookie has left (`view_bytes`). The
//!   caches hear of page and project changes through the kernel's `PageChanges` port, which
//!   [`ServingService`] implements; they, and the leases' idle time, age by its `Clock`.
//!
//! It is not a domain crate: it depends on the domain crates (`quire-kernel`, `quire-pages`,
//! `quire-links`, `quire-projects`, `quire-accounts`) for their ports and rules, on
//! `quire-read-cache` for caches that age by the clock, and on small crates for caching,
//! signing and one async lock (moka, hmac/sha2, flate2, futures-util), and on the `metrics`
//! facade (cache lookups, view leases). No HTTP type and no
//! adapter technology appears here (the architecture test holds it to that): the
//! pages-origin edge in `quire-pages-origin` maps [`Answer`]s to responses.

mod answer;
pub mod bots;
mod cache;
mod leases;
mod notes;
pub mod path;
mod policy;
mod service;
mod sites;
pub mod token;
mod view_bytes;
mod views;

pub use answer::{
    Admitted, Answer, Asker, ByteRange, CacheRule, ContinuePrompt, FileAnswer, IssuedCookie,
    LinkUnlock, LinkVisit, ObjectAnswer, ObjectBody, PageCard, PassError, PasswordPrompt,
    SharedStream, SignInPrompt, Unlock, UnlockError, Visit, Visitor,
};
pub use cache::CachedFile;
pub use leases::{IDLE_RETURN, LEASE_TTL, MAX_BLOCK, ViewLeases};
pub use path::{PagePath, parse_owner_path, parse_page_path, parse_relative};
pub use policy::cookie_kind;
pub use quire_kernel::conditional::Conditions;
pub use service::{
    ACCESS_COOKIE, PASS_BUCKET, PageDatabase, ServingConfig, ServingPorts, ServingService,
    UNLOCK_BUCKET, UNLOCK_COOKIE, UNLOCK_PAGE_BUCKET, VIEW_COOKIE,
};
pub use token::{Claims, Signer, TokenKind};
pub use views::ViewTally;
