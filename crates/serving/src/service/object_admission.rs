//! Admission to a guarded object, with the pages' own forms: the password form's post and
//! the sign-in pass land on the object's owner origin and set cookies for the object alone.

use quire_kernel::{InfraError, LinkId};
use quire_links::Link;

use super::ServingService;
use super::guarded::Guarded;
use super::objects::ObjectSite;
use crate::answer::{Admitted, PageCard, Unlock, UnlockError};
use crate::policy::expired;

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
        self.unlock_to(
            &Guarded::Object(&site),
            attempt.password,
            attempt.client,
            now,
        )
        .await
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
