//! What the page use cases refuse, and how adapter errors become those refusals.

use quire_kernel::InfraError;
use quire_links::{LinkWriteError, PolicyError};
use quire_projects::AddressError;

use crate::validate::{self, FilesError, LimitKind};

/// Errors shared by the page use cases; each use case documents which it returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("this credential cannot reach that project or page")]
    InsufficientScope,
    #[error("page not found")]
    NotFound,
    /// A field failed validation; the message names it.
    #[error("{0}")]
    Invalid(String),
    #[error("access is password, so a password is required")]
    PasswordRequired,
    /// Publish with an explicit slug the owner already uses.
    #[error("you already have a page with that slug")]
    SlugConflict,
    /// Patch to a slug the owner already uses.
    #[error("you already have a page with that slug")]
    SlugTaken,
    #[error("that alias is already in use")]
    AliasConflict,
    #[error("{message}")]
    TooLarge { limit: LimitKind, message: String },
    #[error("no free public id was found; retry the request")]
    PublicIdExhausted,
    #[error("the page owner has no handle")]
    ProfileHandleMissing,
    #[error(
        "the page was deleted but some of its stored files were not; they will be removed later"
    )]
    StorageCleanupFailed,
    #[error("the page was deleted but its short link was not")]
    LinkCleanupFailed,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

impl From<AddressError> for PageError {
    fn from(e: AddressError) -> Self {
        match e {
            AddressError::InsufficientScope => PageError::InsufficientScope,
            AddressError::Infra(e) => PageError::Infra(e),
        }
    }
}

impl From<FilesError> for PageError {
    fn from(e: FilesError) -> Self {
        match e {
            FilesError::Invalid(i) => PageError::Invalid(i.0),
            FilesError::TooLarge { limit, message } => PageError::TooLarge { limit, message },
        }
    }
}

impl From<validate::Invalid> for PageError {
    fn from(e: validate::Invalid) -> Self {
        PageError::Invalid(e.0)
    }
}

impl From<PolicyError> for PageError {
    fn from(e: PolicyError) -> Self {
        match e {
            PolicyError::Invalid(i) => PageError::Invalid(i.0),
            PolicyError::PasswordRequired => PageError::PasswordRequired,
            PolicyError::Infra(e) => PageError::Infra(e),
        }
    }
}

impl From<LinkWriteError> for PageError {
    fn from(e: LinkWriteError) -> Self {
        match e {
            LinkWriteError::CodeTaken => PageError::AliasConflict,
            LinkWriteError::Infra(e) => PageError::Infra(e),
        }
    }
}
