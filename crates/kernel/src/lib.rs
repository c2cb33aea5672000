//! `quire-kernel`: the vocabulary every other Quire crate shares.
//!
//! Identifiers, validated value types (handles, project slugs, emails, colours), the
//! authenticated [`Principal`], the [`Clock`], [`Timer`] and [`PageChanges`] ports, the one
//! table of error codes with their HTTP statuses, the `RateLimiter` port, and work split across
//! the cores in order (`parallel`). It depends only on small pure crates (serde, thiserror,
//! uuid, time, async-trait, argon2, sha2, rand, base64); nothing here performs I/O.

pub mod changes;
pub mod clock;
pub mod error;
pub mod ids;
pub mod parallel;
pub mod password;
pub mod principal;
pub mod rate_limit;
pub mod secret;
pub mod text;
pub mod values;

pub use changes::{Listeners, NoListener, PageChanges};
pub use clock::{Clock, SystemClock, Timer};
pub use error::{ErrorCode, InfraError, InfraKind};
pub use ids::{AccountId, KeyId, LeaseId, LinkId, PageId, ProjectId};
pub use principal::{App, Apps, Principal, PrincipalKind, Tier};
pub use rate_limit::RateLimiter;
pub use values::{Color, Email, Handle, ProjectSlug, ValueError};
