//! What the object use cases need from the outside: the records and the bytes.

use std::fmt::Debug;
use std::ops::Range;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::BoxStream;
use quire_kernel::{InfraError, ObjectId, ProjectId};
use time::OffsetDateTime;

use crate::model::{Object, ObjectStatus};

/// Bytes as they come from storage, in pieces.
pub type ByteStream = BoxStream<'static, Result<Bytes, InfraError>>;

#[derive(Debug, thiserror::Error)]
pub enum InsertObjectError {
    /// The owner has a page or an object with that slug.
    #[error("slug taken")]
    SlugTaken,
    /// The public id is an object's, a page's or a link's code already.
    #[error("public id taken")]
    PublicIdTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// What a ready object's record says of its bytes: the fields an upload decides, written
/// by [`ObjectRecords::swap_contents`] and by nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contents {
    /// The name the bytes are stored under.
    pub blob: String,
    pub size_bytes: u64,
    /// Lowercase hex SHA-256 of the bytes.
    pub sha256: String,
    /// What the download is saved as, when the upload said (else the record's stays).
    pub filename: Option<String>,
    /// The bytes' media type, when the upload said (else the record's stays).
    pub content_type: Option<String>,
    /// When the record changed, when it is to be told (else it stays).
    pub updated_at: Option<OffsetDateTime>,
}

/// Object records. A pending record (its upload still running) is invisible to every read
/// but [`ObjectRecords::stale_pending`] and [`ObjectRecords::lapsed_slug_holder`].
#[async_trait]
pub trait ObjectRecords: Send + Sync + Debug {
    /// Stores `object` pending, leased until `lease_until`.
    ///
    /// # Errors
    /// `SlugTaken` when the owner has a page or an object of that slug (checked in the same
    /// transaction as the write, so a concurrent page publish cannot take it too),
    /// `PublicIdTaken` when the public id is in use as a code.
    async fn insert_pending(
        &self,
        object: &Object,
        lease_until: OffsetDateTime,
    ) -> Result<(), InsertObjectError>;

    /// Extends a pending record's lease; `false` when it is no longer pending (reclaimed).
    ///
    /// # Errors
    /// Storage failures.
    async fn renew_lease(&self, id: ObjectId, until: OffsetDateTime) -> Result<bool, InfraError>;

    /// Marks a pending record ready with what its upload measured.
    ///
    /// # Errors
    /// Storage failures, or a record that is no longer pending.
    async fn mark_ready(&self, object: &Object) -> Result<(), InfraError>;

    /// A pending record and the end of its lease (an upload URL's record waits for its
    /// bytes this way; see `service::offer`).
    ///
    /// # Errors
    /// Storage failures.
    async fn pending_object(
        &self,
        id: ObjectId,
    ) -> Result<Option<(Object, OffsetDateTime)>, InfraError>;

    /// A ready object.
    ///
    /// # Errors
    /// Storage failures.
    async fn object(&self, id: ObjectId) -> Result<Option<Object>, InfraError>;

    /// A ready object of `owner` by slug.
    ///
    /// # Errors
    /// Storage failures.
    async fn object_by_slug(
        &self,
        owner: quire_kernel::AccountId,
        slug: &str,
    ) -> Result<Option<Object>, InfraError>;

    /// The ready objects of a project, newest first, of `status` when given.
    ///
    /// # Errors
    /// Storage failures.
    async fn project_objects(
        &self,
        project: ProjectId,
        status: Option<ObjectStatus>,
    ) -> Result<Vec<Object>, InfraError>;

    /// Writes back the fields of a ready object that a change makes (slug, title, file
    /// name, media type, status, archive and change times); never its bytes' (blob, size,
    /// hash), which only [`ObjectRecords::swap_contents`] writes, so a change read before a
    /// replacement cannot point the record back at bytes the replacement removed.
    ///
    /// # Errors
    /// `SlugTaken` when a new slug is the owner's page's or object's; storage failures.
    async fn update_object(&self, object: &Object) -> Result<(), InsertObjectError>;

