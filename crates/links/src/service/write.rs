//! Creating, changing and deleting URL links.

use quire_kernel::{LinkId, Principal};
use quire_projects::{ProjectAccess, address_project};
use time::OffsetDateTime;

use super::{LinkError, LinkPatch, LinkService, LinkView, NewLink};
use crate::model::{Link, RedirectStatus, Target};
use crate::policy::Access;
use crate::policy_input::AllowOrder;
use crate::ports::LinkWriteError;

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
        // The link's own fields, checked after the alias as they always were.
        let (sent_title, sent_redirect) = (req.title, req.redirect_status);
        let own = async move {
            let title = sent_title.as_deref().map(title).transpose()?;
            let redirect = sent_redirect.map_or(Ok(RedirectStatus::Found), redirect)?;
            Ok::<_, LinkError>((title, redirect))
        };
        // A URL link leads to something public already: by default anyone may follow it.
        let (valid, (title, redirect)) = req
            .policy
            .validate_with(
                now,
                self.ports.accounts.as_ref(),
                Access::Public,
                AllowOrder::BeforeAlias,
                own,
            )
            .await?;
        let password_hash = match valid.password {
            Some(p) => Some(self.hash_password(p).await?),
            None => None,
        };
        let mut link = Link {
            id: LinkId::new(),
            target: Target::Url(url),
            account_id: project.account_id,
            project_id: project.id,
            public_id: String::new(),
            alias: valid.alias,
            title,
            policy: valid.policy,
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
        // Checked after the alias and before the allow list, as they always were.
        let (sent_redirect, sent_status) = (req.redirect_status, req.status);
        let own = async move {
            let redirect = sent_redirect
                .map(|r| r.map_or(Ok(RedirectStatus::Found), redirect))
                .transpose()?;
            let archived = sent_status.as_deref().map(status_archived).transpose()?;
            Ok::<_, LinkError>((redirect, archived))
        };
        let (password, (redirect, archived)) = req
            .policy
            .apply_with(&mut link, now, self.ports.accounts.as_ref(), own)
            .await?;
        if let Some(r) = redirect {
            link.redirect = r;
        }
        if let Some(archived) = archived
            && archived != link.archived_at.is_some()
        {
            link.archived_at = archived.then_some(now);
        }
        if let Some(p) = password {
            link.password_hash = Some(self.hash_password(p).await?);
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
