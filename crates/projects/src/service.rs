//! The project use cases. Each returns its own error enum; the HTTP layer maps them.

use std::sync::Arc;

use quire_kernel::{
    Clock, InfraError, KeyId, LinkId, PageChanges, PageId, Principal, ProjectId, ProjectSlug,
};
use uuid::Uuid;

use quire_kernel::{Paged, Paging, TimeKey};

use crate::addressing::{AddressError, ProjectAccess, address_project};

/// The list tag of the account's projects in cursors ([`ProjectService::list_page`]).
pub const PROJECTS_LIST: &str = "projects";
/// The list tag of a project's resources in cursors ([`ProjectService::resources_page`]).
pub const RESOURCES_LIST: &str = "resources";
pub use crate::errors::{
    AssignError, DeleteProjectError, GetProjectError, GrantError, ListProjectsError,
    WriteProjectError,
};
pub use crate::fields::{MAX_CLIENT_ID_LEN, MAX_NAME_CHARS, MAX_TAG_CHARS};
use crate::fields::{check_client_id, check_color, check_name, check_slug, check_tag};
use crate::model::{
    Grant, GrantLevel, Project, ProjectStatus, ResourceEntry, ResourceKey, ResourceType, Resources,
};
use crate::ports::{AssignStoreError, DeleteProjectStoreError, ProjectStore};

/// Fields of a new project, as strings already known to be present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProject {
    pub name: String,
    pub tag: String,
    pub color: String,
    pub slug: String,
    pub oauth_client_id: Option<String>,
}

/// A partial update: `None` leaves a field as it is. `oauth_client_id: Some(None)` detaches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectPatch {
    pub name: Option<String>,
    pub tag: Option<String>,
    pub color: Option<String>,
    pub slug: Option<String>,
    pub oauth_client_id: Option<Option<String>>,
    pub status: Option<String>,
}

/// The project use cases.
#[derive(Debug, Clone)]
pub struct ProjectService {
    store: Arc<dyn ProjectStore>,
    clock: Arc<dyn Clock>,
    changes: Arc<dyn PageChanges>,
}

impl ProjectService {
    /// `changes` hears of pages and links that move between projects.
    pub fn new(
        store: Arc<dyn ProjectStore>,
        clock: Arc<dyn Clock>,
        changes: Arc<dyn PageChanges>,
    ) -> Self {
        Self {
            store,
            clock,
            changes,
        }
    }

    /// The addressing rules (see [`crate::addressing`]) bound to this service's store.
    ///
    /// # Errors
    /// As [`address_project`].
    pub async fn address(
        &self,
        principal: &Principal,
        slug: Option<&str>,
        access: ProjectAccess,
    ) -> Result<Project, AddressError> {
        address_project(self.store.as_ref(), principal, slug, access).await
    }

    /// # Errors
    /// [`ListProjectsError::InsufficientScope`] for app keys.
    pub async fn list(&self, principal: &Principal) -> Result<Vec<Project>, ListProjectsError> {
        if !(principal.is_master() || principal.is_oauth_client()) {
            return Err(ListProjectsError::InsufficientScope);
        }
        Ok(self.store.projects_of_account(principal.account_id).await?)
    }

    /// One page of [`ProjectService::list`], oldest first (list tag [`PROJECTS_LIST`]).
    ///
    /// # Errors
    /// As [`ProjectService::list`].
    pub async fn list_page(
        &self,
        principal: &Principal,
        paging: &Paging<TimeKey>,
    ) -> Result<Paged<Project>, ListProjectsError> {
        if !(principal.is_master() || principal.is_oauth_client()) {
            return Err(ListProjectsError::InsufficientScope);
        }
        let projects = self
            .store
            .projects_after(principal.account_id, paging.after.as_ref(), paging.fetch())
            .await?;
        Ok(Paged::from_fetched(PROJECTS_LIST, paging, projects, |p| {
            TimeKey {
                at: p.created_at,
                id: p.id.0,
            }
        }))
    }

    /// # Errors
    /// See [`WriteProjectError`]; nothing is stored on error.
    pub async fn create(
        &self,
        principal: &Principal,
        input: NewProject,
    ) -> Result<Project, WriteProjectError> {
        if !principal.is_master() {
            return Err(WriteProjectError::InsufficientScope);
        }
        let now = self.clock.now();
        let project = Project {
            id: ProjectId::new(),
            account_id: principal.account_id,
            name: check_name(&input.name)?,
            tag: check_tag(&input.tag)?,
            color: check_color(&input.color)?,
            slug: check_slug(&input.slug)?,
            oauth_client_id: check_client_id(input.oauth_client_id)?,
            status: ProjectStatus::Active,
            created_at: now,
            updated_at: now,
        };
        self.store.insert_project(&project).await?;
        Ok(project)
    }

