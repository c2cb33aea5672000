//! A visit of a URL link at `/s/{code}`, in the pages' order: unknown or archived (404),
//! expired or spent (410, or a 302 to its `expiredUrl`), the gate (password form, sign-in
//! pass, a key of its project), then the redirect. A budgeted link spends a view only on
//! a person's request: a browser is shown the continue page first and spends on its post,
//! other clients are redirected at once, and previews and crawlers never spend (they are
//! counted apart). Its password form and sign-in pass are here too.

use std::sync::atomic::{AtomicBool, Ordering};

use quire_kernel::InfraError;
use quire_links::{Access, Link};

use super::ServingService;
use super::guarded::Guarded;
use crate::answer::{
    Admitted, Answer, CacheRule, ContinuePrompt, LinkUnlock, LinkVisit, UnlockError,
};
use crate::bots::referrer_host;
use crate::policy::expired;

/// What a short-link code leads to.
#[derive(Debug, Clone)]
pub(crate) enum CodeTarget {
    /// A page, as `handle/slug`.
    Page(String),
    /// An object, as its address: the visit there applies its policy.
    Object(String),
    Url(std::sync::Arc<LinkSite>),
}

/// A URL link as served, with what this replica learned of its budget.
#[derive(Debug)]
pub(crate) struct LinkSite {
    pub(crate) link: Link,
    /// Its budget was found spent.
    pub(crate) spent: AtomicBool,
}

impl LinkSite {
    pub(crate) fn new(link: Link) -> Self {
        Self {
            link,
            spent: AtomicBool::new(false),
        }
    }

    fn known_spent(&self) -> bool {
        self.spent.load(Ordering::Relaxed)
            || self
                .link
                .policy
                .max_views
                .is_some_and(|max| self.link.view_count >= max)
    }
}

/// The host a URL leads to, as the continue page names it.
fn host_of(url: &str) -> String {
    url.split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("")
        .to_owned()
}

/// A public link without expiry or budget is the only one a cache may keep, and the only
/// one whose redirect may be permanent: a kept 301 or 308 would skip any later policy.
fn policy_free(link: &Link) -> bool {
    link.policy.access == Access::Public
        && link.policy.expires_at.is_none()
        && link.policy.max_views.is_none()
}

impl ServingService {
    /// The answer to a visit of a URL link (see the module's summary).
    pub(super) async fn follow(
        &self,
        site: &LinkSite,
        visit: LinkVisit<'_>,
    ) -> Result<Answer, InfraError> {
        let link = &site.link;
        if link.archived_at.is_some() {
            return Ok(Answer::NotFound);
        }
        let now = self.inner.ports.clock.now();
        if expired(link, now) || site.known_spent() {
            return Ok(lapsed(link));
        }
        let to = Guarded::Link {
            link,
            code: visit.code,
        };
        if let Some(refusal) = self.admit(&to, &visit.visitor, now).await? {
            return Ok(refusal);
        }
        let Some(target) = link.url() else {
            return Ok(Answer::NotFound);
        };
        let continue_page = || {
            Answer::Continue(ContinuePrompt {
                title: link.title.clone(),
                host: Some(host_of(target)),
                action: format!("/s/{}", visit.code),
            })
        };
        let bot = visit.asker.bot();
        if bot {
            self.inner.notes.bot(link.id);
        }
        if let Some(budget) = link.policy.max_views {
            // Nothing but a person's own request spends a view, and nothing else learns
            // more of where the link leads than its host.
            if visit.head || visit.asker.holds_back() {
                return Ok(continue_page());
            }
            let left = budget.saturating_sub(link.view_count);
            if !self
                .inner
                .leases
                .take(self.inner.ports.links.as_ref(), link.id, budget, left, now)
                .await?
            {
                site.spent.store(true, Ordering::Relaxed);
                return Ok(lapsed(link));
            }
            // `left` is at least what the budget has (counts only grow): the last view is
            // taken, and the next browser is told so at once rather than on its post.
            if left <= 1 {
                site.spent.store(true, Ordering::Relaxed);
            }
        } else if !bot && !visit.head {
            self.inner.views.add(link.id);
        }
        if !bot && !visit.head {
            self.inner
                .notes
                .viewed(link.id, referrer_host(visit.referer));
        }
        let free = policy_free(link);
        let status = match link.redirect.code() {
            _ if visit.asker.confirm => 303,
            301 if !free => 302,
            308 if !free => 307,
            code => code,
        };
        Ok(Answer::Forward {
            location: target.to_owned(),
            status,
            cache: if free {
                CacheRule::Revalidate
            } else {
                CacheRule::NoStore
            },
        })
    }

    /// The password form's post of a URL link: as [`ServingService::unlock`] for pages,
    /// counted against the same budgets (per link and address, per link).
    ///
    /// # Errors
    /// `NotFound`, `Gone`, `Wrong`, `Throttled`, `Infra`.
    pub async fn unlock_link(&self, attempt: LinkUnlock<'_>) -> Result<Admitted, UnlockError> {
        let link = match self.inner.ports.links.link_by_code(attempt.code).await? {
            Some(link) if link.url().is_some() && link.archived_at.is_none() => link,
            _ => return Err(UnlockError::NotFound),
        };
        let now = self.inner.ports.clock.now();
        let site = LinkSite::new(link);
        let link = &site.link;
        if expired(link, now) || site.known_spent() {
            return Err(UnlockError::Gone);
        }
        let to = Guarded::Link {
            link,
            code: attempt.code,
        };
        self.unlock_to(&to, attempt.password, attempt.client, now)
            .await
    }
}

/// An expired or spent link: its `expiredUrl`, or 410.
fn lapsed(link: &Link) -> Answer {
    match &link.expired_url {
        Some(url) => Answer::Forward {
            location: url.clone(),
            status: 302,
            cache: CacheRule::NoStore,
        },
        None => Answer::Gone,
    }
}
