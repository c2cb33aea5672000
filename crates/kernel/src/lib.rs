//! `quire-kernel`: the vocabulary every other Quire crate shares.
//!
//! Identifiers, validated value types (handles, project slugs, emails, colours), the
//! authenticated [`Principal`], the [`Clock`] port and the one table of error codes with their
//! HTTP statuses. It depends only on small pure crates (serde, thiserror, uuid, time,
//! async-trait); nothing here performs I/O.

pub mod clock;
pub mod error;
pub mod ids;
pub mod password;
pub mod principal;
pub mod values;

pub use clock::{Clock, SystemClock};
pub use error::{ErrorCode, InfraError};
pub use ids::{AccountId, KeyId, LinkId, PageId, ProjectId};
pub use principal::{App, Apps, Principal, PrincipalKind, Tier};
pub use values::{Color, Email, Handle, ProjectSlug, ValueError};
