//! `quire-blobs`: the page domain's `BundleStore` on `object_store`: local disk
//! (`file://PATH`, the default), memory (`memory://`) and S3-compatible storage
//! (`s3://bucket/prefix`, configured by the standard `AWS_*` variables, custom endpoint
//! included).
//!
//! An adapter: it depends on `quire-kernel`, `quire-pages` (the port) and `object_store`.
//! Objects are content-addressed per page: `{prefix}/pages/{page_id}/{sha256}`. Local-disk
//! writes go to a temporary file (`{sha256}#N`) that is renamed into place, so a reader never
//! sees half an object; a write cut off by a crash leaves that file, which `object_store`
//! listings hide, so the sweep walks the directory itself. A publish's batch of files goes to
//! local disk on one blocking thread per core (`local.rs`) rather than one `object_store`
//! write, and one thread hop, per file. Objects nobody reads yet (a pending page's, or those
//! a live page's manifest does not name yet) are written straight under their names. Objects
//! a manifest stopped naming are marked by an empty object of their own under `retired/`
//! (`retired.rs`), which the janitor lists.

mod local;
mod marked;
mod objects;
mod retired;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use quire_kernel::{InfraError, PageId};
use quire_pages::{BundleStore, FileData, Readers, Retired, put_concurrently};
use time::OffsetDateTime;

use crate::local::{put_local, sweep_local};

#[derive(Debug, thiserror::Error)]
pub enum BlobConfigError {
    #[error("storage URL must start with file://, memory:// or s3://, got {0:?}")]
    Scheme(String),
    #[error("cannot use {0}: {1}")]
    Open(String, String),
}

/// Bundles on any `object_store` backend.
#[derive(Debug, Clone)]
pub struct ObjectBundleStore {
    store: Arc<dyn ObjectStore>,
    /// Where objects are written: on local disk the same directory, with each finished
    /// upload and its rename synced to disk (an object is one large file whose record says
    /// ready only after the bytes are durable); elsewhere `store`.
    objects: Arc<dyn ObjectStore>,
    /// S3's multipart calls, for uploads that can always be aborted (`marked`).
    multipart: Option<Arc<object_store::aws::AmazonS3>>,
    root: Path,
    /// The directory of a `file://` store, for what its listings hide.
    local_dir: Option<PathBuf>,
}

fn infra(what: &str, e: &object_store::Error) -> InfraError {
    InfraError::new(format!("bundle storage: {what}: {e}"))
}

impl ObjectBundleStore {
    /// Opens the store a `QUIRE_STORAGE_URL` names, reading `AWS_*` settings from the
    /// process environment.
    ///
    /// # Errors
    /// As [`ObjectBundleStore::open_with`].
    pub fn open(url: &str) -> Result<Self, BlobConfigError> {
        Self::open_with(url, |k| std::env::var(k).ok())
    }

