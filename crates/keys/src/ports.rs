//! Ports of the keys domain.

use async_trait::async_trait;
use quire_kernel::{AccountId, InfraError, KeyId, Principal, Resource, TimeKey};
use time::OffsetDateTime;

use crate::credential::KeyHash;
use crate::model::{CredentialOwner, KeyRecord};
use crate::service::AuthError;

/// Persistence of API keys.
#[async_trait]
pub trait KeyStore: Send + Sync + std::fmt::Debug {
    /// Stores a new key.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure (including a hash collision, which 256 random
    /// bits make impossible in practice).
    async fn insert_key(&self, key: &KeyRecord) -> Result<(), InfraError>;

    /// Records that the key authenticated a request at `at`, unless it already did at or
    /// after `unless_since` (so busy keys are written about once a minute, not on every
    /// request).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn touch_key(
        &self,
        id: KeyId,
        at: OffsetDateTime,
        unless_since: OffsetDateTime,
    ) -> Result<(), InfraError>;

    /// The key with this hash and its account, revoked or not.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; an unknown hash is `Ok(None)`.
    async fn find_by_hash(&self, hash: &KeyHash) -> Result<Option<CredentialOwner>, InfraError>;

    /// Every key of the account, oldest first.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn keys_of_account(&self, account: AccountId) -> Result<Vec<KeyRecord>, InfraError>;

    /// At most `limit` of the account's keys, oldest first (then by id), strictly after
    /// `after` in that order: a page of the list, read by keyset.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn keys_after(
        &self,
        account: AccountId,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<KeyRecord>, InfraError>;

    /// # Errors
    /// [`InfraError`] on storage failure; an unknown id is `Ok(None)`.
    async fn key_by_id(&self, id: KeyId) -> Result<Option<KeyRecord>, InfraError>;

    /// Marks the key revoked at `at`; a key already revoked keeps its first revocation time.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn revoke_key(&self, id: KeyId, at: OffsetDateTime) -> Result<(), InfraError>;
}

/// OAuth access tokens: the JWT-shaped credentials of the `Authorization` header.
#[async_trait]
pub trait BearerTokens: Send + Sync + std::fmt::Debug {
    /// The principal a token presented to `resource` acts as.
    ///
    /// # Errors
    /// MUST return [`AuthError::InvalidToken`] with the spec's `error_description` for a
    /// token that fails any verification step (a token minted for another resource fails
    /// the audience step: `token issuer or audience mismatch`) (a registry that cannot be read included:
    /// fail closed), [`AuthError::NotActivated`] for an account not yet activated, and
    /// [`AuthError::Infra`] only for other storage failures.
    async fn principal(&self, token: &str, resource: Resource) -> Result<Principal, AuthError>;
}
