//! A visit of a URL link at `/s/{code}`, in the pages' order: unknown or archived (404),
//! expired or spent (410, or a 302 to its `expiredUrl`), the gate (password form, sign-in
//! pass, a key of its project), then the redirect. A budgeted link spends a view only on
//! a person's request: a browser is shown the continue page first and spends on its post,
//! other clients are redirected at once, and previews and crawlers never spend (they are
//! counted apart). Its password form and sign-in pass are here too.

use std::sync::atomic::{AtomicBool, Ordering};

use quire_kernel::{App, InfraError, LinkId};
use quire_links::{Access, Link};

use super::{ACCESS_COOKIE, ServingService, UNLOCK_COOKIE};
use crate::answer::{
    Admitted, Answer, CacheRule, ContinuePrompt, IssuedCookie, LinkUnlock, LinkVisit, PassError,
    PasswordPrompt, SignInPrompt, UnlockError,
};
use crate::bots::referrer_host;
use crate::policy::{Gate, expired, fingerprint, unix_after};
use crate::token::{Claims, TokenKind};

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

fn title_of(link: &Link) -> String {
    link.title.clone().unwrap_or_else(|| "A link".into())
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
        let apps = [App::Link];
        match self
            .gate(link, link.id.0, &apps, &visit.visitor, now)
            .await?
        {
            Gate::Open => {}
            Gate::Password => {
                return Ok(Answer::Password(PasswordPrompt {
                    title: title_of(link),
                    handle: String::new(),
                    slug: String::new(),
                    next: String::new(),
                    wrong: false,
                    code: Some(visit.code.to_owned()),
                }));
            }
            Gate::SignIn => {
                return Ok(Answer::SignIn(SignInPrompt {
                    title: title_of(link),
                    shared: link.policy.access == Access::AllowList,
                    location: format!(
                        "{}/visit?page={}",
                        self.inner.config.base_url.trim_end_matches('/'),
                        link.public_id
                    ),
                }));
            }
            Gate::Forbidden(email) => {
                return Ok(Answer::Forbidden {
                    title: title_of(link),
                    email,
                });
            }
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

    /// A visitor cookie of a URL link: named for its public id, on the links origin's whole
    /// host (`__Host-` on https) or, on a shared origin, under `/s/`.
    fn link_cookie(
        &self,
        kind: &str,
        link: &Link,
        claims: &Claims,
        ttl: std::time::Duration,
    ) -> IssuedCookie {
        let origins = &self.inner.config.origins;
        let (prefix, path) = match (origins.per_owner(), origins.https()) {
            (true, true) => ("__Host-", "/"),
            (true, false) => ("", "/"),
            (false, _) => ("", "/s/"),
        };
        IssuedCookie {
            name: format!("{prefix}{kind}_{}", link.public_id),
            value: self.inner.signer.sign(claims),
            path: path.to_owned(),
            max_age: ttl,
        }
    }

    /// The password form's post of a URL link: as [`ServingService::unlock`] for pages,
    /// counted against the same budgets (per link and address, per link).
    ///
    /// # Errors
    /// `NotFound`, `Gone`, `Wrong`, `Throttled`, `Infra`.
    pub async fn unlock_link(&self, attempt: LinkUnlock<'_>) -> Result<Admitted, UnlockError> {
        let location = format!("/s/{}", attempt.code);
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
        let Some(fingerprint) =
            fingerprint(link).filter(|_| link.policy.access == Access::Password)
        else {
            return Ok(Admitted {
                cookie: None,
                location,
            });
        };
        let stored = link.password_hash.clone().unwrap_or_default();
        let right = self
            .check_password(link.id.0, stored, attempt.password, attempt.client, now)
            .await?;
        if !right {
            return Err(UnlockError::Wrong(PasswordPrompt {
                title: title_of(link),
                handle: String::new(),
                slug: String::new(),
                next: String::new(),
                wrong: true,
                code: Some(attempt.code.to_owned()),
            }));
        }
        let ttl = self.inner.config.unlock_cookie_ttl;
        let cookie = self.link_cookie(
            UNLOCK_COOKIE,
            link,
            &Claims {
                kind: TokenKind::Unlock,
                page: link.id.0,
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

    /// On the links origin: turns a pass for a URL link into its access cookie, once (the
    /// pass was checked and spent by [`ServingService::accept_pass`]).
    pub(super) async fn admit_to_link(
        &self,
        id: LinkId,
        claims: Claims,
    ) -> Result<Admitted, PassError> {
        let Some(link) = self
            .inner
            .ports
            .links
            .link(id)
            .await?
            .filter(|l| l.url().is_some() && l.archived_at.is_none())
        else {
            return Err(PassError::NotFound);
        };
        let now = self.inner.ports.clock.now();
        let ttl = self.inner.config.access_cookie_ttl;
        let cookie = self.link_cookie(
            ACCESS_COOKIE,
            &link,
            &Claims {
                kind: TokenKind::Access,
                expires: unix_after(now, ttl),
                ..claims
            },
            ttl,
        );
        Ok(Admitted {
            cookie: Some(cookie),
            location: format!("/s/{}", link.code()),
        })
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
