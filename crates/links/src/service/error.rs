//! What the URL-link use cases refuse.

use quire_kernel::InfraError;
use quire_projects::AddressError;

use crate::policy_input::PolicyError;
use crate::ports::LinkWriteError;
use crate::rules::{AllowError, Invalid};
use crate::target_url::UrlRefusal;

/// Errors of the link use cases; each use case documents which it returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("this credential cannot reach that project or link")]
    InsufficientScope,
    /// No URL link of the caller has that id (a page's link is reached through its page).
    #[error("link not found")]
    NotFound,
    /// A field failed validation; the message names it.
    #[error("{0}")]
    Invalid(String),
    /// `url` or `expiredUrl` broke one of the URL rules.
    #[error("{field} {refusal}")]
    Url {
        field: &'static str,
        refusal: UrlRefusal,
    },
    #[error("access is password, so a password is required")]
    PasswordRequired,
    #[error("that alias is already in use")]
    AliasConflict,
    #[error("no free public id was found; retry the request")]
    PublicIdExhausted,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

impl From<AddressError> for LinkError {
    fn from(e: AddressError) -> Self {
        match e {
            AddressError::InsufficientScope => LinkError::InsufficientScope,
            AddressError::Infra(e) => LinkError::Infra(e),
        }
    }
}

impl From<Invalid> for LinkError {
    fn from(e: Invalid) -> Self {
        LinkError::Invalid(e.0)
    }
}

impl From<AllowError> for LinkError {
    fn from(e: AllowError) -> Self {
        match e {
            AllowError::Invalid(i) => LinkError::Invalid(i.0),
            AllowError::Infra(e) => LinkError::Infra(e),
        }
    }
}

impl From<PolicyError> for LinkError {
    fn from(e: PolicyError) -> Self {
        match e {
            PolicyError::Invalid(i) => LinkError::Invalid(i.0),
            PolicyError::PasswordRequired => LinkError::PasswordRequired,
            PolicyError::Infra(e) => LinkError::Infra(e),
        }
    }
}

impl From<LinkWriteError> for LinkError {
    fn from(e: LinkWriteError) -> Self {
        match e {
            LinkWriteError::CodeTaken => LinkError::AliasConflict,
            LinkWriteError::Infra(e) => LinkError::Infra(e),
        }
    }
}
