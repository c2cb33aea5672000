//! Starting uploads, changing and deleting objects, and the janitor's sweep.

use quire_kernel::secret::Sha256Running;
use quire_kernel::{LinkId, ObjectId, Principal};
use quire_links::{Access, AllowOrder, Link};
use quire_pages::validate as page_rules;
use quire_projects::{ProjectAccess, address_project};
use time::OffsetDateTime;

use super::{NewObject, ObjectError, ObjectPatch, ObjectService, ObjectView, Swept, status_of};
use crate::model::{Object, ObjectStatus};
use crate::ports::InsertObjectError;
use crate::upload::{Purpose, Upload};
use crate::validate;

/// How a new object's pending record is stored.
pub(crate) struct Reserve {
    pub(crate) id: ObjectId,
    pub(crate) lease_until: OffsetDateTime,
    /// What the record holds until its bytes are measured: 0, or an upload URL's cap.
    pub(crate) size_bytes: u64,
}

/// A new object checked and its pending record stored, before its bytes.
pub(crate) struct Prepared {
    pub(crate) object: Object,
    pub(crate) link: Link,
    pub(crate) handle: quire_kernel::Handle,
    pub(crate) project: quire_kernel::ProjectSlug,
    /// The account's object bytes beside its quota, before this object's.
    pub(crate) quota: quire_kernel::Usage,
}

/// A fresh name for an upload's bytes.
fn blob_name() -> String {
    LinkId::new().to_string()
}

impl ObjectService {
    pub(crate) fn lease_end(&self) -> OffsetDateTime {
        self.ports.clock.now()
            + time::Duration::try_from(self.config.lease).unwrap_or(time::Duration::minutes(1))
    }

    pub(crate) fn renew_point(&self) -> OffsetDateTime {
        self.ports.clock.now()
            + time::Duration::try_from(self.config.lease / 3).unwrap_or(time::Duration::seconds(20))
    }

    /// Checks a new object's fields and stores its pending record; the bytes follow
    /// through the returned [`Upload`]. `part_filename` is the name the file part carried.
    ///
    /// # Errors
    /// `InsufficientScope`, `Invalid`, `PasswordRequired`, `SlugConflict`, `AliasConflict`,
    /// `TooLarge` (a declared size over the cap), `StorageQuotaExceeded` (a declared size
    /// over what the account's quota leaves, or none left), `PublicIdExhausted`,
    /// `ProfileHandleMissing`, `Infra`; nothing is stored on error.
    pub async fn begin(
        &self,
        principal: &Principal,
        req: NewObject,
        part_filename: Option<&str>,
    ) -> Result<Upload, ObjectError> {
        let reserve = Reserve {
            id: ObjectId::new(),
            lease_until: self.lease_end(),
            size_bytes: 0,
        };
        let new = self.prepare(principal, req, part_filename, reserve).await?;
        let sink = match self
            .ports
            .bytes
            .start(new.object.id, &new.object.blob)
            .await
        {
            Ok(sink) => sink,
            Err(e) => {
                let _ = self.ports.records.delete_object(new.object.id).await;
                return Err(e.into());
            }
        };
        Ok(Upload {
            service: self.clone(),
            object: new.object,
            link: new.link,
            handle: new.handle,
            project: new.project,
            purpose: Purpose::Create,
            sink: Some(sink),
            hasher: Sha256Running::default(),
            size: 0,
            limit: self.config.max_bytes,
            quota: new.quota,
            renew_at: self.renew_point(),
        })
    }

    /// What [`ObjectService::begin`] and an upload URL share: the fields checked, and the
    /// pending record stored as `reserve` says, with its link made but not stored.
    /// Nothing is stored on error.
    pub(crate) async fn prepare(
        &self,
        principal: &Principal,
        req: NewObject,
        part_filename: Option<&str>,
        reserve: Reserve,
    ) -> Result<Prepared, ObjectError> {
        let project = address_project(
            self.ports.projects.as_ref(),
            principal,
            req.project.as_deref(),
            ProjectAccess::Write,
        )
        .await?;
        if let Some(size) = req.declared_size
            && size > self.config.max_bytes
        {
            return Err(ObjectError::TooLarge {
                limit: self.config.max_bytes,
            });
        }
        let quota = self.usage_of(project.account_id).await?;
        Self::check_room(quota, req.declared_size)?;
        let now = self.ports.clock.now();
        let filename =
            validate::filename(req.filename.as_deref().or(part_filename).unwrap_or("file"));
        let content_type = match req.content_type.as_deref() {
            Some(t) => validate::content_type(t)?,
            None => validate::guessed_content_type(&filename),
        };
        let title = page_rules::title(req.title.as_deref().unwrap_or(&filename))?;
        let explicit_slug = req.slug.as_deref().map(page_rules::slug).transpose()?;
        // A taken alias is refused here, before any byte is taken: the link is stored only
        // once the bytes are.
        let sent_alias = req.policy.alias.clone();
        let alias_free = async {
            if let Some(a) = &sent_alias
                && self.ports.links.link_by_code(a).await?.is_some()
            {
                return Err(ObjectError::AliasConflict);
            }
            Ok(())
        };
        let (valid, ()) = req
            .policy
            .validate_with(
                now,
                self.ports.accounts.as_ref(),
                Access::Private,
                AllowOrder::BeforeAlias,
                alias_free,
            )
            .await?;
        let handle = self.owner(project.account_id).await?;
        let password_hash = match valid.password {
            Some(p) => Some(self.hash_password(p).await?),
            None => None,
        };
        let mut object = Object {
            id: reserve.id,
            public_id: String::new(),
            account_id: project.account_id,
            project_id: project.id,
            slug: String::new(),
            title,
            filename,
            content_type,
            size_bytes: reserve.size_bytes,
            sha256: String::new(),
            blob: blob_name(),
            status: ObjectStatus::Active,
            created_at: now,
            updated_at: now,
            archived_at: None,
        };
        self.insert_with_fresh_ids(&mut object, explicit_slug.as_deref(), reserve.lease_until)
            .await?;
        let link = Link {
            alias: valid.alias,
            password_hash,
            ..Link::of_object(
                object.id,
                object.account_id,
                object.project_id,
                object.public_id.clone(),
                valid.policy,
                now,
            )
        };
        Ok(Prepared {
            object,
            link,
            handle,
            project: project.slug,
            quota,
        })
    }

