//! `quire-store`: the persistence adapter. Implements every store port of the domain crates
//! (`ProjectStore`, `KeyStore`, `AccountStore`, `SessionStore`, `PageStore`,
//! `AccountDirectory`, `LinkStore`, `ObjectRecords`, `DatabaseRecords`, `DeviceGrantStore`,
//! `RateLimiter`, `ClientStore`, `GrantStore`, `SigningKeyStore`, `MailQuota`,
//! `InvitationStore`, `CaptchaLedger`, `SignupStore`) on
//! PostgreSQL and on SQLite through diesel-async, with one query body serving both backends
//! (see [`db`]).
//!
//! It may depend on the domain crates and kernel (for the ports and types it implements),
//! diesel, diesel-async, deadpool, tokio and `metrics` (the pool's waits). SQL lives here and nowhere else; row structs are
//! private and converted to domain types at the edge of this crate.

mod account_directory;
mod accounts;
mod activation;
mod databases;
pub mod db;
mod device;
mod error;
mod keys;
mod leased;
mod limits;
mod link_counts;
mod links;
mod mail;
mod oauth;
mod oauth_grants;
mod oauth_signing_keys;
mod objects;
mod page_details;
mod page_files;
mod page_lists;
mod pages;
mod project_assign;
mod project_resources;
mod project_rows;
mod projects;
mod publish_requests;
mod schema;
mod secrets;
mod sessions;
mod signup;
mod types;
mod view_leases;

pub use db::{
    Backend, Database, DatabaseConfig, MIGRATION_NAMES_POSTGRES, MIGRATION_NAMES_SQLITE,
    PoolStatus, SQLITE_MIGRATIONS,
};
pub use error::StoreError;
pub use secrets::{Resealed, SealedAtStart};
pub use types::SQLITE_TIME;