    /// The caller's project `id`: any of the account's for a master key or bearer token,
    /// only the home project for an app key.
    ///
    /// # Errors
    /// [`GetProjectError::NotFound`] for an unknown, foreign or (for app keys) non-home project.
    pub async fn get(
        &self,
        principal: &Principal,
        id: ProjectId,
    ) -> Result<Project, GetProjectError> {
        if !(principal.is_master() || principal.is_oauth_client())
            && id != principal.home_project_id
        {
            return Err(GetProjectError::NotFound);
        }
        match self.store.project_by_id(id).await? {
            Some(p) if p.account_id == principal.account_id => Ok(p),
            _ => Err(GetProjectError::NotFound),
        }
    }

    /// # Errors
    /// As [`ProjectService::get`].
    pub async fn resources(
        &self,
        principal: &Principal,
        id: ProjectId,
    ) -> Result<Resources, GetProjectError> {
        let project = self.get(principal, id).await?;
        Ok(self.store.resources(project.id).await?)
    }

    /// One page of [`ProjectService::resources`] (list tag [`RESOURCES_LIST`]): kind by
    /// kind in [`ResourceType::ALL`]'s order, each kind oldest first, ties by id.
    ///
    /// # Errors
    /// As [`ProjectService::get`].
    pub async fn resources_page(
        &self,
        principal: &Principal,
        id: ProjectId,
        paging: &Paging<ResourceKey>,
    ) -> Result<Paged<(ResourceType, ResourceEntry)>, GetProjectError> {
        let project = self.get(principal, id).await?;
        let wanted = paging.fetch() as usize;
        let mut items = Vec::new();
        for kind in ResourceType::ALL {
            let after = match &paging.after {
                Some(k) if k.kind.rank() > kind.rank() => continue,
                Some(k) if k.kind == kind => Some(&k.at),
                _ => None,
            };
            let left = wanted.saturating_sub(items.len());
            if left == 0 {
                break;
            }
            let limit = u32::try_from(left).unwrap_or(u32::MAX);
            let entries = self
                .store
                .resources_after(project.id, kind, after, limit)
                .await?;
            items.extend(entries.into_iter().map(|e| (kind, e)));
        }
        Ok(Paged::from_fetched(
            RESOURCES_LIST,
            paging,
            items,
            |(kind, e)| ResourceKey {
                kind: *kind,
                at: TimeKey {
                    at: e.created_at,
                    id: e.id,
                },
            },
        ))
    }

    async fn owned_by_master(
        &self,
        principal: &Principal,
        id: ProjectId,
    ) -> Result<Option<Project>, InfraError> {
        Ok(self
            .store
            .project_by_id(id)
            .await?
            .filter(|p| p.account_id == principal.account_id))
    }

    /// Applies the supplied fields only.
    ///
    /// # Errors
    /// See [`WriteProjectError`]; nothing is changed on error.
    pub async fn update(
        &self,
        principal: &Principal,
        id: ProjectId,
        patch: ProjectPatch,
    ) -> Result<Project, WriteProjectError> {
        if !principal.is_master() {
            return Err(WriteProjectError::InsufficientScope);
        }
        let mut project = self
            .owned_by_master(principal, id)
            .await?
            .ok_or(WriteProjectError::NotFound)?;
        if let Some(name) = patch.name {
            project.name = check_name(&name)?;
        }
        if let Some(tag) = patch.tag {
            project.tag = check_tag(&tag)?;
        }
        if let Some(color) = patch.color {
            project.color = check_color(&color)?;
        }
        if let Some(slug) = patch.slug {
            project.slug = check_slug(&slug)?;
        }
        if let Some(client) = patch.oauth_client_id {
            project.oauth_client_id = check_client_id(client)?;
        }
        if let Some(status) = patch.status {
            project.status = ProjectStatus::parse(&status).ok_or_else(|| {
                WriteProjectError::InvalidProject("status must be active or archived".into())
            })?;
        }
        project.updated_at = self.clock.now();
        self.store.update_project(&project).await?;
        // Its slug shows in its pages' views, its client names a bearer's home project.
        self.changes.project_changed(project.id);
        Ok(project)
    }

