//! Ports of the projects domain.

use async_trait::async_trait;
use quire_kernel::{AccountId, InfraError, KeyId, ProjectId, ProjectSlug, TimeKey};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::model::{Grant, GrantLevel, Project, ResourceEntry, ResourceType, Resources};

/// Why inserting or updating a project failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProjectWriteError {
    #[error("slug already used by a project")]
    SlugTaken,
    #[error("oauth client already attached to another project of the account")]
    ClientAlreadyAttached,
    #[error("no live oauth client has that id")]
    UnknownClient,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Why deleting a project failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeleteProjectStoreError {
    #[error("project still holds resources")]
    NotEmpty,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Why moving a resource failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssignStoreError {
    #[error("no such resource in the account")]
    NotFound,
    #[error("master keys always belong to the default project")]
    MasterKey,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Persistence of projects, grants and project membership of resources.
///
/// Every method is one unit of work: it either completes or changes nothing.
#[async_trait]
pub trait ProjectStore: Send + Sync + std::fmt::Debug {
    /// Stores a new project.
    ///
    /// # Errors
    /// MUST return [`ProjectWriteError::SlugTaken`] when any project of any account has the
    /// slug, [`ProjectWriteError::UnknownClient`] when `oauth_client_id` names no live OAuth
    /// client (read in the same unit of work as the write),
    /// [`ProjectWriteError::ClientAlreadyAttached`] when another project **of the same
    /// account** has the same `oauth_client_id`, and [`ProjectWriteError::Infra`] on storage
    /// failure.
    async fn insert_project(&self, project: &Project) -> Result<(), ProjectWriteError>;

    /// Replaces the stored fields of an existing project (matched by id).
    ///
    /// # Errors
    /// As [`ProjectStore::insert_project`], ignoring the project itself for uniqueness.
    async fn update_project(&self, project: &Project) -> Result<(), ProjectWriteError>;

    /// # Errors
    /// [`InfraError`] on storage failure; an unknown id is `Ok(None)`.
    async fn project_by_id(&self, id: ProjectId) -> Result<Option<Project>, InfraError>;

    /// # Errors
    /// [`InfraError`] on storage failure; an unknown slug is `Ok(None)`.
    async fn project_by_slug(&self, slug: &ProjectSlug) -> Result<Option<Project>, InfraError>;

    /// The account's projects, oldest first.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn projects_of_account(&self, account: AccountId) -> Result<Vec<Project>, InfraError>;

    /// At most `limit` of the account's projects, oldest first (then by id), strictly after
    /// `after` in that order: a page of the list, read by keyset.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn projects_after(
        &self,
        account: AccountId,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<Project>, InfraError>;

    /// The account's default project.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; an unknown account is `Ok(None)`.
    async fn default_project_of(&self, account: AccountId)
    -> Result<Option<ProjectId>, InfraError>;

    /// What the project holds.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn resources(&self, project: ProjectId) -> Result<Resources, InfraError>;

    /// Up to `limit` of the project's resources of one kind (those [`Self::resources`]
    /// lists), oldest first with ties broken by id, strictly after `after` in that order: a
    /// page of that kind, read by keyset. A kind the store does not hold yet is empty.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn resources_after(
        &self,
        project: ProjectId,
        kind: ResourceType,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<ResourceEntry>, InfraError>;

    /// Deletes a project in one transaction: when `move_to` is given, every resource it
    /// holds moves there first; grants on it are dropped; if it was the account's default
    /// project, the oldest remaining project becomes the default.
    ///
    /// # Errors
    /// MUST return [`DeleteProjectStoreError::NotEmpty`] (and change nothing) when
    /// `move_to` is `None` and the project holds any resource at the time of deletion;
    /// [`DeleteProjectStoreError::Infra`] on storage failure, with nothing changed.
    async fn delete_project(
        &self,
        project: &Project,
        move_to: Option<ProjectId>,
    ) -> Result<(), DeleteProjectStoreError>;

    /// Moves one resource of `account` into project `dest` (a project of that account).
    ///
    /// # Errors
    /// MUST return [`AssignStoreError::NotFound`] when no resource of that type and id
    /// belongs to the account, [`AssignStoreError::MasterKey`] for a master key, and
    /// [`AssignStoreError::Infra`] on storage failure.
    async fn assign_resource(
        &self,
        account: AccountId,
        resource_type: ResourceType,
        resource_id: Uuid,
        dest: ProjectId,
        now: OffsetDateTime,
    ) -> Result<(), AssignStoreError>;

    /// The account owning key `key`, if the key exists (revoked or not).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn key_account(&self, key: KeyId) -> Result<Option<AccountId>, InfraError>;

    /// The grant level of `key` on `project`, if any.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn grant_level(
        &self,
        key: KeyId,
        project: ProjectId,
    ) -> Result<Option<GrantLevel>, InfraError>;

    /// Creates the grant, or changes the level of the existing one for the same key and
    /// project (keeping its `created_at`). Returns the stored grant.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn put_grant(&self, grant: &Grant) -> Result<Grant, InfraError>;

    /// Removes the grant; `Ok(false)` when there was none.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn delete_grant(&self, key: KeyId, project: ProjectId) -> Result<bool, InfraError>;
}