    /// Opens the store a `QUIRE_STORAGE_URL` names; `s3://bucket/prefix` takes its
    /// credentials, region and endpoint from `env` (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` or `AWS_DEFAULT_REGION`,
    /// `AWS_ENDPOINT_URL` or `AWS_ENDPOINT` for S3-compatible servers; plain `http://`
    /// endpoints are allowed).
    ///
    /// # Errors
    /// An unknown scheme, or a backend that cannot be set up (an uncreatable directory, a
    /// bucket-less S3 URL).
    pub fn open_with(
        url: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, BlobConfigError> {
        let open_err =
            |e: &dyn std::fmt::Display| BlobConfigError::Open(url.to_owned(), e.to_string());
        if let Some(dir) = url.strip_prefix("file://") {
            std::fs::create_dir_all(dir).map_err(|e| open_err(&e))?;
            let fs = LocalFileSystem::new_with_prefix(dir).map_err(|e| open_err(&e))?;
            let durable = LocalFileSystem::new_with_prefix(dir)
                .map_err(|e| open_err(&e))?
                .with_fsync(true);
            return Ok(Self {
                local_dir: Some(PathBuf::from(dir)),
                objects: Arc::new(durable),
                ..Self::with_store(Arc::new(fs), "")
            });
        }
        if url.starts_with("memory://") {
            return Ok(Self::with_store(Arc::new(InMemory::new()), ""));
        }
        if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(open_err(&"no bucket named"));
            }
            let mut builder = AmazonS3Builder::new().with_bucket_name(bucket);
            if let Some(v) = env("AWS_ACCESS_KEY_ID") {
                builder = builder.with_access_key_id(v);
            }
            if let Some(v) = env("AWS_SECRET_ACCESS_KEY") {
                builder = builder.with_secret_access_key(v);
            }
            if let Some(v) = env("AWS_SESSION_TOKEN") {
                builder = builder.with_token(v);
            }
            if let Some(v) = env("AWS_REGION").or_else(|| env("AWS_DEFAULT_REGION")) {
                builder = builder.with_region(v);
            }
            if let Some(endpoint) = env("AWS_ENDPOINT_URL").or_else(|| env("AWS_ENDPOINT")) {
                builder = builder
                    .with_allow_http(endpoint.starts_with("http://"))
                    .with_endpoint(endpoint);
            }
            let s3 = Arc::new(builder.build().map_err(|e| open_err(&e))?);
            return Ok(Self {
                multipart: Some(s3.clone()),
                ..Self::with_store(s3, prefix)
            });
        }
        Err(BlobConfigError::Scheme(url.to_owned()))
    }

    #[must_use]
    pub fn with_store(store: Arc<dyn ObjectStore>, prefix: &str) -> Self {
        Self {
            objects: store.clone(),
            multipart: None,
            store,
            root: Path::from(prefix.trim_matches('/')),
            local_dir: None,
        }
    }

    fn pages_root(&self) -> Path {
        self.root.clone().join("pages")
    }

    fn page_root(&self, page: PageId) -> Path {
        self.pages_root().join(page.to_string())
    }

    fn object(&self, page: PageId, sha256: &str) -> Path {
        self.page_root(page).join(sha256)
    }

    fn retired_root(&self) -> Path {
        self.root.clone().join("retired")
    }

    /// Deletes everything under `prefix`; nothing there is no error.
    async fn delete_under(&self, prefix: &Path) -> Result<(), InfraError> {
        let locations: Vec<Path> = self
            .store
            .list(Some(prefix))
            .map_ok(|m| m.location)
            .try_collect()
            .await
            .map_err(|e| infra("list", &e))?;
        for location in locations {
            match self.store.delete(&location).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(infra("delete", &e)),
            }
        }
        Ok(())
    }

    /// The ids named by the folders under `root` that hold anything (on local disk an
    /// emptied folder stays behind, holding nothing).
    async fn folders_holding<T: std::str::FromStr>(
        &self,
        root: &Path,
    ) -> Result<Vec<T>, InfraError> {
        let listing = self
            .store
            .list_with_delimiter(Some(root))
            .await
            .map_err(|e| infra("list", &e))?;
        let mut ids = Vec::new();
        for prefix in listing.common_prefixes {
            let Some(id) = prefix.filename().and_then(|name| name.parse().ok()) else {
                continue;
            };
            let holds_something = self
                .store
                .list(Some(&prefix))
                .try_next()
                .await
                .map_err(|e| infra("list", &e))?
                .is_some();
            if holds_something {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// Lists the root, to tell whether the storage answers.
    ///
    /// # Errors
    /// [`InfraError`] when it does not.
    pub async fn ping(&self) -> Result<(), InfraError> {
        self.store
            .list_with_delimiter(Some(&self.root))
            .await
            .map(|_| ())
            .map_err(|e| infra("list", &e))
    }
}

#[async_trait]
impl BundleStore for ObjectBundleStore {
    async fn put(&self, page: PageId, sha256: &str, bytes: Bytes) -> Result<(), InfraError> {
        self.store
            .put(&self.object(page, sha256), PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(|e| infra("write", &e))
    }

    /// On local disk, one blocking thread per core each writes its share of the
    /// files, one at a time, with no hop between threads per file; elsewhere, as the port's
    /// default.
    async fn put_files(
        &self,
        page: PageId,
        files: Vec<FileData>,
        readers: Readers,
    ) -> Result<Vec<String>, (InfraError, Vec<String>)> {
        match &self.local_dir {
            Some(dir) => put_local(dir.join("pages").join(page.to_string()), files, readers).await,
            None => put_concurrently(self, page, files).await,
        }
    }

    async fn get(&self, page: PageId, sha256: &str) -> Result<Option<Vec<u8>>, InfraError> {
        match self.store.get(&self.object(page, sha256)).await {
            Ok(r) => Ok(Some(
                r.bytes().await.map_err(|e| infra("read", &e))?.to_vec(),
            )),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(infra("read", &e)),
        }
    }

    async fn get_range(
        &self,
        page: PageId,
        sha256: &str,
        range: std::ops::Range<u64>,
    ) -> Result<Option<Vec<u8>>, InfraError> {
        match self
            .store
            .get_range(&self.object(page, sha256), range)
            .await
        {
            Ok(bytes) => Ok(Some(bytes.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(infra("read", &e)),
        }
    }

    async fn exists(&self, page: PageId, sha256: &str) -> Result<bool, InfraError> {
        match self.store.head(&self.object(page, sha256)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(infra("head", &e)),
        }
    }

    async fn delete(&self, page: PageId, sha256: &str) -> Result<(), InfraError> {
        match self.store.delete(&self.object(page, sha256)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(infra("delete", &e)),
        }
    }

    async fn delete_page(&self, page: PageId) -> Result<(), InfraError> {
        self.delete_under(&self.page_root(page)).await
    }

    async fn pages(&self) -> Result<Vec<PageId>, InfraError> {
        self.folders_holding(&self.pages_root()).await
    }

    async fn sweep_leftovers(&self, older_than: Duration) -> Result<usize, InfraError> {
        let Some(dir) = self.local_dir.clone() else {
            // S3 writes of our size are single requests: whole or absent.
            return Ok(0);
        };
        tokio::task::spawn_blocking(move || sweep_local(&dir.join("pages"), older_than))
            .await
            .map_err(|e| InfraError::new(format!("bundle storage: sweep: {e}")))?
    }

    async fn retire(
        &self,
        page: PageId,
        hashes: &[String],
        at: OffsetDateTime,
    ) -> Result<(), InfraError> {
        for sha256 in hashes {
            let mark = self
                .retired_root()
                .join(retired::mark_name(page, sha256, at));
            self.store
                .put(&mark, PutPayload::default())
                .await
                .map_err(|e| infra("mark retired", &e))?;
        }
        Ok(())
    }

    async fn retired(&self, before: OffsetDateTime) -> Result<Vec<Retired>, InfraError> {
        let names: Vec<Path> = self
            .store
            .list(Some(&self.retired_root()))
            .map_ok(|m| m.location)
            .try_collect()
            .await
            .map_err(|e| infra("list", &e))?;
        Ok(names
            .iter()
            .filter_map(|p| p.filename().and_then(retired::parse_mark))
            .filter(|mark| mark.at < before)
            .collect())
    }

    async fn forget_retired(&self, mark: &Retired, remove_object: bool) -> Result<(), InfraError> {
        if remove_object {
            self.delete(mark.page, &mark.sha256).await?;
        }
        let name = retired::mark_name(mark.page, &mark.sha256, mark.at);
        match self.store.delete(&self.retired_root().join(name)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(infra("delete", &e)),
        }
    }
}

#[cfg(test)]
mod tests;
