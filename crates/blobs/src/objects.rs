//! `ObjectBytes` on the same storage as bundles, under `{prefix}/objects/{object_id}/{blob}`.
//! An upload streams in 5 MiB parts, at most two of them in flight, so memory stays bounded
//! whatever the size: on S3 a multipart upload named by a marker until it completes or is
//! aborted (`marked`), so a killed server's parts are found and aborted with the object's
//! folder; on local disk `object_store`'s multipart write to a `{blob}#N` staging file that
//! is synced and renamed into place, which an interrupted write leaves for
//! [`ObjectBytes::sweep_partial`].

use std::ops::Range;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;
use object_store::{GetOptions, GetRange, ObjectStoreExt, WriteMultipart};
use quire_kernel::{InfraError, ObjectId};
use quire_objects::{ByteSink, ByteStream, ObjectBytes};

use crate::local::sweep_local;
use crate::marked::{MarkedSink, abort_marked};
use crate::{ObjectBundleStore, infra};

/// Parts written at once by one upload: with 5 MiB parts, at most 10 MiB of an upload is
/// held in memory.
const PARTS_IN_FLIGHT: usize = 2;

impl ObjectBundleStore {
    fn objects_root(&self) -> object_store::path::Path {
        self.root.clone().join("objects")
    }

    fn object_root(&self, object: ObjectId) -> object_store::path::Path {
        self.objects_root().join(object.to_string())
    }

    fn blob(&self, object: ObjectId, blob: &str) -> object_store::path::Path {
        self.object_root(object).join(blob)
    }
}

struct MultipartSink(WriteMultipart);

#[async_trait]
impl ByteSink for MultipartSink {
    async fn write(&mut self, chunk: Bytes) -> Result<(), InfraError> {
        self.0
            .wait_for_capacity(PARTS_IN_FLIGHT)
            .await
            .map_err(|e| infra("write", &e))?;
        self.0.put(chunk);
        Ok(())
    }

    async fn finish(self: Box<Self>) -> Result<(), InfraError> {
        self.0
            .finish()
            .await
            .map(|_| ())
            .map_err(|e| infra("write", &e))
    }

    async fn abort(self: Box<Self>) {
        let _ = self.0.abort().await;
    }
}

#[async_trait]
impl ObjectBytes for ObjectBundleStore {
    fn local_file(&self, object: ObjectId, blob: &str) -> Option<std::path::PathBuf> {
        self.local_dir
            .as_ref()
            .map(|dir| dir.join("objects").join(object.to_string()).join(blob))
    }

    async fn start(&self, object: ObjectId, blob: &str) -> Result<Box<dyn ByteSink>, InfraError> {
        if let Some(parts) = &self.multipart {
            return Ok(Box::new(MarkedSink::new(
                self.objects.clone(),
                parts.clone(),
                self.blob(object, blob),
            )));
        }
        let upload = self
            .objects
            .put_multipart(&self.blob(object, blob))
            .await
            .map_err(|e| infra("start an upload", &e))?;
        Ok(Box::new(MultipartSink(WriteMultipart::new(upload))))
    }

    async fn read(
        &self,
        object: ObjectId,
        blob: &str,
        range: Option<Range<u64>>,
    ) -> Result<Option<ByteStream>, InfraError> {
        let options = GetOptions {
            range: range.map(GetRange::Bounded),
            ..GetOptions::default()
        };
        match self.store.get_opts(&self.blob(object, blob), options).await {
            Ok(result) => Ok(Some(
                result
                    .into_stream()
                    .map(|piece| piece.map_err(|e| infra("read", &e)))
                    .boxed(),
            )),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(infra("read", &e)),
        }
    }

    async fn delete_blob(&self, object: ObjectId, blob: &str) -> Result<(), InfraError> {
        match self.store.delete(&self.blob(object, blob)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(infra("delete", &e)),
        }
    }

    async fn delete_object(&self, object: ObjectId) -> Result<(), InfraError> {
        if let Some(dir) = &self.local_dir {
            // The whole folder, with the staging files of an upload cut short that
            // `object_store`'s listings do not show.
            let folder = dir.join("objects").join(object.to_string());
            return match tokio::fs::remove_dir_all(&folder).await {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(InfraError::new(format!("object storage: delete: {e}"))),
            };
        }
        let root = self.object_root(object);
        if let Some(parts) = &self.multipart {
            abort_marked(self.store.as_ref(), parts.as_ref(), &root).await?;
        }
        self.delete_under(&root).await
    }

    async fn objects(&self) -> Result<Vec<ObjectId>, InfraError> {
        self.folders_holding(&self.objects_root()).await
    }

    async fn sweep_partial(&self, older_than: Duration) -> Result<usize, InfraError> {
        let Some(dir) = self.local_dir.clone() else {
            // On S3 an unfinished upload is named by its marker, and aborted with the
            // object's folder (`marked`): nothing lies outside a folder to sweep.
            return Ok(0);
        };
        tokio::task::spawn_blocking(move || sweep_local(&dir.join("objects"), older_than))
            .await
            .map_err(|e| InfraError::new(format!("object storage: sweep: {e}")))?
    }
}
