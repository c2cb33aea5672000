//! The refusals of the project use cases, one enum per use case; the HTTP layer maps them.

use quire_kernel::InfraError;

use crate::ports::ProjectWriteError;

/// Errors of create and update.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteProjectError {
    #[error("a master key is required")]
    InsufficientScope,
    #[error("project not found")]
    NotFound,
    #[error("{0}")]
    InvalidProject(String),
    #[error("{0}")]
    InvalidSlug(String),
    #[error("that slug is already taken")]
    SlugTaken,
    #[error("that OAuth client already has a home project in this account")]
    ClientAlreadyAttached,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

impl From<ProjectWriteError> for WriteProjectError {
    fn from(e: ProjectWriteError) -> Self {
        match e {
            ProjectWriteError::SlugTaken => Self::SlugTaken,
            ProjectWriteError::ClientAlreadyAttached => Self::ClientAlreadyAttached,
            ProjectWriteError::UnknownClient => {
                Self::InvalidProject("oauth_client_id names no registered OAuth client".into())
            }
            ProjectWriteError::Infra(e) => Self::Infra(e),
        }
    }
}

/// Errors of list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListProjectsError {
    #[error("listing projects needs a master key or a bearer token")]
    InsufficientScope,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Errors of get and resources.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GetProjectError {
    #[error("project not found")]
    NotFound,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Errors of delete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeleteProjectError {
    #[error("a master key is required")]
    InsufficientScope,
    #[error("project not found")]
    NotFound,
    #[error("confirm must equal the id of the project being deleted")]
    ConfirmMismatch,
    #[error("{0}")]
    InvalidMoveTo(String),
    #[error("the account's only project cannot be deleted")]
    LastProject,
    #[error("the project still holds resources; move them or pass move_to")]
    NotEmpty,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Errors of assign and unassign.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssignError {
    #[error("a master key is required")]
    InsufficientScope,
    #[error("resource or project not found")]
    NotFound,
    #[error("master keys always belong to the account's default project")]
    MasterKey,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Errors of grant create, update and delete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    #[error("grants need a master key; OAuth bearer tokens can never manage grants")]
    InsufficientScope,
    #[error("key, project or grant not found")]
    NotFound,
    #[error(transparent)]
    Infra(#[from] InfraError),
}
