//! The short link `/s/{code}`: what a code leads to, remembered for the policy TTL; a page's
//! link is a redirect to its page, decided as a visit of it would be (a URL link's visit is
//! in `url_link`).

use std::sync::Arc;

use quire_kernel::InfraError;
use quire_links::rules::is_code;
use quire_pages::PageStatus;

use super::ServingService;
use super::url_link::{CodeTarget, LinkSite};
use crate::answer::{Answer, LinkVisit};
use crate::policy::expired;
use crate::sites::site_key;

impl ServingService {
    /// The short link `/s/{code}`: for a page's link a 302 to the page, or 404 / 410 as the
    /// page would answer; for an object's a 302 to its address, where its policy applies;
    /// for a URL link its visit (`url_link`).
    ///
    /// # Errors
    /// [`InfraError`] on store failure.
    pub async fn short_link(&self, visit: LinkVisit<'_>) -> Result<Answer, InfraError> {
        let Some(target) = self.code_target(visit.code).await? else {
            return Ok(Answer::NotFound);
        };
        let key = match target {
            CodeTarget::Url(site) => return self.follow(&site, visit).await,
            CodeTarget::Object(_) if visit.asker.confirm => return Ok(Answer::NotFound),
            CodeTarget::Object(location) => {
                return Ok(Answer::Redirect {
                    location,
                    permanent: false,
                });
            }
            // A page's link has no continue page to post to.
            CodeTarget::Page(_) if visit.asker.confirm => return Ok(Answer::NotFound),
            CodeTarget::Page(key) => key,
        };
        let Some((handle, slug)) = key.split_once('/') else {
            return Ok(Answer::NotFound);
        };
        let Some(site) = self.site(handle, slug).await? else {
            return Ok(Answer::NotFound);
        };
        if site.page.status == PageStatus::Archived {
            return Ok(Answer::NotFound);
        }
        if expired(&site.link, self.inner.ports.clock.now()) || self.known_spent(&site) {
            return Ok(Answer::Gone);
        }
        Ok(Answer::Redirect {
            location: self
                .inner
                .config
                .origins
                .page_url(site.handle.as_str(), &site.page.slug),
            permanent: false,
        })
    }

    /// What `code` leads to, remembered for the policy TTL (unknown codes too).
    pub(crate) async fn code_target(&self, code: &str) -> Result<Option<CodeTarget>, InfraError> {
        if !is_code(code) {
            return Ok(None);
        }
        let inner = self.inner.clone();
        let owned = code.to_owned();
        self.inner
            .codes
            .try_get_with(code.to_owned(), async move {
                let Some(link) = inner.ports.links.link_by_code(&owned).await? else {
                    return Ok::<_, InfraError>(None);
                };
                if link.url().is_some() {
                    return Ok(Some(CodeTarget::Url(Arc::new(LinkSite::new(link)))));
                }
                if let Some(id) = link.object() {
                    let Some(object) = inner.ports.objects.object(id).await? else {
                        return Ok(None);
                    };
                    let Some((handle, _)) = inner
                        .ports
                        .accounts
                        .handle_and_email(object.account_id)
                        .await?
                    else {
                        return Ok(None);
                    };
                    let location = inner
                        .config
                        .origins
                        .object_url(handle.as_str(), &object.slug);
                    return Ok(Some(CodeTarget::Object(location)));
                }
                let Some(site) = inner.load_by_code(&owned).await? else {
                    return Ok(None);
                };
                Ok(Some(CodeTarget::Page(site_key(
                    site.handle.as_str(),
                    &site.page.slug,
                ))))
            })
            .await
            .map_err(|e| (*e).clone())
    }
}