    /// Starts new bytes for an object: its URL, link, policy and counts stay. A declared
    /// `filename` or `content_type` replaces the stored one.
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Invalid`, `TooLarge` (a declared size over the
    /// cap), `StorageQuotaExceeded` (a declared size over what the account's quota leaves
    /// beside the object's other objects), `Infra`.
    pub async fn begin_replace(
        &self,
        principal: &Principal,
        id: ObjectId,
        filename: Option<&str>,
        content_type: Option<&str>,
        declared_size: Option<u64>,
    ) -> Result<Upload, ObjectError> {
        let (mut object, link, project) =
            self.reachable(principal, id, ProjectAccess::Write).await?;
        let old = Box::new(object.clone());
        if let Some(size) = declared_size
            && size > self.config.max_bytes
        {
            return Err(ObjectError::TooLarge {
                limit: self.config.max_bytes,
            });
        }
        // The bytes replaced leave the quota as the new ones come.
        let mut quota = self.usage_of(object.account_id).await?;
        quota.used = quota.used.saturating_sub(object.size_bytes);
        Self::check_room(quota, declared_size)?;
        if let Some(f) = filename {
            object.filename = validate::filename(f);
        }
        // A new name without a type says the type too: the one the name implies.
        let retyped = content_type.is_some() || filename.is_some();
        match content_type {
            Some(t) => object.content_type = validate::content_type(t)?,
            None if filename.is_some() => {
                object.content_type = validate::guessed_content_type(&object.filename);
            }
            None => {}
        }
        let handle = self.owner(object.account_id).await?;
        object.blob = blob_name();
        let sink = self.ports.bytes.start(object.id, &object.blob).await?;
        Ok(Upload {
            service: self.clone(),
            object,
            link,
            handle,
            project,
            purpose: Purpose::Replace {
                old,
                renamed: filename.is_some(),
                retyped,
            },
            sink: Some(sink),
            hasher: Sha256Running::default(),
            size: 0,
            limit: self.config.max_bytes,
            quota,
            renew_at: self.renew_point(),
        })
    }

    /// Tries public ids (and, for a derived slug, `-2`, `-3`… suffixes) until the pending
    /// record is stored. A slug held by a dead upload (lease lapsed) is reclaimed first.
    async fn insert_with_fresh_ids(
        &self,
        object: &mut Object,
        explicit_slug: Option<&str>,
        lease_until: OffsetDateTime,
    ) -> Result<(), ObjectError> {
        let base =
            explicit_slug.map_or_else(|| page_rules::slug_from_title(&object.title), str::to_owned);
        let mut candidate = 1;
        let mut id_attempts = 0;
        let mut reclaimed = false;
        object.public_id = self.ports.ids.next_id();
        loop {
            object.slug = page_rules::slug_candidate(&base, candidate);
            match self.ports.records.insert_pending(object, lease_until).await {
                Ok(()) => return Ok(()),
                Err(InsertObjectError::SlugTaken) if !reclaimed => {
                    reclaimed = true;
                    let now = self.ports.clock.now();
                    if let Some(dead) = self
                        .ports
                        .records
                        .lapsed_slug_holder(object.account_id, &object.slug, now)
                        .await?
                    {
                        self.reclaim(dead).await;
                    }
                }
                Err(InsertObjectError::SlugTaken) if explicit_slug.is_some() => {
                    return Err(ObjectError::SlugConflict);
                }
                Err(InsertObjectError::SlugTaken) => {
                    reclaimed = false;
                    candidate += 1;
                    if candidate > 1_000 {
                        return Err(ObjectError::SlugConflict);
                    }
                }
                Err(InsertObjectError::PublicIdTaken) => {
                    id_attempts += 1;
                    if id_attempts >= self.config.public_id_attempts {
                        return Err(ObjectError::PublicIdExhausted);
                    }
                    object.public_id = self.ports.ids.next_id();
                }
                Err(InsertObjectError::Infra(e)) => return Err(e.into()),
            }
        }
    }

    /// Removes a dead upload: its link (if it got that far), bytes, then the record (kept
    /// when either cannot go, so the janitor finds it again). Returns whether it went.
    pub(crate) async fn reclaim(&self, id: ObjectId) -> bool {
        self.ports
            .links
            .delete_link(quire_kernel::LinkId(id.0))
            .await
            .is_ok()
            && self.ports.bytes.delete_object(id).await.is_ok()
            && self.ports.records.delete_object(id).await.is_ok()
    }

    /// Changes an object's fields and policy; its bytes, codes and counts stay.
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Invalid`, `PasswordRequired`, `SlugTaken`,
    /// `AliasConflict`, `Infra`; nothing changes on error.
    pub async fn update(
        &self,
        principal: &Principal,
        id: ObjectId,
        req: ObjectPatch,
    ) -> Result<ObjectView, ObjectError> {
        let (mut object, mut link, project) =
            self.reachable(principal, id, ProjectAccess::Write).await?;
        let before = (object.clone(), link.clone());
        let now = self.ports.clock.now();
        if let Some(t) = &req.title {
            object.title = page_rules::title(t)?;
        }
        if let Some(s) = &req.slug {
            object.slug = page_rules::slug(s)?;
        }
        if let Some(f) = &req.filename {
            object.filename = validate::filename(f);
        }
        if let Some(t) = &req.content_type {
            object.content_type = validate::content_type(t)?;
        }
        if let Some(s) = &req.status {
            let status = status_of(s)?;
            if status != object.status {
                object.status = status;
                object.archived_at = (status == ObjectStatus::Archived).then_some(now);
                link.archived_at = object.archived_at;
            }
        }
        let password = req
            .policy
            .apply(&mut link, now, self.ports.accounts.as_ref())
            .await?;
        if let Some(p) = password {
            link.password_hash = Some(self.hash_password(p).await?);
        }
        let handle = self.owner(object.account_id).await?;
        object.updated_at = now;
        link.updated_at = now;
        if link != before.1 {
            self.ports.links.update_link(&link).await?;
        }
        if object != before.0
            && let Err(e) = self.ports.records.update_object(&object).await
        {
            // The link went first: put it back, so nothing is half-applied.
            if link != before.1 {
                let _ = self.ports.links.update_link(&before.1).await;
            }
            self.ports.changes.link_changed(link.id);
            return Err(match e {
                InsertObjectError::SlugTaken => ObjectError::SlugTaken,
                InsertObjectError::PublicIdTaken => {
                    ObjectError::Infra(quire_kernel::InfraError::new("public id taken on update"))
                }
                InsertObjectError::Infra(e) => e.into(),
            });
        }
        self.ports.changes.link_changed(link.id);
        Ok(self.view(object, link, &handle, project))
    }

