//! Ports of the OAuth domain.

use async_trait::async_trait;
use quire_kernel::InfraError;
use time::OffsetDateTime;

use crate::model::{ClientId, OAuthClient};

/// Why a client could not be stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InsertClientError {
    /// Another client, live or deleted, has the id.
    #[error("client id already used")]
    IdTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The client registry. Every method is one unit of work: it completes or changes nothing.
#[async_trait]
pub trait ClientStore: Send + Sync + std::fmt::Debug {
    /// Stores a new client.
    ///
    /// # Errors
    /// MUST return [`InsertClientError::IdTaken`] when any client, deleted ones included, has
    /// the id, and [`InsertClientError::Infra`] on storage failure.
    async fn insert_client(&self, client: &OAuthClient) -> Result<(), InsertClientError>;

    /// The client with `id`, deleted or not.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn client(&self, id: &ClientId) -> Result<Option<OAuthClient>, InfraError>;

    /// Every live client, oldest first.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn live_clients(&self) -> Result<Vec<OAuthClient>, InfraError>;

    /// Replaces a live client's secret hash; `false` when no live client has `id`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn set_client_secret(&self, id: &ClientId, hash: &str) -> Result<bool, InfraError>;

    /// Deletes a live client: it stays as a tombstone deleted at `at`, and every project
    /// naming it as its `oauth_client_id` no longer does, in the same unit of work. `false`
    /// when no live client has `id`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure (and then nothing changed).
    async fn delete_client(&self, id: &ClientId, at: OffsetDateTime) -> Result<bool, InfraError>;
}
