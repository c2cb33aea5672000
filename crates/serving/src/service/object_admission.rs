//! Admission to a guarded object, with the pages' own forms: the password form's post and
//! the sign-in pass land on the object's owner origin and set cookies for the object alone.

use quire_kernel::{InfraError, LinkId};
use quire_links::{Access, Link};
use time::OffsetDateTime;

use super::objects::ObjectSite;
use super::{ACCESS_COOKIE, ServingService, UNLOCK_COOKIE};
use crate::answer::{Admitted, PageCard, PasswordPrompt, Unlock, UnlockError};
use crate::policy::{expired, fingerprint, unix_after};
use crate::token::{Claims, TokenKind};

impl ServingService {
    /// The object `link` leads to, when it is an object's and neither is archived.
    pub(super) async fn object_of(&self, link: Link) -> Result<Option<ObjectSite>, InfraError> {
        let ports = &self.inner.ports;
        let Some(id) = link.object().filter(|_| link.archived_at.is_none()) else {
            return Ok(None);
        };
        let Some(object) = ports
            .objects
            .object(id)
            .await?
            .filter(|o| o.archived_at.is_none())
        else {
            return Ok(None);
        };
        let Some((handle, _)) = ports.accounts.handle_and_email(object.account_id).await? else {
            return Ok(None);
        };
        Ok(Some(ObjectSite {
            handle,
            object,
            link,
        }))
    }

    /// [`ServingService::unlock`] of an object: the same budgets of wrong passwords, its
    /// unlock cookie, and back to the object.
    pub(super) async fn unlock_object(
        &self,
        attempt: &Unlock<'_>,
    ) -> Result<Admitted, UnlockError> {
        let Some(site) = self.object_site(attempt.handle, attempt.slug).await? else {
            return Err(UnlockError::NotFound);
        };
        let link = &site.link;
        let now = self.inner.ports.clock.now();
        if expired(link, now)
            || link
                .policy
                .max_views
                .is_some_and(|max| link.view_count >= max)
        {
            return Err(UnlockError::Gone);
        }
        let location = self.object_path(&site);
        let Some(fingerprint) =
            fingerprint(link).filter(|_| link.policy.access == Access::Password)
        else {
            return Ok(Admitted {
                cookie: None,
                location,
            });
        };
        let subject = site.object.id.0;
        let stored = link.password_hash.clone().unwrap_or_default();
        let right = self
            .check_password(subject, stored, attempt.password, attempt.client, now)
            .await?;
        if !right {
            return Err(UnlockError::Wrong(PasswordPrompt {
                title: site.object.title.clone(),
                handle: site.handle.as_str().to_owned(),
                slug: site.object.slug.clone(),
                next: String::new(),
                wrong: true,
                code: None,
            }));
        }
        let ttl = self.inner.config.unlock_cookie_ttl;
        let cookie = self.object_cookie(
            UNLOCK_COOKIE,
            &site,
            &Claims {
                kind: TokenKind::Unlock,
                page: subject,
                expires: unix_after(now, ttl),
                account: None,
                fingerprint: Some(fingerprint),
                session: None,
                nonce: None,
            },
            ttl,
        );
        Ok(Admitted {
            cookie: Some(cookie),
            location,
        })
    }

    /// The card the dashboard's hand-off shows for an object's link.
    pub(super) async fn object_card(&self, link: Link) -> Result<Option<PageCard>, InfraError> {
        Ok(self.object_of(link).await?.map(|site| PageCard {
            url: self
                .inner
                .config
                .origins
                .object_url(site.handle.as_str(), &site.object.slug),
            title: site.object.title,
        }))
    }

    /// The access cookie of an object whose pass was checked and spent.
    pub(super) fn admit_to_object(
        &self,
        site: &ObjectSite,
        claims: Claims,
        now: OffsetDateTime,
    ) -> Admitted {
        let ttl = self.inner.config.access_cookie_ttl;
        let cookie = self.object_cookie(
            ACCESS_COOKIE,
            site,
            &Claims {
                kind: TokenKind::Access,
                expires: unix_after(now, ttl),
                ..claims
            },
            ttl,
        );
        Admitted {
            cookie: Some(cookie),
            location: self.object_path(site),
        }
    }

    /// The object a pass names, as the pass may land on it: on its owner's origin only.
    pub(super) async fn object_for_pass(
        &self,
        owner: Option<&str>,
        subject: uuid::Uuid,
    ) -> Result<Option<ObjectSite>, InfraError> {
        let Some(link) = self.inner.ports.links.link(LinkId(subject)).await? else {
            return Ok(None);
        };
        let Some(site) = self.object_of(link).await? else {
            return Ok(None);
        };
        let elsewhere =
            self.inner.config.origins.per_owner() && owner != Some(site.handle.as_str());
        Ok((!elsewhere).then_some(site))
    }
}
