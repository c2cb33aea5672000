//! The object use cases (`/api/object/v1`): upload (through an [`Upload`]), list, fetch, the
//! owner's download, change, replace the bytes, delete, upload URLs, and the janitor's sweep.
//!
//! Writes are in `write`, upload URLs in `offer`, reads in `read`, the account's quota of
//! bytes in `quota`, the refusals in `error`.

use std::sync::Arc;
use std::time::Duration;

use quire_kernel::password::hash_password_unchecked;
use quire_kernel::{
    AccountId, Clock, Handle, InfraError, ObjectId, Offload, PageChanges, Principal, ProjectSlug,
    RateLimiter, offloaded,
};
use quire_links::{AccountDirectory, Link, LinkStore, PolicyInput, PolicyPatch, PublicIds};
use quire_pages::PageOrigins;
use quire_projects::{ProjectAccess, ProjectStore, authorize_project};

use crate::model::Object;
use crate::ports::{ObjectBytes, ObjectRecords};
use crate::validate::DEFAULT_MAX_OBJECT_BYTES;

mod error;
mod offer;
mod quota;
mod read;
mod write;

pub use error::ObjectError;
pub use offer::{UPLOAD_URL_TTL, UploadOffer, UploadUrl};
pub use quota::DEFAULT_MAX_ACCOUNT_BYTES;
pub(crate) use quota::exceeded;
pub use read::Download;

/// Settings of the object service.
#[derive(Debug, Clone)]
pub struct ObjectConfig {
    /// Where objects and their short links live: the pages' origins.
    pub origins: PageOrigins,
    /// Most bytes of one object (`QUIRE_MAX_OBJECT_BYTES`).
    pub max_bytes: u64,
    /// How long an upload holds its pending record without renewing it; an upload renews
    /// at a third of this as bytes arrive.
    pub lease: Duration,
    /// Public ids tried before giving up with `public_id_exhausted`.
    pub public_id_attempts: u32,
    /// Most bytes one account's objects may hold together
    /// (`QUIRE_MAX_OBJECT_BYTES_PER_ACCOUNT`); 0 is no cap.
    pub max_account_bytes: u64,
}

impl Default for ObjectConfig {
    fn default() -> Self {
        Self {
            origins: PageOrigins::default(),
            max_bytes: DEFAULT_MAX_OBJECT_BYTES,
            lease: Duration::from_secs(60),
            public_id_attempts: 5,
            max_account_bytes: DEFAULT_MAX_ACCOUNT_BYTES,
        }
    }
}

/// The adapters an [`ObjectService`] works through.
#[derive(Debug, Clone)]
pub struct ObjectPorts {
    pub records: Arc<dyn ObjectRecords>,
    pub bytes: Arc<dyn ObjectBytes>,
    pub links: Arc<dyn LinkStore>,
    pub accounts: Arc<dyn AccountDirectory>,
    pub projects: Arc<dyn ProjectStore>,
    pub clock: Arc<dyn Clock>,
    /// Where link passwords are hashed, off the async workers.
    pub offload: Arc<dyn Offload>,
    pub ids: Arc<dyn PublicIds>,
    /// Told of every committed change to an object's link.
    pub changes: Arc<dyn PageChanges>,
    /// Counts the uses of upload URLs, so each is used once on whichever replica.
    pub limiter: Arc<dyn RateLimiter>,
}

/// A new object's fields, as the request typed them; the bytes follow through the
/// [`Upload`].
#[derive(Debug, Clone, Default)]
pub struct NewObject {
    pub title: Option<String>,
    pub slug: Option<String>,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    /// Its link's access, expiry, download budget, allow list, alias and password.
    pub policy: PolicyInput,
    pub project: Option<String>,
    /// The length the client declared, when it did: over the cap is refused before any
    /// byte is stored.
    pub declared_size: Option<u64>,
}

/// A change: `None` keeps a field; `Some(None)` clears a nullable one.
#[derive(Debug, Clone, Default)]
pub struct ObjectPatch {
    pub title: Option<String>,
    pub slug: Option<String>,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    /// The changes to its link's access, expiry, download budget, allow list, alias and
    /// password.
    pub policy: PolicyPatch,
    pub status: Option<String>,
}

/// An object as the API shows it: with its link, its addresses and its project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectView {
    pub object: Object,
    pub link: Link,
    pub url: String,
    pub short_url: String,
    pub project_slug: ProjectSlug,
}

/// What the janitor's sweep removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    /// Uploads that died (their lease lapsed) and what they had stored.
    pub dead_uploads: usize,
    /// Bytes of objects whose record is gone (a delete whose storage step failed).
    pub orphaned: usize,
    /// Pieces of interrupted writes.
    pub partial: usize,
}

/// The object use cases.
#[derive(Debug, Clone)]
pub struct ObjectService {
    pub(crate) ports: ObjectPorts,
    pub(crate) config: ObjectConfig,
}

impl ObjectService {
    #[must_use]
    pub fn new(ports: ObjectPorts, config: ObjectConfig) -> Self {
        Self { ports, config }
    }

    /// Most bytes of one object.
    #[must_use]
    pub fn max_bytes(&self) -> u64 {
        self.config.max_bytes
    }

    pub(crate) fn view(
        &self,
        object: Object,
        link: Link,
        handle: &Handle,
        project: ProjectSlug,
    ) -> ObjectView {
        ObjectView {
            url: self
                .config
                .origins
                .object_url(handle.as_str(), &object.slug),
            short_url: self.config.origins.short_url(link.code()),
            object,
            link,
            project_slug: project,
        }
    }

    pub(crate) async fn owner(&self, account: AccountId) -> Result<Handle, ObjectError> {
        Ok(self
            .ports
            .accounts
            .handle_and_email(account)
            .await?
            .ok_or(ObjectError::ProfileHandleMissing)?
            .0)
    }

    /// An object of the caller's account in a project the caller reaches with `access`:
    /// another account's object is `NotFound`.
    pub(crate) async fn reachable(
        &self,
        principal: &Principal,
        id: ObjectId,
        access: ProjectAccess,
    ) -> Result<(Object, Link, ProjectSlug), ObjectError> {
        let object = self
            .ports
            .records
            .object(id)
            .await?
            .filter(|o| o.account_id == principal.account_id)
            .ok_or(ObjectError::NotFound)?;
        let project = authorize_project(
            self.ports.projects.as_ref(),
            principal,
            object.project_id,
            access,
        )
        .await?;
        let link = self
            .ports
            .links
            .link(object.link_id())
            .await?
            .ok_or_else(|| InfraError::new("an object's link is missing"))?;
        Ok((object, link, project.slug))
    }

    pub(crate) async fn hash_password(&self, password: String) -> Result<String, ObjectError> {
        offloaded(self.ports.offload.as_ref(), move || {
            hash_password_unchecked(&password)
        })
        .await?
        .map_err(|e| ObjectError::Infra(InfraError::new(e.to_string())))
    }
}

pub(crate) fn status_of(raw: &str) -> Result<crate::ObjectStatus, ObjectError> {
    crate::ObjectStatus::parse(raw)
        .ok_or_else(|| ObjectError::Invalid("status must be active or archived".into()))
}
