//! One upload in progress: the bytes hashed, counted and capped as they arrive, on their
//! way to storage; then the record made ready (a new object) or switched to them (a
//! replacement).

use bytes::Bytes;
use quire_kernel::quota::kept_within;
use quire_kernel::secret::Sha256Running;
use quire_kernel::{Handle, InfraError, ProjectSlug, Usage};
use quire_links::Link;
use time::OffsetDateTime;

use crate::model::Object;
use crate::ports::{ByteSink, Contents};
use crate::service::{ObjectError, ObjectService, ObjectView, exceeded};

/// Swaps tried before a replacement gives up on an object whose bytes keep changing.
const SWAP_ATTEMPTS: usize = 5;

/// What the finished bytes become.
#[derive(Debug)]
pub(crate) enum Purpose {
    /// A new object: its pending record is stored; its link is stored at the end.
    Create,
    /// A new object offered an upload URL: its pending record and its link were stored
    /// when the URL was made; the record becomes ready at the end.
    Offered,
    /// New bytes for a ready object; the blob it had goes once the record names the new one
    /// and they passed the quota. `old` is the record as it was when the upload began;
    /// `renamed` and `retyped` say whether the upload gave the file a name or a media type.
    Replace {
        old: Box<Object>,
        renamed: bool,
        retyped: bool,
    },
}

/// An upload begun by [`ObjectService::begin`], [`ObjectService::begin_replace`] or
/// [`ObjectService::accept_offer`]: give it
/// the bytes with [`Upload::write`], then [`Upload::finish`], or [`Upload::abandon`] it. An
/// upload dropped half-way (the client went away) leaves a pending record that the janitor
/// removes, with its bytes, once its lease lapses.
pub struct Upload {
    pub(crate) service: ObjectService,
    pub(crate) object: Object,
    pub(crate) link: Link,
    pub(crate) handle: Handle,
    pub(crate) project: ProjectSlug,
    pub(crate) purpose: Purpose,
    pub(crate) sink: Option<Box<dyn ByteSink>>,
    pub(crate) hasher: Sha256Running,
    pub(crate) size: u64,
    /// Most bytes of this upload: the server's cap, or an upload URL's own.
    pub(crate) limit: u64,
    /// The account's object bytes without this upload's (a replacement's old bytes left
    /// out), beside its quota, as they were when the upload began.
    pub(crate) quota: Usage,
    pub(crate) renew_at: OffsetDateTime,
}

