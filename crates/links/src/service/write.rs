//! Creating, changing and deleting URL links.

use quire_kernel::{LinkId, Principal};
use quire_projects::{ProjectAccess, address_project};
use time::OffsetDateTime;

use super::{LinkError, LinkPatch, LinkService, LinkView, NewLink};
use crate::model::{Link, RedirectStatus, Target};
use crate::policy::{Access, Policy};
use crate::ports::LinkWriteError;
use crate::rules::{self, PasswordChange};

/// Longest title of a URL link, in characters.
pub const MAX_TITLE_CHARS: usize = 200;

fn title(raw: &str) -> Result<String, LinkError> {
    if raw.trim().is_empty() || raw.chars().count() > MAX_TITLE_CHARS {
        return Err(LinkError::Invalid(format!(
            "title must be 1-{MAX_TITLE_CHARS} characters"
        )));
    }
    if quire_kernel::text::has_control(raw) {
        return Err(LinkError::Invalid(
            "title must not contain control characters".into(),
        ));
    }
    Ok(raw.to_owned())
}

fn access(raw: &str) -> Result<Access, LinkError> {
    Access::parse(raw).ok_or_else(|| {
        LinkError::Invalid("access must be private, password, allow_list or public".into())
    })
}

fn redirect(raw: i128) -> Result<RedirectStatus, LinkError> {
    RedirectStatus::from_code(raw)
        .ok_or_else(|| LinkError::Invalid("redirectStatus must be 301, 302, 307 or 308".into()))
}

fn status_archived(raw: &str) -> Result<bool, LinkError> {
    match raw {
        "active" => Ok(false),
        "archived" => Ok(true),
        _ => Err(LinkError::Invalid(
            "status must be active or archived".into(),
        )),
    }
}

impl LinkService {
    fn url(&self, field: &'static str, raw: &str) -> Result<String, LinkError> {
        self.config
            .urls
            .check(raw)
            .map_err(|refusal| LinkError::Url { field, refusal })
    }

    /// Creates a URL link in the named project (default: the key's home project).
    ///
    /// # Errors
    /// `InsufficientScope`, `Invalid`, `Url`, `PasswordRequired`, `AliasConflict`,
    /// `PublicIdExhausted`, `Infra`; nothing is stored on error.
    pub async fn create(&self, principal: &Principal, req: NewLink) -> Result<LinkView, LinkError> {
        let project = address_project(
            self.ports.projects.as_ref(),
            principal,
            req.project.as_deref(),
            ProjectAccess::Write,
        )
        .await?;
        let now = self.ports.clock.now();
        let url = self.url("url", &req.url)?;
        let expired_url = req
            .expired_url
            .as_deref()
            .map(|u| self.url("expiredUrl", u))
            .transpose()?;
        // A URL link leads to something public already: by default anyone may follow it.
        let access = req.access.as_deref().map_or(Ok(Access::Public), access)?;
        let policy = Policy {
            access,
            expires_at: req
                .expires_at
                .as_deref()
                .map(|t| rules::expires_at(t, now))
                .transpose()?,
            max_views: req.max_views.map(rules::max_views).transpose()?,
            allow: rules::resolve_allow(self.ports.accounts.as_ref(), &req.allow).await?,
        };
        let alias = req.alias.as_deref().map(rules::alias).transpose()?;
        let title = req.title.as_deref().map(title).transpose()?;
        let redirect = req
            .redirect_status
            .map_or(Ok(RedirectStatus::Found), redirect)?;
        let password = req.password.filter(|p| !p.is_empty());
        if access == Access::Password && password.is_none() {
            return Err(LinkError::PasswordRequired);
        }
        if let Some(p) = &password {
            rules::page_password(p)?;
        }
        let password_hash = match password {
            Some(p) => Some(self.hash_password(p).await?),
            None => None,
        };
        let mut link = Link {
            id: LinkId::new(),
            target: Target::Url(url),
            account_id: project.account_id,
            project_id: project.id,
            public_id: String::new(),
            alias,
            title,
            policy,
            password_hash,
            view_count: 0,
            expired_url,
            redirect,
            archived_at: None,
            last_viewed_at: None,
            created_at: now,
            updated_at: now,
        };
        self.insert_with_fresh_id(&mut link).await?;
        self.ports.changes.link_changed(link.id);
        Ok(self.view(link, project.slug))
    }

