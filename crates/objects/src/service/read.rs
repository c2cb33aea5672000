//! Listing and fetching objects, and the owner's download.

use std::collections::HashMap;

use quire_kernel::{InfraError, ObjectId, Principal, ProjectSlug};
use quire_links::{AllowEntry, Link};
use quire_projects::{ProjectAccess, address_project};
use time::Date;

use super::{ObjectError, ObjectService, ObjectView, status_of};
use crate::model::Object;
use crate::ports::ByteStream;

/// An object's bytes on their way to its owner.
pub struct Download {
    pub object: Object,
    pub bytes: ByteStream,
}

impl std::fmt::Debug for Download {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Download")
            .field("object", &self.object.id)
            .finish_non_exhaustive()
    }
}

impl ObjectService {
    /// The objects of a project (default: the key's home project), newest first.
    ///
    /// # Errors
    /// `InsufficientScope`, `Invalid` (status), `ProfileHandleMissing`, `Infra`.
    pub async fn list(
        &self,
        principal: &Principal,
        project: Option<&str>,
        status: Option<&str>,
    ) -> Result<(Vec<ObjectView>, ProjectSlug), ObjectError> {
        let status = status.map(status_of).transpose()?;
        let project = address_project(
            self.ports.projects.as_ref(),
            principal,
            project,
            ProjectAccess::Read,
        )
        .await?;
        let objects = self
            .ports
            .records
            .project_objects(project.id, status)
            .await?;
        if objects.is_empty() {
            return Ok((Vec::new(), project.slug));
        }
        let handle = self.owner(project.account_id).await?;
        let mut links = HashMap::new();
        for o in &objects {
            if let Some(link) = self.ports.links.link(o.link_id()).await? {
                links.insert(o.id, link);
            }
        }
        let views = objects
            .into_iter()
            .map(|o| {
                let link = links
                    .remove(&o.id)
                    .ok_or_else(|| InfraError::new("an object's link is missing"))?;
                Ok(self.view(o, link, &handle, project.slug.clone()))
            })
            .collect::<Result<Vec<_>, ObjectError>>()?;
        Ok((views, project.slug))
    }

    /// # Errors
    /// `NotFound`, `InsufficientScope`, `ProfileHandleMissing`, `Infra`.
    pub async fn get(
        &self,
        principal: &Principal,
        id: ObjectId,
    ) -> Result<ObjectView, ObjectError> {
        let (object, link, project) = self.reachable(principal, id, ProjectAccess::Read).await?;
        let handle = self.owner(object.account_id).await?;
        Ok(self.view(object, link, &handle, project))
    }

    /// The bytes for the owner (or an agent of theirs): no view is counted, and the policy
    /// does not apply.
    ///
    /// # Errors
    /// `NotFound` (also when the bytes are missing), `InsufficientScope`, `Infra`.
    pub async fn download(
        &self,
        principal: &Principal,
        id: ObjectId,
    ) -> Result<Download, ObjectError> {
        let (object, _, _) = self.reachable(principal, id, ProjectAccess::Read).await?;
        let bytes = self
            .ports
            .bytes
            .read(object.id, &object.blob, None)
            .await?
            .ok_or(ObjectError::NotFound)?;
        Ok(Download { object, bytes })
    }

    /// Downloads counted per day over the last `days` days up to today (UTC), oldest first,
    /// every day present (0 where none): the dashboard draws them.
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Infra`.
    pub async fn daily_views(
        &self,
        principal: &Principal,
        id: ObjectId,
        days: u16,
    ) -> Result<Vec<(Date, u64)>, ObjectError> {
        let (object, _, _) = self.reachable(principal, id, ProjectAccess::Read).await?;
        let span = i64::from(days.max(1));
        let first = self.ports.clock.now().date() - time::Duration::days(span - 1);
        let counted: HashMap<Date, u64> = self
            .ports
            .links
            .daily_views(object.link_id(), first)
            .await?
            .into_iter()
            .collect();
        Ok((0..span)
            .map(|n| {
                let day = first + time::Duration::days(n);
                (day, counted.get(&day).copied().unwrap_or(0))
            })
            .collect())
    }

    /// An object's allow list as its owner would type it again: the handle of each account
    /// it names (an account gone since is left out), and each email.
    ///
    /// # Errors
    /// `Infra`.
    pub async fn allowed(&self, link: &Link) -> Result<Vec<String>, ObjectError> {
        let mut names = Vec::with_capacity(link.policy.allow.len());
        for entry in &link.policy.allow {
            match entry {
                AllowEntry::Account(account) => {
                    if let Some((handle, _)) =
                        self.ports.accounts.handle_and_email(*account).await?
                    {
                        names.push(handle.as_str().to_owned());
                    }
                }
                AllowEntry::Email(email) => names.push(email.as_str().to_owned()),
            }
        }
        Ok(names)
    }
}
