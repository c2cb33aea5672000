//! `quire-store`: the persistence adapter. Implements every store port of the domain crates
//! on PostgreSQL and on SQLite through diesel-async, with one query body serving both
//! backends (see [`db`]).
//!
//! The map, one folder per bounded context:
//! - `accounts/`: `AccountStore`, `AccountDirectory`, `SessionStore`, `SignupStore`,
//!   `InvitationStore` and `CaptchaLedger`, `MailQuota`, and the service's sealed secrets;
//! - `pages/`: `PageStore` (a page, its details, manifest and lists) and `PublishRequests`;
//! - `links/`: `LinkStore`, with a link's counts and view leases;
//! - `objects.rs`: `ObjectRecords` (one file);
//! - `oauth/`: `ClientStore`, `GrantStore`, `SigningKeyStore` and `DeviceGrantStore`;
//! - `platform/`: `ProjectStore`, `KeyStore` and `DatabaseRecords`;
//! - at the top, the plumbing they share: `db` (pools, migrations, the `with_conn!` and
//!   `with_tx!` macros), `error`, `schema`, `types` (the column types of both backends),
//!   `limits` (`RateLimiter`, and the key lock mail and signup count under) and `leased`
//!   (the leased two-phase write of pages and objects, and their shared slug namespace).
//!
//! It may depend on the domain crates and kernel (for the ports and types it implements),
//! diesel, diesel-async, deadpool, tokio and `metrics` (the pool's waits). SQL lives here and
//! nowhere else; row structs are private and converted to domain types at the edge of this
//! crate.

// Shared plumbing.
pub mod db;
mod error;
mod leased;
mod limits;
mod schema;
mod types;

// One folder per bounded context (see the map above).
mod accounts;
mod links;
mod oauth;
mod objects;
mod pages;
mod platform;

pub use accounts::secrets::{Resealed, SealedAtStart};
pub use db::{
    Backend, Database, DatabaseConfig, MIGRATION_NAMES_POSTGRES, MIGRATION_NAMES_SQLITE,
    PoolStatus, SQLITE_MIGRATIONS,
};
pub use error::StoreError;
pub use types::SQLITE_TIME;
