//! `quire-projects`: projects, grants, resources and the project addressing rules.
//!
//! Pure domain: it depends on `quire-kernel` and small pure crates only. It defines the
//! [`ports::ProjectStore`] port that the store adapter implements; every use case here takes
//! an authenticated [`quire_kernel::Principal`] and returns its own error enum.

pub mod addressing;
mod errors;
mod fields;
pub mod model;
pub mod ports;
pub mod service;

pub use addressing::{
    AddressError, ProjectAccess, address_project, authorize_loaded, authorize_project,
    decide_access, quota_account,
};
pub use model::{
    Grant, GrantLevel, Project, ProjectStatus, ResourceEntry, ResourceKey, ResourceType, Resources,
};
pub use ports::{AssignStoreError, DeleteProjectStoreError, ProjectStore, ProjectWriteError};
pub use service::{
    AssignError, DeleteProjectError, GetProjectError, GrantError, ListProjectsError,
    MAX_CLIENT_ID_LEN, MAX_NAME_CHARS, MAX_TAG_CHARS, NewProject, PROJECTS_LIST, ProjectPatch,
    ProjectService, RESOURCES_LIST, WriteProjectError,
};