    /// Points a ready object at other bytes, only while its record names the blob `from`
    /// (compare and swap): two uploads replacing one object, or a replacement undone, never
    /// leave it naming bytes another removed. Every field but those `to` gives stays (a
    /// change made while the bytes arrived). Returns whether it did: `false` when the
    /// record names another blob, or is gone.
    ///
    /// # Errors
    /// Storage failures.
    async fn swap_contents(
        &self,
        id: ObjectId,
        from: &str,
        to: &Contents,
    ) -> Result<bool, InfraError>;

    /// Removes the record, pending or ready; removing a missing one is no error.
    ///
    /// # Errors
    /// Storage failures.
    async fn delete_object(&self, id: ObjectId) -> Result<(), InfraError>;

    /// Pending records whose lease lapsed before `now`.
    ///
    /// # Errors
    /// Storage failures.
    async fn stale_pending(&self, now: OffsetDateTime) -> Result<Vec<ObjectId>, InfraError>;

    /// Whether a record of that id exists, pending or ready.
    ///
    /// # Errors
    /// Storage failures.
    async fn object_exists(&self, id: ObjectId) -> Result<bool, InfraError>;

    /// The bytes of each account's ready objects, summed, of `account` alone when given;
    /// an account with none is left out. A pending upload counts once it is ready (an
    /// upload URL's record holds its cap until then, which is no use of the quota).
    ///
    /// # Errors
    /// Storage failures.
    async fn stored_bytes(
        &self,
        account: Option<quire_kernel::AccountId>,
    ) -> Result<Vec<(quire_kernel::AccountId, u64)>, InfraError>;

    /// The pending record of `owner` holding `slug` whose lease lapsed before `now`.
    ///
    /// # Errors
    /// Storage failures.
    async fn lapsed_slug_holder(
        &self,
        owner: quire_kernel::AccountId,
        slug: &str,
        now: OffsetDateTime,
    ) -> Result<Option<ObjectId>, InfraError>;
}

/// Where objects' bytes live: each object's uploads under its own prefix, each upload a blob
/// of its own name.
#[async_trait]
pub trait ObjectBytes: Send + Sync + Debug {
    /// Starts writing blob `blob` of `object`. Nothing is readable under that name until
    /// the sink finishes; an aborted or abandoned sink leaves only what
    /// [`ObjectBytes::sweep_partial`] removes.
    ///
    /// # Errors
    /// Storage failures.
    async fn start(&self, object: ObjectId, blob: &str) -> Result<Box<dyn ByteSink>, InfraError>;

    /// The bytes of a blob, all or `range` of them (already within its size); `None` when
    /// there is no such blob.
    ///
    /// # Errors
    /// Storage failures.
    async fn read(
        &self,
        object: ObjectId,
        blob: &str,
        range: Option<Range<u64>>,
    ) -> Result<Option<ByteStream>, InfraError>;

    /// The file on this machine's disk that holds a blob, when storage is a local
    /// directory (the pages origin then sends it with `sendfile`); `None` on remote storage.
    fn local_file(&self, object: ObjectId, blob: &str) -> Option<std::path::PathBuf> {
        let _ = (object, blob);
        None
    }

    /// Removes one blob; a missing one is no error.
    ///
    /// # Errors
    /// Storage failures.
    async fn delete_blob(&self, object: ObjectId, blob: &str) -> Result<(), InfraError>;

    /// Removes every blob of `object`; none is no error.
    ///
    /// # Errors
    /// Storage failures.
    async fn delete_object(&self, object: ObjectId) -> Result<(), InfraError>;

    /// Every object that has bytes stored (for the janitor's orphans).
    ///
    /// # Errors
    /// Storage failures.
    async fn objects(&self) -> Result<Vec<ObjectId>, InfraError>;

    /// Removes what interrupted writes left, older than `older_than`; returns how many.
    ///
    /// # Errors
    /// Storage failures.
    async fn sweep_partial(&self, older_than: std::time::Duration) -> Result<usize, InfraError>;
}

/// One upload in progress.
#[async_trait]
pub trait ByteSink: Send {
    /// # Errors
    /// Storage failures; the sink is then to be aborted.
    async fn write(&mut self, chunk: Bytes) -> Result<(), InfraError>;

    /// Makes the blob readable under its name, whole.
    ///
    /// # Errors
    /// Storage failures; nothing is readable then.
    async fn finish(self: Box<Self>) -> Result<(), InfraError>;

    /// Drops what was written (best effort: what stays is swept).
    async fn abort(self: Box<Self>);
}
