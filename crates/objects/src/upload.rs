//! One upload in progress: the bytes hashed, counted and capped as they arrive, on their
//! way to storage; then the record made ready (a new object) or switched to them (a
//! replacement).

use bytes::Bytes;
use quire_kernel::secret::Sha256Running;
use quire_kernel::{Handle, InfraError, ProjectSlug, Usage};
use quire_links::Link;
use time::OffsetDateTime;

use crate::model::Object;
use crate::ports::ByteSink;
use crate::service::{ObjectError, ObjectService, ObjectView, exceeded};

/// What the finished bytes become.
#[derive(Debug)]
pub(crate) enum Purpose {
    /// A new object: its pending record is stored; its link is stored at the end.
    Create,
    /// A new object offered an upload URL: its pending record and its link were stored
    /// when the URL was made; the record becomes ready at the end.
    Offered,
    /// New bytes for a ready object; the blob it had goes once the record names the new one.
    /// `old` is the record as it was, put back if the new bytes pass the quota.
    Replace { old: Box<Object> },
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
                if let Some(refusal) = self.passed_quota().await {
                    if !offered {
                        let _ = ports.links.delete_link(self.link.id).await;
                    }
                    self.discard().await;
                    ports.changes.link_changed(self.link.id);
                    return Err(refusal);
                }
            }
            Purpose::Replace { old } => {
                if let Err(e) = ports.records.update_object(&self.object).await {
                    let _ = ports
                        .bytes
                        .delete_blob(self.object.id, &self.object.blob)
                        .await;
                    return Err(match e {
                        crate::ports::InsertObjectError::Infra(e) => e.into(),
                        other => InfraError::new(other.to_string()).into(),
                    });
                }
                if let Some(refusal) = self.passed_quota().await
                    && ports.records.update_object(&old).await.is_ok()
                {
                    let _ = ports
                        .bytes
                        .delete_blob(self.object.id, &self.object.blob)
                        .await;
                    return Err(refusal);
                }
                // Readers that began on the old bytes finish on them; what fails here is
                // the janitor's (the record no longer names them).
                let _ = ports.bytes.delete_blob(self.object.id, &old.blob).await;
            }
        }
        ports.changes.link_changed(self.link.id);
        Ok(service.view(self.object, self.link, &self.handle, self.project))
    }

    /// The refusal of an upload whose written record made the account's objects pass the
    /// quota (another upload of the account finished meanwhile). A sum that cannot be read
    /// keeps the upload: its bytes passed the check as they came.
    async fn passed_quota(&self) -> Option<ObjectError> {
        let total = self
            .service
            .over_quota(self.object.account_id)
            .await
            .ok()??;
        Some(exceeded(Usage {
            used: total.used.saturating_sub(self.size),
            ..total
        }))
    }

    /// Gives up: the bytes written so far and, for a new object, its pending record go.
    pub async fn abandon(mut self) {
        self.discard().await;
    }

    async fn discard(&mut self) {
        if let Some(sink) = self.sink.take() {
            sink.abort().await;
        }
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
