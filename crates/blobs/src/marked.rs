//! Uploads to S3 that can always be aborted. A multipart upload's parts stay in the bucket
//! (and are billed) until it completes or is aborted, and S3 lists them only through a call
//! `object_store` lacks; so once an upload has a multipart id, a marker object beside its
//! blob (`{blob}.multipart`) holds the id until the upload completes or is aborted. Whoever
//! deletes the object's folder (the janitor, for a server killed mid-upload) aborts every
//! upload its markers name first. An upload smaller than one part is one plain `PUT`.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use futures_util::TryStreamExt;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{MultipartId, ObjectStore, ObjectStoreExt, PutPayload};
use quire_kernel::InfraError;
use quire_objects::ByteSink;
use tokio::task::JoinSet;

use crate::infra;

/// The size of every part but the last: S3's least, and what `WriteMultipart` sends.
const PART: usize = 5 * 1024 * 1024;
/// Parts sent at once: with the part being filled, at most 15 MiB of an upload in memory.
const IN_FLIGHT: usize = 2;
/// What a marker's name ends with.
const MARKER: &str = ".multipart";

type PartResult = (usize, object_store::Result<PartId>);

/// One upload of a blob to an S3 store (see the module's summary).
pub(crate) struct MarkedSink {
    store: Arc<dyn ObjectStore>,
    parts: Arc<dyn MultipartStore>,
    path: Path,
    buffer: BytesMut,
    upload: Option<MultipartId>,
    sent: usize,
    in_flight: JoinSet<PartResult>,
    done: Vec<(usize, PartId)>,
}

fn marker_of(path: &Path) -> Path {
    Path::from(format!("{path}{MARKER}"))
}

impl MarkedSink {
    pub(crate) fn new(
        store: Arc<dyn ObjectStore>,
        parts: Arc<dyn MultipartStore>,
        path: Path,
    ) -> Self {
        Self {
            store,
            parts,
            path,
            buffer: BytesMut::new(),
            upload: None,
            sent: 0,
            in_flight: JoinSet::new(),
            done: Vec::new(),
        }
    }

    /// The upload's multipart id, made (and its marker written) on its first part.
    async fn upload_id(&mut self) -> Result<MultipartId, InfraError> {
        if let Some(id) = &self.upload {
            return Ok(id.clone());
        }
        let id = self
            .parts
            .create_multipart(&self.path)
            .await
            .map_err(|e| infra("start an upload", &e))?;
        // Named before any part is sent: an upload is never out of the janitor's sight.
        if let Err(e) = self
            .store
            .put(
                &marker_of(&self.path),
                PutPayload::from(id.clone().into_bytes()),
            )
            .await
        {
            let _ = self.parts.abort_multipart(&self.path, &id).await;
            return Err(infra("write an upload's marker", &e));
        }
        self.upload = Some(id.clone());
        Ok(id)
    }

    /// Waits for a part in flight; the first failure fails the upload.
    async fn settle_one(&mut self) -> Result<(), InfraError> {
        match self.in_flight.join_next().await {
            Some(Ok((index, Ok(part)))) => {
                self.done.push((index, part));
                Ok(())
            }
            Some(Ok((_, Err(e)))) => Err(infra("write", &e)),
            Some(Err(e)) => Err(InfraError::new(format!(
                "object storage: a part's task: {e}"
            ))),
            None => Ok(()),
        }
    }

    async fn send(&mut self, part: Bytes) -> Result<(), InfraError> {
        let id = self.upload_id().await?;
        while self.in_flight.len() >= IN_FLIGHT {
            self.settle_one().await?;
        }
        let (parts, path, index) = (self.parts.clone(), self.path.clone(), self.sent);
        self.in_flight.spawn(async move {
            let put = parts
                .put_part(&path, &id, index, PutPayload::from(part))
                .await;
            (index, put)
        });
        self.sent += 1;
        Ok(())
    }
}

#[async_trait]
impl ByteSink for MarkedSink {
    async fn write(&mut self, chunk: Bytes) -> Result<(), InfraError> {
        self.buffer.extend_from_slice(&chunk);
        while self.buffer.len() >= PART {
            let part = self.buffer.split_to(PART).freeze();
            self.send(part).await?;
        }
        Ok(())
    }

    async fn finish(mut self: Box<Self>) -> Result<(), InfraError> {
        let rest = std::mem::take(&mut self.buffer).freeze();
        let Some(id) = self.upload.clone() else {
            return self
                .store
                .put(&self.path, PutPayload::from(rest))
                .await
                .map(|_| ())
                .map_err(|e| infra("write", &e));
        };
        if !rest.is_empty() {
            self.send(rest).await?;
        }
        while !self.in_flight.is_empty() {
            self.settle_one().await?;
        }
        self.done.sort_by_key(|(index, _)| *index);
        let parts: Vec<PartId> = self.done.drain(..).map(|(_, part)| part).collect();
        self.parts
            .complete_multipart(&self.path, &id, parts)
            .await
            .map_err(|e| infra("complete an upload", &e))?;
        // A marker left behind names a finished upload: aborting it later is a no-op.
        let _ = self.store.delete(&marker_of(&self.path)).await;
        Ok(())
    }

    async fn abort(mut self: Box<Self>) {
        self.in_flight.abort_all();
        if let Some(id) = self.upload.take()
            && self.parts.abort_multipart(&self.path, &id).await.is_ok()
        {
            let _ = self.store.delete(&marker_of(&self.path)).await;
        }
    }
}

/// Aborts every upload a marker under `prefix` names (their parts go with them); the
/// markers themselves are left to the deletion that follows.
pub(crate) async fn abort_marked(
    store: &dyn ObjectStore,
    parts: &dyn MultipartStore,
    prefix: &Path,
) -> Result<(), InfraError> {
    let markers: Vec<Path> = store
        .list(Some(prefix))
        .map_ok(|m| m.location)
        .try_filter(|location| std::future::ready(location.as_ref().ends_with(MARKER)))
        .try_collect()
        .await
        .map_err(|e| infra("list", &e))?;
    for marker in markers {
        let id = match store.get(&marker).await {
            Ok(got) => got.bytes().await.map_err(|e| infra("read", &e))?,
            Err(object_store::Error::NotFound { .. }) => continue,
            Err(e) => return Err(infra("read", &e)),
        };
        let id = String::from_utf8_lossy(&id).into_owned();
        let blob = Path::from(marker.as_ref().trim_end_matches(MARKER));
        match parts.abort_multipart(&blob, &id).await {
            // An upload that completed or was aborted already is gone: so are its parts.
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(infra("abort an upload", &e)),
        }
    }
    Ok(())
}
