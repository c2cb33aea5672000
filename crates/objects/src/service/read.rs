//! Listing and fetching objects, and the owner's download.

use std::collections::HashMap;

use quire_kernel::{InfraError, ObjectId, Principal, ProjectSlug};
use quire_projects::{ProjectAccess, address_project};

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
}
