//! The two operations every service of a thing behind a link (pages, objects, URL links)
//! performs on its link's policy: build one from the raw fields of a create
//! ([`PolicyInput::validate`]), and apply the fields of an update to a link
//! ([`PolicyPatch::apply`]). The fields are checked by the [`crate::rules`]; a refusal is a
//! [`PolicyError`], which each service maps into its own use case's error.
//!
//! The order of the checks is part of what a client sees: a request with several bad fields
//! is told of the first one only. So a service's own checks that have always sat among the
//! policy's (a URL link's title, an object's alias being free) are handed in as a future that
//! runs right after the alias (it is never polled when an earlier field is refused), and a
//! create names where its allow list is checked ([`AllowOrder`]).

mod patch;
#[cfg(test)]
mod tests;

use std::future::Future;

use quire_kernel::InfraError;
use time::OffsetDateTime;

use crate::policy::{Access, AllowEntry, Policy};
use crate::ports::AccountDirectory;
use crate::rules::{self, AllowError, Invalid};

pub use patch::PolicyPatch;

/// Why a policy's fields were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// A field broke its rule; the message names it.
    #[error("{0}")]
    Invalid(Invalid),
    /// `password` access, and no password sent or kept.
    #[error("access is password, so a password is required")]
    PasswordRequired,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

impl From<Invalid> for PolicyError {
    fn from(e: Invalid) -> Self {
        PolicyError::Invalid(e)
    }
}

impl From<AllowError> for PolicyError {
    fn from(e: AllowError) -> Self {
        match e {
            AllowError::Invalid(i) => PolicyError::Invalid(i),
            AllowError::Infra(e) => PolicyError::Infra(e),
        }
    }
}

/// Where a create checks its allow list among the policy's fields. Both orders are kept
/// because each service has always answered in its own, and the first refusal of a request
/// with several bad fields depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllowOrder {
    /// access, expiresAt, maxViews, allow, alias, the service's own checks, password (URL
    /// links and objects).
    BeforeAlias,
    /// access, expiresAt, maxViews, alias, the service's own checks, password, allow (pages).
    AfterPassword,
}

/// The policy fields of a create, as JSON typed them.
#[derive(Debug, Clone, Default)]
pub struct PolicyInput {
    /// `None` is the service's default access.
    pub access: Option<String>,
    pub expires_at: Option<String>,
    pub max_views: Option<i128>,
    pub allow: Vec<String>,
    pub alias: Option<String>,
    /// An empty password is none.
    pub password: Option<String>,
}

/// A create's policy fields, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidPolicy {
    pub policy: Policy,
    pub alias: Option<String>,
    /// The new password, to be hashed into the link's `password_hash`; `None` for none.
    pub password: Option<String>,
}

/// The allow list of a create, before or after [`rules::resolve_allow`].
#[derive(Debug)]
enum Allow {
    Unchecked(Vec<String>),
    Resolved(Vec<AllowEntry>),
}

/// A create's fields checked up to its alias; its password (and, for pages, its allow list)
/// are checked after the service's own checks.
#[derive(Debug)]
struct CheckedToAlias {
    access: Access,
    expires_at: Option<OffsetDateTime>,
    max_views: Option<u64>,
    allow: Allow,
    alias: Option<String>,
    password: Option<String>,
}

impl PolicyInput {
    /// Checks the fields of a new link's policy, in the order `order` names; `default_access`
    /// stands for an access not sent.
    ///
    /// # Errors
    /// [`PolicyError::Invalid`] naming the first field refused, or
    /// [`PolicyError::PasswordRequired`], in that order; [`PolicyError::Infra`] when the
    /// allow list's handles cannot be looked up.
    pub async fn validate(
        self,
        now: OffsetDateTime,
        accounts: &dyn AccountDirectory,
        default_access: Access,
        order: AllowOrder,
    ) -> Result<ValidPolicy, PolicyError> {
        let (valid, ()) = self
            .validate_with(
                now,
                accounts,
                default_access,
                order,
                std::future::ready(Ok::<(), PolicyError>(())),
            )
            .await?;
        Ok(valid)
    }

    /// [`PolicyInput::validate`], with the service's own checks `own` run right after the
    /// alias (and not at all when a field before it is refused); answers what `own` made.
    ///
    /// # Errors
    /// Those of [`PolicyInput::validate`], and `own`'s, each at its place.
    pub async fn validate_with<T, E: From<PolicyError>>(
        self,
        now: OffsetDateTime,
        accounts: &dyn AccountDirectory,
        default_access: Access,
        order: AllowOrder,
        own: impl Future<Output = Result<T, E>>,
    ) -> Result<(ValidPolicy, T), E> {
        let checked = self
            .check_to_alias(now, accounts, default_access, order)
            .await?;
        let own = own.await?;
        Ok((checked.finish(accounts).await?, own))
    }

    async fn check_to_alias(
        self,
        now: OffsetDateTime,
        accounts: &dyn AccountDirectory,
        default_access: Access,
        order: AllowOrder,
    ) -> Result<CheckedToAlias, PolicyError> {
        let access = self
            .access
            .as_deref()
            .map_or(Ok(default_access), rules::access)?;
        let expires_at = self
            .expires_at
            .as_deref()
            .map(|t| rules::expires_at(t, now))
            .transpose()?;
        let max_views = self.max_views.map(rules::max_views).transpose()?;
        let allow = match order {
            AllowOrder::BeforeAlias => {
                Allow::Resolved(rules::resolve_allow(accounts, &self.allow).await?)
            }
            AllowOrder::AfterPassword => Allow::Unchecked(self.allow),
        };
        let alias = self.alias.as_deref().map(rules::alias).transpose()?;
        Ok(CheckedToAlias {
            access,
            expires_at,
            max_views,
            allow,
            alias,
            password: self.password.filter(|p| !p.is_empty()),
        })
    }
}

impl CheckedToAlias {
    async fn finish(self, accounts: &dyn AccountDirectory) -> Result<ValidPolicy, PolicyError> {
        if self.access == Access::Password && self.password.is_none() {
            return Err(PolicyError::PasswordRequired);
        }
        if let Some(p) = &self.password {
            rules::page_password(p)?;
        }
        let allow = match self.allow {
            Allow::Resolved(allow) => allow,
            Allow::Unchecked(raw) => rules::resolve_allow(accounts, &raw).await?,
        };
        Ok(ValidPolicy {
            policy: Policy {
                access: self.access,
                expires_at: self.expires_at,
                max_views: self.max_views,
                allow,
            },
            alias: self.alias,
            password: self.password,
        })
    }
}
