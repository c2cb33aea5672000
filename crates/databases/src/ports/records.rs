//! The database records: Quire's metadata about each database, on either of its databases.

use std::fmt::Debug;

use async_trait::async_trait;
use quire_accounts::SealedSecret;
use quire_kernel::{AccountId, DatabaseId, InfraError, ProjectId};
use time::OffsetDateTime;

use crate::model::Database;
use crate::settings::DataApiSettings;

#[derive(Debug, thiserror::Error)]
pub enum InsertDatabaseError {
    /// A database of any account, in any state, has that slug.
    #[error("slug taken")]
    SlugTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The database records (Quire's metadata, on either of its databases).
#[async_trait]
pub trait DatabaseRecords: Send + Sync + Debug {
    /// Stores `database` as given (status `provisioning`, with its lease).
    ///
    /// # Errors
    /// `SlugTaken` when any record holds the slug (checked by the write itself, so two
    /// racing creates of one slug make one database); storage failures.
    async fn insert_database(&self, database: &Database) -> Result<(), InsertDatabaseError>;

    /// Marks a provisioning record ready; `false` when it is not provisioning any more (the
    /// janitor took it as dead).
    ///
    /// # Errors
    /// Storage failures.
    async fn mark_ready(&self, id: DatabaseId, at: OffsetDateTime) -> Result<bool, InfraError>;

    /// A record in any state.
    ///
    /// # Errors
    /// Storage failures.
    async fn database(&self, id: DatabaseId) -> Result<Option<Database>, InfraError>;

    /// A record in any state, by slug.
    ///
    /// # Errors
    /// Storage failures.
    async fn database_by_slug(&self, slug: &str) -> Result<Option<Database>, InfraError>;

    /// The ready databases of a project, newest first.
    ///
    /// # Errors
    /// Storage failures.
    async fn project_databases(&self, project: ProjectId) -> Result<Vec<Database>, InfraError>;

    /// Switches a ready database's data API; a `jwt_secret` is stored with it (the first
    /// enable), `None` keeps the stored one. `false` when no ready record has that id.
    ///
    /// # Errors
    /// Storage failures.
    async fn set_data_api(
        &self,
        id: DatabaseId,
        enabled: bool,
        jwt_secret: Option<&SealedSecret>,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Replaces a ready database's JWT secret `from` with `to`, whether its data API is on
    /// or off. `false` when no ready record has that id and that secret: never enabled,
    /// gone, or rotated by another request meanwhile (compared, so two racing rotations
    /// cannot both believe their secret is the one kept).
    ///
    /// # Errors
    /// Storage failures.
    async fn rotate_jwt_secret(
        &self,
        id: DatabaseId,
        from: &SealedSecret,
        to: &SealedSecret,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Replaces a ready database's data API settings `from` with `to`. `false` when no
    /// ready record has that id and those settings: gone, or changed by another request
    /// meanwhile (compared, so of two racing changes neither undoes the other unseen).
    ///
    /// # Errors
    /// Storage failures.
    async fn set_data_api_settings(
        &self,
        id: DatabaseId,
        from: &DataApiSettings,
        to: &DataApiSettings,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Marks a ready record `deleting`; `false` when it is not ready.
    ///
    /// # Errors
    /// Storage failures.
    async fn mark_deleting(&self, id: DatabaseId, at: OffsetDateTime) -> Result<bool, InfraError>;

    /// Removes the record; a missing one is no error.
    ///
    /// # Errors
    /// Storage failures.
    async fn delete_database(&self, id: DatabaseId) -> Result<(), InfraError>;

    /// The provisioning and ready records of `account` (of every account when `None`),
    /// oldest first: what the account's quota of databases counts (a record being deleted
    /// no longer does).
    ///
    /// # Errors
    /// Storage failures.
    async fn live_databases(&self, account: Option<AccountId>)
    -> Result<Vec<Database>, InfraError>;

    /// What the janitor must finish at `now`: provisioning records whose lease lapsed,
    /// deleting records, and ready records whose `expires_at` passed.
    ///
    /// # Errors
    /// Storage failures.
    async fn janitor_due(&self, now: OffsetDateTime) -> Result<Vec<Database>, InfraError>;
}
