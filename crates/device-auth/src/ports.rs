//! Ports of the device login.

use async_trait::async_trait;
use quire_kernel::InfraError;
use quire_keys::KeyRecord;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::model::{DeviceGrant, GrantState};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InsertGrantError {
    /// Another grant has the same user code.
    #[error("user code in use")]
    UserCodeTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Persistence of device grants. Every state change is a compare-and-set on the stored state,
/// so two replicas polling or deciding at once cannot both win.
#[async_trait]
pub trait DeviceGrantStore: Send + Sync + std::fmt::Debug {
    /// # Errors
    /// MUST return [`InsertGrantError::UserCodeTaken`] when a stored grant has the user code.
    async fn insert_grant(&self, grant: &DeviceGrant) -> Result<(), InsertGrantError>;

    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn grant_by_device_hash(&self, hash: &str) -> Result<Option<DeviceGrant>, InfraError>;

    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn grant_by_user_code(&self, code: &str) -> Result<Option<DeviceGrant>, InfraError>;

    /// Records a poll of a pending grant and its (possibly grown) interval.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn record_poll(
        &self,
        id: Uuid,
        at: OffsetDateTime,
        interval_secs: u32,
    ) -> Result<(), InfraError>;

    /// Moves a *pending* grant to `state` (approved or denied); `Ok(false)` when it was no
    /// longer pending.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn decide(
        &self,
        id: Uuid,
        state: GrantState,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// In one transaction: moves an *approved* grant to claimed and stores `key`;
    /// `Ok(false)` (and no key stored) when it was no longer approved.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; nothing is stored then.
    async fn claim(&self, id: Uuid, key: &KeyRecord) -> Result<bool, InfraError>;

    /// Removes every grant, in any state, that expired before `cutoff`, freeing its user
    /// code; returns how many.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn delete_grants_expired_before(&self, cutoff: OffsetDateTime)
    -> Result<u64, InfraError>;
}

pub use quire_kernel::RateLimiter;