    /// Deletes a project, moving its contents to `move_to` (a slug of another project of
    /// the account) first when given.
    ///
    /// # Errors
    /// See [`DeleteProjectError`]; nothing is changed on error.
    pub async fn delete(
        &self,
        principal: &Principal,
        id: ProjectId,
        confirm: &str,
        move_to: Option<&str>,
    ) -> Result<(), DeleteProjectError> {
        if !principal.is_master() {
            return Err(DeleteProjectError::InsufficientScope);
        }
        let project = self
            .owned_by_master(principal, id)
            .await?
            .ok_or(DeleteProjectError::NotFound)?;
        if confirm != id.to_string() {
            return Err(DeleteProjectError::ConfirmMismatch);
        }
        let destination = match move_to {
            None => None,
            Some(slug) => {
                let bad = || {
                    DeleteProjectError::InvalidMoveTo(
                        "move_to must be the slug of another project of this account".into(),
                    )
                };
                let slug = ProjectSlug::parse(slug).map_err(|_| bad())?;
                let dest = self.store.project_by_slug(&slug).await?.ok_or_else(bad)?;
                if dest.account_id != principal.account_id || dest.id == project.id {
                    return Err(bad());
                }
                Some(dest.id)
            }
        };
        let projects = self.store.projects_of_account(principal.account_id).await?;
        if projects.len() <= 1 {
            return Err(DeleteProjectError::LastProject);
        }
        self.store
            .delete_project(&project, destination)
            .await
            .map_err(|e| match e {
                DeleteProjectStoreError::NotEmpty => DeleteProjectError::NotEmpty,
                DeleteProjectStoreError::Infra(e) => DeleteProjectError::Infra(e),
            })?;
        self.changes.project_changed(project.id);
        Ok(())
    }

    /// Moves a resource of the account into project `dest`.
    ///
    /// # Errors
    /// See [`AssignError`].
    pub async fn assign(
        &self,
        principal: &Principal,
        dest: ProjectId,
        resource_type: ResourceType,
        resource_id: Uuid,
    ) -> Result<(), AssignError> {
        if !principal.is_master() {
            return Err(AssignError::InsufficientScope);
        }
        self.owned_by_master(principal, dest)
            .await?
            .ok_or(AssignError::NotFound)?;
        self.move_resource(principal, dest, resource_type, resource_id)
            .await
    }

    /// Moves a resource of the account back to the account's default project.
    ///
    /// # Errors
    /// See [`AssignError`].
    pub async fn unassign(
        &self,
        principal: &Principal,
        resource_type: ResourceType,
        resource_id: Uuid,
    ) -> Result<(), AssignError> {
        if !principal.is_master() {
            return Err(AssignError::InsufficientScope);
        }
        let default = self
            .store
            .default_project_of(principal.account_id)
            .await?
            .ok_or_else(|| InfraError::new("account has no default project"))?;
        self.move_resource(principal, default, resource_type, resource_id)
            .await
    }

    async fn move_resource(
        &self,
        principal: &Principal,
        dest: ProjectId,
        resource_type: ResourceType,
        resource_id: Uuid,
    ) -> Result<(), AssignError> {
        self.store
            .assign_resource(
                principal.account_id,
                resource_type,
                resource_id,
                dest,
                self.clock.now(),
            )
            .await
            .map_err(|e| match e {
                AssignStoreError::NotFound => AssignError::NotFound,
                AssignStoreError::MasterKey => AssignError::MasterKey,
                AssignStoreError::Infra(e) => AssignError::Infra(e),
            })?;
        match resource_type {
            ResourceType::Page => self.changes.page_changed(PageId(resource_id)),
            // An object's link has the object's id.
            ResourceType::Link | ResourceType::Object => {
                self.changes.link_changed(LinkId(resource_id));
            }
            ResourceType::Database | ResourceType::Key => {}
        }
        Ok(())
    }

    async fn check_grant_target(
        &self,
        principal: &Principal,
        project: ProjectId,
        key: KeyId,
    ) -> Result<(), GrantError> {
        // Bearer principals can never create or revoke grants (authentication rule 4).
        if !principal.is_master() {
            return Err(GrantError::InsufficientScope);
        }
        self.owned_by_master(principal, project)
            .await?
            .ok_or(GrantError::NotFound)?;
        match self.store.key_account(key).await? {
            Some(owner) if owner == principal.account_id => Ok(()),
            _ => Err(GrantError::NotFound),
        }
    }

    /// Creates the grant or changes its level.
    ///
    /// # Errors
    /// See [`GrantError`].
    pub async fn put_grant(
        &self,
        principal: &Principal,
        project: ProjectId,
        key: KeyId,
        level: GrantLevel,
    ) -> Result<Grant, GrantError> {
        self.check_grant_target(principal, project, key).await?;
        let grant = Grant {
            key_id: key,
            project_id: project,
            level,
            created_at: self.clock.now(),
        };
        Ok(self.store.put_grant(&grant).await?)
    }

    /// # Errors
    /// See [`GrantError`]; a grant that does not exist is [`GrantError::NotFound`].
    pub async fn delete_grant(
        &self,
        principal: &Principal,
        project: ProjectId,
        key: KeyId,
    ) -> Result<(), GrantError> {
        self.check_grant_target(principal, project, key).await?;
        if self.store.delete_grant(key, project).await? {
            Ok(())
        } else {
            Err(GrantError::NotFound)
        }
    }
}
