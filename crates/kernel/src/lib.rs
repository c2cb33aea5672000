//! `quire-kernel`: the vocabulary every other Quire crate shares.
//!
//! Identifiers, validated value types (handles, project slugs, emails, colours), the
//! authenticated [`Principal`], the [`Clock`], [`Timer`], [`Offload`] and [`PageChanges`]
//! ports, the one table of error codes with their HTTP statuses, the `RateLimiter` port, work
//! split across the cores in order (`parallel`), the evaluation of conditional and range
//! requests (`conditional`), keyset paging of lists with opaque cursors (`paging`), an
//! account's use of a quota beside its cap and the recount after a write (`quota`), the IPv4
//! addresses IPv6 ones carry (`ip`), and amounts counted per key, each held by a guard
//! (`per_key`). It depends only on small pure crates (serde, thiserror, uuid, time,
//! async-trait, argon2, sha2, rand, base64, httpdate); nothing here performs I/O.

pub mod changes;
pub mod clock;
pub mod conditional;
pub mod error;
pub mod ids;
pub mod ip;
pub mod offload;
pub mod paging;
pub mod parallel;
pub mod password;
pub mod per_key;
pub mod principal;
pub mod quota;
pub mod rate_limit;
pub mod scopes;
pub mod secret;
pub mod text;
pub mod values;

pub use changes::{Listeners, NoListener, PageChanges};
pub use clock::{Clock, SystemClock, Timer};
pub use error::{ErrorCode, InfraError, InfraKind};
pub use ids::{AccountId, DatabaseId, KeyId, LeaseId, LinkId, ObjectId, PageId, ProjectId};
pub use offload::{Offload, offloaded};
pub use paging::{CursorKey, NameKey, Paged, Paging, PagingError, TimeKey};
pub use principal::{App, Apps, Principal, PrincipalKind, Resource, Tier};
pub use quota::Usage;
pub use rate_limit::{Budget, RateLimiter, Slot, Take, address_key};
pub use scopes::Scopes;
pub use values::{Color, Email, Handle, ProjectSlug, ValueError};
