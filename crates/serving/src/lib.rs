//! `quire-serving`: what a visitor of the pages origin gets. It turns a request for
//! `/{slug}/{path}` on an owner's origin (or `/{handle}/{slug}/{path}` on a shared one, or a
//! short link `/s/{code}`) into an answer: the file, a
//! redirect, the password form, a hand-off to the dashboard to sign in, 403, 404 or 410.
//! It enforces the page's policy on every request, counts views (atomically in the store
//! when the page has a view budget, aggregated in memory otherwise), signs the visitor
//! cookies and sign-in passes, and keeps page policies and small files in bounded memory
//! caches so a hot public page costs no database round trip.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-pages`, `quire-links` and
//! `quire-projects` (for their ports and rules) and small pure crates (moka for the bounded
//! caches, hmac/sha2 for signatures, flate2 for gzip). No HTTP type appears here: the
//! pages-origin edge in `quire-http` maps [`Answer`]s to responses.

mod cache;
pub mod path;
mod service;
pub mod token;
mod views;

pub use cache::CachedFile;
pub use path::{PagePath, parse_owner_path, parse_page_path, parse_relative};
pub use service::{
    ACCESS_COOKIE, Admitted, Answer, CacheRule, FileAnswer, IssuedCookie, PASS_BUCKET, PassError,
    PasswordPrompt, ServingConfig, ServingPorts, ServingService, UNLOCK_BUCKET, UNLOCK_COOKIE,
    Unlock, UnlockError, VIEW_COOKIE, Visit, Visitor, cookie_kind,
};
pub use token::{Claims, Kind, Signer};
pub use views::ViewTally;
