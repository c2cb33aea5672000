//! The update half: [`PolicyPatch::apply`] checks an update's policy fields and, only when
//! every one passes, writes them onto the link.

use std::future::Future;

use time::OffsetDateTime;

use super::PolicyError;
use crate::model::Link;
use crate::policy::Access;
use crate::ports::AccountDirectory;
use crate::rules::{self, PasswordChange};

/// The policy fields of an update: `None` keeps a field; `Some(None)` clears a nullable one.
#[derive(Debug, Clone, Default)]
pub struct PolicyPatch {
    pub access: Option<String>,
    pub expires_at: Option<Option<String>>,
    pub max_views: Option<Option<i128>>,
    pub alias: Option<Option<String>>,
    pub allow: Option<Vec<String>>,
    /// `null` or `""` clears the password; a new one is checked by [`rules::page_password`].
    pub password: Option<Option<String>>,
}

/// An update's fields checked up to its alias.
#[derive(Debug)]
struct PatchToAlias {
    access: Option<Access>,
    expires_at: Option<Option<OffsetDateTime>>,
    max_views: Option<Option<u64>>,
    alias: Option<Option<String>>,
    allow: Option<Vec<String>>,
    password: Option<Option<String>>,
}

impl PolicyPatch {
    /// Applies the patch to `link` (its policy, alias and password), or on a refusal nothing
    /// at all. The fields are checked in this order: access, expiresAt, maxViews, alias,
    /// allow, password, then that `password` access is left with a password. A cleared
    /// password is gone from `link`; a new one is answered, to be hashed into its
    /// `password_hash`.
    ///
    /// # Errors
    /// [`PolicyError::Invalid`] naming the first field refused, or
    /// [`PolicyError::PasswordRequired`], in that order; [`PolicyError::Infra`] when the
    /// allow list's handles cannot be looked up.
    pub async fn apply(
        self,
        link: &mut Link,
        now: OffsetDateTime,
        accounts: &dyn AccountDirectory,
    ) -> Result<Option<String>, PolicyError> {
        let (password, ()) = self
            .apply_with(
                link,
                now,
                accounts,
                std::future::ready(Ok::<(), PolicyError>(())),
            )
            .await?;
        Ok(password)
    }

    /// [`PolicyPatch::apply`], with the service's own checks `own` run right after the alias
    /// (and not at all when a field before it is refused); answers what `own` made. `link`
    /// is changed only when `own` succeeds too.
    ///
    /// # Errors
    /// Those of [`PolicyPatch::apply`], and `own`'s, each at its place.
    pub async fn apply_with<T, E: From<PolicyError>>(
        self,
        link: &mut Link,
        now: OffsetDateTime,
        accounts: &dyn AccountDirectory,
        own: impl Future<Output = Result<T, E>>,
    ) -> Result<(Option<String>, T), E> {
        let checked = self.check_to_alias(now)?;
        let own = own.await?;
        Ok((checked.finish(link, accounts).await?, own))
    }

    fn check_to_alias(self, now: OffsetDateTime) -> Result<PatchToAlias, PolicyError> {
        Ok(PatchToAlias {
            access: self.access.as_deref().map(rules::access).transpose()?,
            expires_at: self
                .expires_at
                .map(|e| e.as_deref().map(|t| rules::expires_at(t, now)).transpose())
                .transpose()?,
            max_views: self
                .max_views
                .map(|m| m.map(rules::max_views).transpose())
                .transpose()?,
            alias: self
                .alias
                .map(|a| a.as_deref().map(rules::alias).transpose())
                .transpose()?,
            allow: self.allow,
            password: self.password,
        })
    }
}

impl PatchToAlias {
    async fn finish(
        self,
        link: &mut Link,
        accounts: &dyn AccountDirectory,
    ) -> Result<Option<String>, PolicyError> {
        let allow = match &self.allow {
            Some(raw) => Some(rules::resolve_allow(accounts, raw).await?),
            None => None,
        };
        let password = PasswordChange::of_patch(self.password)?;
        let access = self.access.unwrap_or(link.policy.access);
        if access == Access::Password && !password.leaves_password(link.has_password()) {
            return Err(PolicyError::PasswordRequired);
        }
        // Every field passed: only now is the link touched.
        link.policy.access = access;
        if let Some(e) = self.expires_at {
            link.policy.expires_at = e;
        }
        if let Some(m) = self.max_views {
            link.policy.max_views = m;
        }
        if let Some(a) = self.alias {
            link.alias = a;
        }
        if let Some(a) = allow {
            link.policy.allow = a;
        }
        Ok(match password {
            PasswordChange::Keep => None,
            PasswordChange::Clear => {
                link.password_hash = None;
                None
            }
            PasswordChange::Set(p) => Some(p),
        })
    }
}

#[cfg(test)]
mod tests;
