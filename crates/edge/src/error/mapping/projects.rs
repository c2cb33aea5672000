//! Projects, their addresses and their grants.

use quire_kernel::ErrorCode;
use quire_projects::{
    AddressError, AssignError, DeleteProjectError, GetProjectError, GrantError, ListProjectsError,
    WriteProjectError,
};

use crate::error::{ApiError, worded};

impl From<AddressError> for ApiError {
    fn from(e: AddressError) -> Self {
        match e {
            AddressError::InsufficientScope => worded(ErrorCode::InsufficientScope, &e),
            AddressError::Infra(e) => e.into(),
        }
    }
}

impl From<ListProjectsError> for ApiError {
    fn from(e: ListProjectsError) -> Self {
        match e {
            ListProjectsError::InsufficientScope => worded(ErrorCode::InsufficientScope, &e),
            ListProjectsError::Infra(e) => e.into(),
        }
    }
}

impl From<GetProjectError> for ApiError {
    fn from(e: GetProjectError) -> Self {
        match e {
            GetProjectError::NotFound => worded(ErrorCode::NotFound, &e),
            GetProjectError::Infra(e) => e.into(),
        }
    }
}

impl From<WriteProjectError> for ApiError {
    fn from(e: WriteProjectError) -> Self {
        let code = match e {
            WriteProjectError::InsufficientScope => ErrorCode::InsufficientScope,
            WriteProjectError::NotFound => ErrorCode::NotFound,
            WriteProjectError::InvalidProject(_) => ErrorCode::InvalidProject,
            WriteProjectError::InvalidSlug(_) => ErrorCode::InvalidSlug,
            WriteProjectError::SlugTaken => ErrorCode::SlugTaken,
            WriteProjectError::ClientAlreadyAttached => ErrorCode::ClientAlreadyAttached,
            WriteProjectError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}

impl From<DeleteProjectError> for ApiError {
    fn from(e: DeleteProjectError) -> Self {
        let code = match e {
            DeleteProjectError::InsufficientScope => ErrorCode::InsufficientScope,
            DeleteProjectError::NotFound => ErrorCode::NotFound,
            DeleteProjectError::ConfirmMismatch | DeleteProjectError::InvalidMoveTo(_) => {
                ErrorCode::InvalidBody
            }
            DeleteProjectError::LastProject => ErrorCode::LastProject,
            DeleteProjectError::NotEmpty => ErrorCode::ProjectNotEmpty,
            DeleteProjectError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}

impl From<AssignError> for ApiError {
    fn from(e: AssignError) -> Self {
        let code = match e {
            AssignError::InsufficientScope => ErrorCode::InsufficientScope,
            AssignError::NotFound => ErrorCode::NotFound,
            AssignError::MasterKey => ErrorCode::InvalidBody,
            AssignError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}

impl From<GrantError> for ApiError {
    fn from(e: GrantError) -> Self {
        let code = match e {
            GrantError::InsufficientScope => ErrorCode::InsufficientScope,
            GrantError::NotFound => ErrorCode::NotFound,
            GrantError::Infra(e) => return e.into(),
        };
        worded(code, &e)
    }
}
