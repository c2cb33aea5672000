//! What the object use cases refuse, and how adapter errors become those refusals.

use quire_kernel::InfraError;
use quire_links::rules::{AllowError, Invalid};
use quire_links::{LinkWriteError, PolicyError};
use quire_projects::AddressError;

/// Errors of the object use cases; each use case documents which it returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectError {
    #[error("this credential cannot reach that project or object")]
    InsufficientScope,
    #[error("object not found")]
    NotFound,
    /// A field failed validation; the message names it.
    #[error("{0}")]
    Invalid(String),
    #[error("access is password, so a password is required")]
    PasswordRequired,
    /// Create with an explicit slug the owner already uses for a page or an object.
    #[error("you already have a page or an object with that slug")]
    SlugConflict,
    /// Patch to a slug the owner already uses.
    #[error("you already have a page or an object with that slug")]
    SlugTaken,
    #[error("that alias is already in use")]
    AliasConflict,
    /// The bytes passed the cap; the message names it.
    #[error("an object may be at most {limit} bytes")]
    TooLarge { limit: u64 },
    /// The account's objects would hold more bytes than its quota; the figures are the
    /// bytes its other objects hold and the quota.
    #[error(
        "this account's objects may hold {limit} bytes in all and hold {used}: this upload would pass that; delete objects first"
    )]
    StorageQuotaExceeded { used: u64, limit: u64 },
    #[error("no free public id was found; retry the request")]
    PublicIdExhausted,
    #[error("the object owner has no handle")]
    ProfileHandleMissing,
    #[error("the object was deleted but its stored bytes were not; they will be removed later")]
    StorageCleanupFailed,
    #[error("the object was deleted but its short link was not")]
    LinkCleanupFailed,
    /// An upload URL that matches no waiting upload (never issued, or cleared once it
    /// expired or its upload failed). Its message never repeats the URL.
    #[error(
        "no upload URL matches this one: it was never issued, or it expired or failed and was cleared; ask for a new one"
    )]
    UploadUrlUnknown,
    #[error("this upload URL was already used; ask for a new one")]
    UploadUrlUsed,
    #[error("this upload URL has expired; ask for a new one")]
    UploadUrlExpired,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

impl From<AddressError> for ObjectError {
    fn from(e: AddressError) -> Self {
        match e {
            AddressError::InsufficientScope => ObjectError::InsufficientScope,
            AddressError::Infra(e) => ObjectError::Infra(e),
        }
    }
}

impl From<Invalid> for ObjectError {
    fn from(e: Invalid) -> Self {
        ObjectError::Invalid(e.0)
    }
}

impl From<AllowError> for ObjectError {
    fn from(e: AllowError) -> Self {
        match e {
            AllowError::Invalid(i) => ObjectError::Invalid(i.0),
            AllowError::Infra(e) => ObjectError::Infra(e),
        }
    }
}

impl From<PolicyError> for ObjectError {
    fn from(e: PolicyError) -> Self {
        match e {
            PolicyError::Invalid(i) => ObjectError::Invalid(i.0),
            PolicyError::PasswordRequired => ObjectError::PasswordRequired,
            PolicyError::Infra(e) => ObjectError::Infra(e),
        }
    }
}

impl From<LinkWriteError> for ObjectError {
    fn from(e: LinkWriteError) -> Self {
        match e {
            LinkWriteError::CodeTaken => ObjectError::AliasConflict,
            LinkWriteError::Infra(e) => ObjectError::Infra(e),
        }
    }
}
