//! The short link `/s/{code}`: what a code leads to, remembered for the policy TTL; a page's
//! link is a redirect to its page, decided as a visit of it would be (a URL link's visit is
//! in `url_link`).

use std::sync::Arc;

use quire_kernel::InfraError;
use quire_links::rules::is_code;
use quire_pages::PageStatus;

use std::cell::RefCell;
use std::collections::HashMap;

use time::OffsetDateTime;

use super::url_link::{CodeTarget, LinkSite};
use super::{Inner, ServingService};
use crate::answer::{Answer, LinkVisit};
use crate::cache::Freshness;
use crate::policy::expired;
use crate::sites::site_key;

/// Most codes one worker thread keeps in its own front cache.
const FRONT_CODES_CAPACITY: usize = 1024;

type FrontCodes = HashMap<
    u64,
    HashMap<String, (OffsetDateTime, Option<CodeTarget>)>,
    foldhash::fast::RandomState,
>;

thread_local! {
    /// Per worker thread, per service: code → (loaded at, target), trusted as the sites'
    /// front cache is (`cache::front_get`). Unknown codes are kept too, a thousand at most.
    static FRONT_CODES: RefCell<FrontCodes> = RefCell::new(FrontCodes::default());
}

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

    /// What `code` leads to, remembered for the policy TTL (unknown codes too): in this
    /// thread's front cache (no lock, no shared write), else in the service's.
    pub(crate) async fn code_target(&self, code: &str) -> Result<Option<CodeTarget>, InfraError> {
        if !is_code(code) {
            return Ok(None);
        }
        let freshness = self.freshness();
        let service = self.inner.id;
        if let Some(target) = FRONT_CODES.with(|front| {
            let front = front.borrow();
            let (loaded_at, target) = front.get(&service)?.get(code)?;
            freshness.trusts_load(*loaded_at).then(|| target.clone())
        }) {
            return Ok(target);
        }
        let (loaded_at, target) = self.load_code_target(code).await?;
        let freshness = Freshness {
            now: self.inner.ports.clock.now(),
            ..freshness
        };
        if freshness.trusts_load(loaded_at) {
            FRONT_CODES.with(|front| {
                let mut front = front.borrow_mut();
                let codes = front.entry(service).or_default();
                codes.retain(|_, (at, _)| freshness.trusts_load(*at));
                if codes.len() >= FRONT_CODES_CAPACITY {
                    codes.clear();
                }
                codes.insert(code.to_owned(), (loaded_at, target.clone()));
            });
        }
        Ok(target)
    }

    async fn load_code_target(
        &self,
        code: &str,
    ) -> Result<(OffsetDateTime, Option<CodeTarget>), InfraError> {
        let inner = self.inner.clone();
        let owned = code.to_owned();
        self.inner
            .codes
            .try_get_with(code.to_owned(), async move {
                let loaded_at = inner.ports.clock.now();
                let target = inner.code_target_now(&owned).await?;
                Ok::<_, InfraError>((loaded_at, target))
            })
            .await
            .map_err(|e| (*e).clone())
    }
}

impl Inner {
    /// What `code` leads to, from the stores.
    async fn code_target_now(&self, code: &str) -> Result<Option<CodeTarget>, InfraError> {
        let Some(link) = self.ports.links.link_by_code(code).await? else {
            return Ok(None);
        };
        if link.url().is_some() {
            return Ok(Some(CodeTarget::Url(Arc::new(LinkSite::new(link)))));
        }
        if let Some(id) = link.object() {
            let Some(object) = self.ports.objects.object(id).await? else {
                return Ok(None);
            };
            let Some((handle, _)) = self
                .ports
                .accounts
                .handle_and_email(object.account_id)
                .await?
            else {
                return Ok(None);
            };
            let location = self
                .config
                .origins
                .object_url(handle.as_str(), &object.slug);
            return Ok(Some(CodeTarget::Object(location)));
        }
        let Some(site) = self.load_by_code(code).await? else {
            return Ok(None);
        };
        Ok(Some(CodeTarget::Page(site_key(
            site.handle.as_str(),
            &site.page.slug,
        ))))
    }
}