    /// Deletes an object: bytes, link, record. The record goes even when a step before it
    /// failed (the janitor removes what stayed), and the answer says which.
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`, `StorageCleanupFailed`, `LinkCleanupFailed`,
    /// `Infra` (the record stays).
    pub async fn delete(&self, principal: &Principal, id: ObjectId) -> Result<(), ObjectError> {
        let (object, link, _) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let storage = self.ports.bytes.delete_object(object.id).await;
        let link_gone = self.ports.links.delete_link(link.id).await;
        let record = self.ports.records.delete_object(object.id).await;
        self.ports.changes.link_changed(link.id);
        record?;
        if storage.is_err() {
            return Err(ObjectError::StorageCleanupFailed);
        }
        if link_gone.is_err() {
            return Err(ObjectError::LinkCleanupFailed);
        }
        Ok(())
    }

    /// The janitor's work: dead uploads (lease lapsed), bytes whose record is gone, and the
    /// pieces of interrupted writes older than `partial_age`.
    ///
    /// # Errors
    /// Storage failures of the listings; a removal that fails is left for the next sweep.
    pub async fn sweep(&self, partial_age: std::time::Duration) -> Result<Swept, ObjectError> {
        let mut swept = Swept::default();
        let now = self.ports.clock.now();
        for id in self.ports.records.stale_pending(now).await? {
            if self.reclaim(id).await {
                swept.dead_uploads += 1;
            }
        }
        for id in self.ports.bytes.objects().await? {
            if !self.ports.records.object_exists(id).await?
                && self.ports.bytes.delete_object(id).await.is_ok()
            {
                swept.orphaned += 1;
            }
        }
        swept.partial = self.ports.bytes.sweep_partial(partial_age).await?;
        Ok(swept)
    }
}
