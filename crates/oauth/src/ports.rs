//! Ports of the OAuth domain.

use async_trait::async_trait;
use quire_kernel::InfraError;
use time::OffsetDateTime;

use quire_kernel::AccountId;

use crate::grant::{Approval, Grant, LiveGrant, RefreshRecord};
use crate::listing::ClientKey;
use crate::model::{ClientId, OAuthClient};
use crate::signing::SigningKey;

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

    /// Up to `limit` live clients, oldest first with ties broken by id, strictly after
    /// `after` in that order: a page of [`Self::live_clients`], read by keyset.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn live_clients_after(
        &self,
        after: Option<&ClientKey>,
        limit: u32,
    ) -> Result<Vec<OAuthClient>, InfraError>;

    /// Replaces a live client's secret hash; `false` when no live client has `id`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn set_client_secret(&self, id: &ClientId, hash: &str) -> Result<bool, InfraError>;

    /// Deletes a live client: it stays as a tombstone deleted at `at`, every project naming
    /// it as its `oauth_client_id` no longer does, and every grant of it is revoked (so its
    /// refresh tokens are), in the same unit of work. `false`
    /// when no live client has `id`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure (and then nothing changed).
    async fn delete_client(&self, id: &ClientId, at: OffsetDateTime) -> Result<bool, InfraError>;

    /// Records that the client redeemed a code or refreshed a token at `at`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn touch_client(&self, id: &ClientId, at: OffsetDateTime) -> Result<(), InfraError>;

    /// The live dynamically registered clients last used (or, never used, registered)
    /// before `before`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn idle_dynamic_clients(
        &self,
        before: OffsetDateTime,
    ) -> Result<Vec<ClientId>, InfraError>;
}

/// Authorizations and their refresh tokens. Every method is one unit of work.
#[async_trait]
pub trait GrantStore: Send + Sync + std::fmt::Debug {
    /// Stores a pending grant (the consent page's request).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn insert_oauth_grant(&self, grant: &Grant) -> Result<(), InfraError>;

    /// The pending grant whose request hash is `request_hash`, bound to `session_hash`, not
    /// expired at `now`; `None` otherwise (unknown, another session's, expired, decided).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn pending_grant(
        &self,
        request_hash: &str,
        session_hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<Grant>, InfraError>;

    /// Decides a pending grant, once: the grant whose request hash is `request_hash`, bound
    /// to `session_hash`, still pending and not expired at `now`. With `approval` it becomes
    /// approved, with the approval's code, project and scopes; without, it is deleted
    /// (denied). Returns the grant as it was while pending, or `None` when no such pending
    /// grant exists (unknown, another session's, expired, or already decided).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure (and then nothing changed).
    async fn settle_pending(
        &self,
        request_hash: &str,
        session_hash: &str,
        now: OffsetDateTime,
        approval: Option<&Approval>,
    ) -> Result<Option<Grant>, InfraError>;

    /// The grant whose code hashes to `code_hash`, at whatever stage.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn grant_by_code(&self, code_hash: &str) -> Result<Option<Grant>, InfraError>;

    /// Redeems an approved grant's code: marks it redeemed at `now` and stores its first
    /// refresh token, together. `false` (and nothing changed) when the grant is not approved
    /// and live any more (a concurrent redemption, a revocation).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure (and then nothing changed).
    async fn redeem_code(
        &self,
        grant_id: &str,
        now: OffsetDateTime,
        first: &RefreshRecord,
    ) -> Result<bool, InfraError>;

    /// The refresh token with `token_hash` and its grant.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn refresh_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<(RefreshRecord, Grant)>, InfraError>;

    /// Rotates a refresh token: marks `old_hash` rotated at `now` (keeping an earlier
    /// rotation time) and stores `next`, together, if `old_hash` was not rotated before
    /// `reusable_after` and its grant is not revoked. `false` (and nothing changed)
    /// otherwise.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure (and then nothing changed).
    async fn rotate_refresh(
        &self,
        old_hash: &str,
        now: OffsetDateTime,
        reusable_after: OffsetDateTime,
        next: &RefreshRecord,
    ) -> Result<bool, InfraError>;

    /// Revokes a grant and so every refresh token of its family; revoking twice keeps the
    /// first time.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn revoke_grant(&self, grant_id: &str, at: OffsetDateTime) -> Result<(), InfraError>;

    /// The account's live grants: redeemed, not revoked, holding a refresh token neither
    /// rotated nor expired at `now`; each with the time its newest refresh token was issued
    /// (the last code redemption or refresh). In no particular order.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn live_grants(
        &self,
        account: AccountId,
        now: OffsetDateTime,
    ) -> Result<Vec<LiveGrant>, InfraError>;
}

/// The signing keys every replica shares.
#[async_trait]
pub trait SigningKeyStore: Send + Sync + std::fmt::Debug {
    /// Every stored key.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn signing_keys(&self) -> Result<Vec<SigningKey>, InfraError>;

    /// Stores a new key.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn insert_signing_key(&self, key: &SigningKey) -> Result<(), InfraError>;

    /// Deletes the keys with these ids (unknown ids are ignored).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn delete_signing_keys(&self, kids: &[String]) -> Result<(), InfraError>;
}

/// A client metadata document as its server answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedDocument {
    /// The body, at most [`MAX_DOCUMENT_BYTES`](crate::metadata_document::MAX_DOCUMENT_BYTES).
    pub body: Vec<u8>,
    /// The answer's `Cache-Control: max-age`, if any.
    pub max_age: Option<std::time::Duration>,
}

/// Why a client metadata document could not be fetched. None carries what the server sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("its host resolves to a loopback, private, link-local or reserved address")]
    ForbiddenAddress,
    #[error("its host could not be resolved or reached")]
    Unreachable,
    #[error("its server answered with a redirect")]
    Redirected,
    #[error("its server answered with an error status")]
    Status,
    #[error("its server did not answer in time")]
    TimedOut,
    #[error("it is larger than 16 KiB")]
    TooLarge,
    #[error("it is not served as application/json")]
    NotJson,
}

/// Fetches client metadata documents from the servers that publish them.
#[async_trait]
pub trait ClientMetadataDocuments: Send + Sync + std::fmt::Debug {
    /// The document at `url`, which [`document_url`](crate::metadata_document::document_url)
    /// admitted. An implementation MUST connect only to an address it checked (never a
    /// loopback, private, link-local, shared, unique-local, multicast, unspecified or
    /// documentation one, unless its test switch admits loopback), MUST NOT follow
    /// redirects, MUST give up after
    /// [`FETCH_DEADLINE`](crate::metadata_document::FETCH_DEADLINE) in all, and MUST NOT read
    /// more than [`MAX_DOCUMENT_BYTES`](crate::metadata_document::MAX_DOCUMENT_BYTES). It
    /// MAY hold answers: a document for
    /// [`cache_lifetime`](crate::metadata_document::cache_lifetime), a failure for
    /// [`FAILURE_LIFETIME`](crate::metadata_document::FAILURE_LIFETIME).
    ///
    /// # Errors
    /// [`FetchError::ForbiddenAddress`] for an address it refuses, [`FetchError::Redirected`]
    /// for a 3xx answer, [`FetchError::Status`] for any other non-2xx one,
    /// [`FetchError::TimedOut`] past the deadline, [`FetchError::TooLarge`] for a body over
    /// the cap (announced or read), [`FetchError::NotJson`] for a content type other than
    /// `application/json` (or `+json`), [`FetchError::Unreachable`] for anything else.
    async fn fetch(&self, url: &url::Url) -> Result<FetchedDocument, FetchError>;
}