impl std::fmt::Debug for Upload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upload")
            .field("object", &self.object.id)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl Upload {
    /// Bytes received so far.
    #[must_use]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Takes the next piece of the file.
    ///
    /// # Errors
    /// `TooLarge` once the bytes pass the cap, `StorageQuotaExceeded` once they pass what
    /// the account's quota left, or a storage failure; either way the upload is abandoned
    /// (nothing of it stays).
    pub async fn write(&mut self, chunk: Bytes) -> Result<(), ObjectError> {
        let limit = self.limit;
        let size = self.size.saturating_add(chunk.len() as u64);
        if size > limit {
            self.discard().await;
            return Err(ObjectError::TooLarge { limit });
        }
        if !self.quota.admits(size) {
            self.discard().await;
            return Err(exceeded(self.quota));
        }
        self.size += chunk.len() as u64;
        self.hasher.update(&chunk);
        let Some(sink) = self.sink.as_mut() else {
            return Err(InfraError::new("the upload was already abandoned").into());
        };
        if let Err(e) = sink.write(chunk).await {
            self.discard().await;
            return Err(e.into());
        }
        self.keep_lease().await
    }

    /// A slow upload keeps its pending record: renewed a third of the way into the lease.
    async fn keep_lease(&mut self) -> Result<(), ObjectError> {
        if matches!(self.purpose, Purpose::Replace { .. }) {
            return Ok(());
        }
        let now = self.service.ports.clock.now();
        if now < self.renew_at {
            return Ok(());
        }
        match self
            .service
            .ports
            .records
            .renew_lease(self.object.id, self.service.lease_end())
            .await
        {
            Ok(true) => {
                self.renew_at = self.service.renew_point();
                Ok(())
            }
            // Two thirds of the lease are left: the next piece tries again.
            Err(_) => Ok(()),
            Ok(false) => {
                self.discard().await;
                Err(InfraError::new("the upload lost its pending record: its lease lapsed").into())
            }
        }
    }

    /// Stores the bytes for good: a new object gets its link and becomes ready; a
    /// replacement's record names the new bytes, then the old ones go.
    ///
    /// # Errors
    /// `AliasConflict` (the alias was taken while the bytes arrived),
    /// `StorageQuotaExceeded` (another upload of the account took the room meanwhile),
    /// storage failures; nothing of the upload stays.
    pub async fn finish(mut self) -> Result<ObjectView, ObjectError> {
        let Some(sink) = self.sink.take() else {
            return Err(InfraError::new("the upload was already abandoned").into());
        };
        if let Err(e) = sink.finish().await {
            self.discard().await;
            return Err(e.into());
        }
        let service = self.service.clone();
        let ports = &service.ports;
        let now = ports.clock.now();
        self.object.size_bytes = self.size;
        self.object.sha256 = std::mem::take(&mut self.hasher).hex();
        self.object.updated_at = now;
        match std::mem::replace(&mut self.purpose, Purpose::Create) {
            purpose @ (Purpose::Create | Purpose::Offered) => {
                let offered = matches!(purpose, Purpose::Offered);
                self.purpose = purpose;
                if !offered && let Err(e) = ports.links.insert_link(&self.link).await {
                    self.discard().await;
                    return Err(e.into());
                }
                if let Err(e) = ports.records.mark_ready(&self.object).await {
                    let _ = ports.links.delete_link(self.link.id).await;
                    self.discard().await;
                    return Err(e.into());
                }
                let undo = async {
                    if !offered {
                        let _ = ports.links.delete_link(self.link.id).await;
                    }
                    self.discard_stored().await;
                    ports.changes.link_changed(self.link.id);
                    Ok(())
                };
                kept_within(self.recount(), undo).await?;
            }
            Purpose::Replace {
                old,
                renamed,
                retyped,
            } => {
                let replaced = match self.swap_in(*old, renamed, retyped).await {
                    Ok(replaced) => replaced,
                    Err(e) => {
                        let _ = ports
                            .bytes
                            .delete_blob(self.object.id, &self.object.blob)
                            .await;
                        return Err(e);
                    }
                };
                let undo = self.swap_back(&replaced, renamed, retyped);
                kept_within(self.recount(), undo).await?;
                // Readers that began on the old bytes finish on them; what fails here is
                // the janitor's (the record no longer names them).
                let _ = ports
                    .bytes
                    .delete_blob(self.object.id, &replaced.blob)
                    .await;
                // What a change made while the bytes arrived is part of the answer.
                if let Ok(Some(now)) = ports.records.object(self.object.id).await {
                    self.object = now;
                }
                if let Ok(Some(now)) = ports.links.link(self.link.id).await {
                    self.link = now;
                }
            }
        }
        ports.changes.link_changed(self.link.id);
        Ok(service.view(self.object, self.link, &self.handle, self.project))
    }

    /// Points the record at this upload's bytes, from whichever it names now: one that
    /// another replacement put in meanwhile is replaced in turn (the last to finish wins,
    /// as with changes). Returns the record as it was just before.
    async fn swap_in(
        &self,
        mut from: Object,
        renamed: bool,
        retyped: bool,
    ) -> Result<Object, ObjectError> {
        let records = &self.service.ports.records;
        let to = Contents {
            blob: self.object.blob.clone(),
            size_bytes: self.size,
            sha256: self.object.sha256.clone(),
            filename: renamed.then(|| self.object.filename.clone()),
            content_type: retyped.then(|| self.object.content_type.clone()),
            updated_at: Some(self.object.updated_at),
        };
        for _ in 0..SWAP_ATTEMPTS {
            if records
                .swap_contents(self.object.id, &from.blob, &to)
                .await?
            {
                return Ok(from);
            }
            from = records
                .object(self.object.id)
                .await?
                .ok_or(ObjectError::NotFound)?;
        }
        Err(InfraError::new("the object's bytes kept changing while new ones were put in").into())
    }

    /// Undoes [`Upload::swap_in`]: the record names the bytes it replaced again (with their
    /// name and type, where this upload changed them), only while it still names this
    /// upload's; a change made meanwhile stays. Whoever the record no longer names goes.
    async fn swap_back(
        &self,
        replaced: &Object,
        renamed: bool,
        retyped: bool,
    ) -> Result<(), ObjectError> {
        let ports = &self.service.ports;
        let back = Contents {
            blob: replaced.blob.clone(),
            size_bytes: replaced.size_bytes,
            sha256: replaced.sha256.clone(),
            filename: renamed.then(|| replaced.filename.clone()),
            content_type: retyped.then(|| replaced.content_type.clone()),
            updated_at: None,
        };
        let gone = match ports
            .records
            .swap_contents(self.object.id, &self.object.blob, &back)
            .await
        {
            Ok(true) => &self.object.blob,
            // Another replacement took the record from this upload's bytes: they are its to
            // remove, and the ones they replaced this upload's.
            Ok(false) => &replaced.blob,
            // Which bytes the record names is not known: both stay (a leak, never a record
            // that names removed bytes).
            Err(e) => return Err(e.into()),
        };
        let _ = ports.bytes.delete_blob(self.object.id, gone).await;
        Ok(())
    }

    /// The refusal of an upload whose written record made the account's objects pass the
    /// quota (another upload of the account finished meanwhile). A sum that cannot be read
    /// keeps the upload: its bytes passed the check as they came.
    async fn recount(&self) -> Result<Option<ObjectError>, ObjectError> {
        let service = &self.service;
        Ok(service
            .passed_quota(self.object.account_id, self.size)
            .await
            .unwrap_or(None))
    }

    /// Gives up: the bytes written so far and, for a new object, its pending record go.
    pub async fn abandon(mut self) {
        self.discard().await;
    }

    async fn discard(&mut self) {
        if let Some(sink) = self.sink.take() {
            sink.abort().await;
        }
        self.discard_stored().await;
    }

    /// What [`Upload::discard`] removes once the bytes are written.
    async fn discard_stored(&self) {
        let ports = &self.service.ports;
        let _ = ports
            .bytes
            .delete_blob(self.object.id, &self.object.blob)
            .await;
        if matches!(self.purpose, Purpose::Offered) {
            // Stored with the URL: it goes with the record. Kept when it cannot go, with
            // the record, so the janitor finds both again.
            if ports.links.delete_link(self.link.id).await.is_err() {
                return;
            }
            ports.changes.link_changed(self.link.id);
        }
        if !matches!(self.purpose, Purpose::Replace { .. }) {
            // Kept when its bytes could not go, so the janitor finds it again.
            if ports.bytes.delete_object(self.object.id).await.is_ok() {
                let _ = ports.records.delete_object(self.object.id).await;
            }
        }
    }
}