    /// Tries public ids until one is free; a taken alias is `AliasConflict` at once.
    async fn insert_with_fresh_id(&self, link: &mut Link) -> Result<(), LinkError> {
        for _ in 0..self.config.public_id_attempts.max(1) {
            link.public_id = self.ports.ids.next_id();
            match self.ports.links.insert_link(link).await {
                Ok(()) => return Ok(()),
                Err(LinkWriteError::CodeTaken) => {
                    if let Some(alias) = &link.alias
                        && self.ports.links.link_by_code(alias).await?.is_some()
                    {
                        return Err(LinkError::AliasConflict);
                    }
                }
                Err(LinkWriteError::Infra(e)) => return Err(e.into()),
            }
        }
        Err(LinkError::PublicIdExhausted)
    }

    /// Changes a URL link; a new `url` keeps its codes and counts.
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Invalid`, `Url`, `PasswordRequired`,
    /// `AliasConflict`, `Infra`; nothing changes on error.
    pub async fn update(
        &self,
        principal: &Principal,
        id: LinkId,
        req: LinkPatch,
    ) -> Result<LinkView, LinkError> {
        let (mut link, project) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let now = self.ports.clock.now();
        if let Some(u) = &req.url {
            link.target = Target::Url(self.url("url", u)?);
        }
        if let Some(u) = &req.expired_url {
            link.expired_url = u
                .as_deref()
                .map(|u| self.url("expiredUrl", u))
                .transpose()?;
        }
        if let Some(t) = &req.title {
            link.title = t.as_deref().map(title).transpose()?;
        }
        if let Some(a) = &req.access {
            link.policy.access = access(a)?;
        }
        if let Some(e) = &req.expires_at {
            link.policy.expires_at = e
                .as_deref()
                .map(|t| rules::expires_at(t, now))
                .transpose()?;
        }
        if let Some(m) = req.max_views {
            link.policy.max_views = m.map(rules::max_views).transpose()?;
        }
        if let Some(alias) = &req.alias {
            link.alias = alias.as_deref().map(rules::alias).transpose()?;
        }
        if let Some(r) = req.redirect_status {
            link.redirect = r.map_or(Ok(RedirectStatus::Found), redirect)?;
        }
        if let Some(s) = &req.status {
            let archived = status_archived(s)?;
            if archived != link.archived_at.is_some() {
                link.archived_at = archived.then_some(now);
            }
        }
        if let Some(allow) = &req.allow {
            link.policy.allow = rules::resolve_allow(self.ports.accounts.as_ref(), allow).await?;
        }
        let password = PasswordChange::of_patch(req.password)?;
        if link.policy.access == Access::Password && !password.leaves_password(link.has_password())
        {
            return Err(LinkError::PasswordRequired);
        }
        match password {
            PasswordChange::Keep => {}
            PasswordChange::Clear => link.password_hash = None,
            PasswordChange::Set(p) => link.password_hash = Some(self.hash_password(p).await?),
        }
        link.updated_at = now;
        self.ports.links.update_link(&link).await?;
        self.ports.changes.link_changed(link.id);
        Ok(self.view(link, project))
    }

    /// Deletes a URL link with its codes, allow list and counts, in one transaction: the
    /// spec's `storage_cleanup_failed` and `link_cleanup_failed` cannot happen to it.
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Infra`.
    pub async fn delete(&self, principal: &Principal, id: LinkId) -> Result<(), LinkError> {
        let (link, _) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let deleted = self.ports.links.delete_link(link.id).await?;
        self.ports.changes.link_changed(link.id);
        if !deleted {
            return Err(LinkError::NotFound);
        }
        Ok(())
    }

    /// The time by the clock links expire by.
    #[must_use]
    pub fn now(&self) -> OffsetDateTime {
        self.ports.clock.now()
    }
}
