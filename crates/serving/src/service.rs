//! The serving use cases: a visit here, the answer with its file in `files`; the password
//! form's post and the sign-in pass in `admission`, the short link in `short_link` (the view
//! flush is in `crate::sites`); the settings in `config`. What a gate shows and the cookies
//! that open a page, an object or a URL link are written once, in `guarded`.
//!
//! Order of decisions for a visit, each before any byte of the page is read:
//! path → page (unknown or archived: 404) → trailing slash → expiry (410) → known spent
//! budget (410, except the assets of a view already counted) → access (form, sign-in,
//! 403) → file (directory redirect, the page's `404.html`) → preconditions and `Range`
//! (304, 412, 416, 206: `quire_kernel::conditional`) → view.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use moka::future::Cache;
use quire_accounts::SessionStore;
use quire_kernel::{AccountId, App, Clock, Email, InfraError, Offload, PageId, RateLimiter};
use quire_links::{Access, Link, LinkStore};
use quire_pages::{AccountDirectory, BundleStore, PageStatus, PageStore};
use quire_projects::{AddressError, ProjectAccess, ProjectStore, authorize_project};
use quire_read_cache::ClockCache;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::answer::{Answer, ContinuePrompt, Visit, Visitor};
use crate::cache::{CachedFile, Site};
use crate::leases::ViewLeases;
use crate::notes::NoteTally;
use crate::path::{encode_relative, parse_owner_path, parse_page_path};
use crate::policy::{
    Gate, Resolved, admits, expired, fingerprint, is_document, resolve, with_query,
};
use crate::token::{Signer, TokenKind};
use crate::view_bytes::ViewBytes;
use crate::views::ViewTally;

mod admission;
mod config;
mod database;
mod files;
mod guarded;
mod object_admission;
mod objects;
mod short_link;
mod url_link;

pub use config::ServingConfig;
pub use database::PageDatabase;
use guarded::Guarded;
pub(crate) use url_link::CodeTarget;

/// Cookie of a page whose password was given.
pub const UNLOCK_COOKIE: &str = "quire_unlock";
/// Cookie of an account signed in (through the dashboard) for a private or allow-list page.
pub const ACCESS_COOKIE: &str = "quire_access";
/// Cookie of a counted view of a page with a budget.
pub const VIEW_COOKIE: &str = "quire_view";
/// Rate-limit bucket of wrong passwords, per page and client address.
pub const UNLOCK_BUCKET: &str = "page_unlock";
/// Rate-limit bucket of wrong passwords, per page.
pub const UNLOCK_PAGE_BUCKET: &str = "page_unlock_all";
/// Rate-limit bucket that remembers used passes (limit 1), shared by replicas.
pub const PASS_BUCKET: &str = "page_pass";

/// The adapters a [`ServingService`] works through.
#[derive(Debug, Clone)]
pub struct ServingPorts {
    pub pages: Arc<dyn PageStore>,
    pub links: Arc<dyn LinkStore>,
    pub bundles: Arc<dyn BundleStore>,
    pub accounts: Arc<dyn AccountDirectory>,
    pub projects: Arc<dyn ProjectStore>,
    pub limiter: Arc<dyn RateLimiter>,
    /// Dashboard sessions: an access cookie lasts only as long as the session it came from.
    pub sessions: Arc<dyn SessionStore>,
    pub clock: Arc<dyn Clock>,
    /// Where page passwords are verified: argon2id on the worker would hold every
    /// connection that worker serves.
    pub offload: Arc<dyn Offload>,
    /// Objects, served at `/{slug}` of their owner's origin.
    pub objects: Arc<dyn quire_objects::ObjectRecords>,
    pub object_bytes: Arc<dyn quire_objects::ObjectBytes>,
}

/// The visitor side of published pages.
#[derive(Clone)]
pub struct ServingService {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) ports: ServingPorts,
    pub(crate) config: ServingConfig,
    pub(crate) signer: Signer,
    /// `handle/slug` → the page as served; `None` is cached too (unknown pages). This and
    /// the other policy caches age by the clock of the ports.
    pub(crate) sites: ClockCache<String, Option<Arc<Site>>>,
    /// Short-link code → what it leads to.
    /// What each short-link code leads to, with when that was read.
    pub(crate) codes: ClockCache<String, (OffsetDateTime, Option<CodeTarget>)>,
    pub(crate) files: Cache<(PageId, String), Arc<CachedFile>>,
    /// Session id hash → its account and email while it is still signed in (fully), kept
    /// for the policy TTL.
    pub(crate) sessions: ClockCache<String, Option<(AccountId, Option<Email>)>>,
    pub(crate) views: ViewTally,
    /// Bot views, referrer hosts and last views of URL links, between flushes.
    pub(crate) notes: NoteTally,
    pub(crate) leases: ViewLeases,
    /// What each budgeted object's view cookie has left to give, on this replica.
    pub(crate) view_bytes: ViewBytes,
    /// Tells this service's entries apart in the per-thread front caches.
    pub(crate) id: u64,
    /// When a page was last changed through this replica, in microseconds since the Unix
    /// epoch by the clock of the ports (0: never); front-cache entries loaded before it are
    /// not trusted.
    pub(crate) changed: AtomicU64,
}

static SERVICE_IDS: AtomicU64 = AtomicU64::new(1);

impl std::fmt::Debug for ServingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServingService")
            .field("config", &self.inner.config)
            .field("cached_pages", &self.inner.sites.entry_count())
            .field("cached_file_bytes", &self.inner.files.weighted_size())
            .finish_non_exhaustive()
    }
}

impl ServingService {
    #[must_use]
    pub fn new(ports: ServingPorts, config: ServingConfig, signing_key: &[u8]) -> Self {
        let (pages, ttl) = (config.max_cached_pages, config.policy_ttl);
        let sites = ClockCache::with_invalidation_closures(pages, ttl, ports.clock.clone())
            .named("serving_pages");
        let codes = ClockCache::new(pages, ttl, ports.clock.clone()).named("serving_short_links");
        let sessions =
            ClockCache::new(pages, ttl, ports.clock.clone()).named("serving_sign_in_passes");
        let leases = ViewLeases::with_ttl(config.view_lease_ttl);
        let view_bytes = ViewBytes::with_capacity(
            config.counted_view_cookies,
            config.counted_view_cookies_per_owner,
        );
        let files = Cache::builder()
            .max_capacity(config.file_cache_bytes)
            .weigher(|_: &(PageId, String), f: &Arc<CachedFile>| f.weight())
            .build();
        Self {
            inner: Arc::new(Inner {
                ports,
                signer: Signer::new(signing_key),
                config,
                sites,
                codes,
                files,
                sessions,
                views: ViewTally::default(),
                notes: NoteTally::default(),
                leases,
                view_bytes,
                id: SERVICE_IDS.fetch_add(1, Ordering::Relaxed),
                changed: AtomicU64::new(0),
            }),
        }
    }

    #[must_use]
    pub fn config(&self) -> &ServingConfig {
        &self.inner.config
    }

    /// Answers a `GET` or `HEAD` of `/{handle}/{slug}/{path}`.
    ///
    /// # Errors
    /// [`InfraError`] when the store or the bundle store fails; no view is counted then.
    pub async fn visit(&self, visit: Visit<'_>) -> Result<Answer, InfraError> {
        let path = match (visit.owner, self.inner.config.origins.per_owner()) {
            (Some(owner), true) => parse_owner_path(owner, visit.path),
            (None, false) => parse_page_path(visit.path),
            _ => None,
        };
        let Some(path) = path else {
            return Ok(Answer::NotFound);
        };
        let Some(site) = self.site(path.handle, path.slug).await? else {
            // An object is a file: `/{slug}`, with nothing after it.
            if path.rest.is_none() {
                return self.object_visit(path.handle, path.slug, &visit).await;
            }
            return Ok(Answer::NotFound);
        };
        if site.page.status == PageStatus::Archived {
            return Ok(Answer::NotFound);
        }
        let Some(rest) = path.rest else {
            return Ok(Answer::Redirect {
                location: with_query(self.base_path(&site), visit.query),
                permanent: true,
            });
        };
        let now = self.inner.ports.clock.now();
        if expired(&site.link, now) {
            return Ok(Answer::Gone);
        }
        let page = site.page.id.0;
        let resolved = resolve(&site, &rest);
        let document = matches!(resolved, Resolved::File(slot) if is_document(&slot.entry));
        let viewed = || {
            visit.visitor.view.iter().any(|t| {
                self.inner
                    .signer
                    .check(t, TokenKind::View, page, now)
                    .is_some()
            })
        };
        if self.known_spent(&site) && (document || !viewed()) {
            return Ok(Answer::Gone);
        }
        let to = Guarded::Page {
            site: &site,
            next: &rest,
        };
        if let Some(refusal) = self.admit(&to, &visit.visitor, now).await? {
            return Ok(refusal);
        }
        let (slot, found) = match resolved {
            Resolved::File(slot) => (slot, true),
            Resolved::Directory(dir) => {
                return Ok(Answer::Redirect {
                    location: with_query(
                        format!("{}{}", self.base_path(&site), encode_relative(&dir)),
                        visit.query,
                    ),
                    permanent: false,
                });
            }
            Resolved::Missing => match site.files.get("404.html") {
                Some(slot) => (slot, false),
                None => return Ok(Answer::NotFound),
            },
        };
        // A view of a budgeted page is spent by a person's own request only: a browser is
        // shown the continue page (whose post comes back here), a preview or crawler never
        // spends one (it is counted apart).
        if document && found && !visit.head && site.link.policy.max_views.is_some() {
            if visit.asker.bot() {
                self.inner.notes.bot(site.link.id);
            }
            if visit.asker.holds_back() {
                return Ok(Answer::Continue(ContinuePrompt {
                    title: Some(site.page.title.clone()),
                    host: None,
                    action: with_query(visit.path.to_owned(), visit.query),
                }));
            }
        }
        self.file_answer(&site, slot, found, document, &visit, now)
            .await
    }

    fn known_spent(&self, site: &Site) -> bool {
        site.spent.load(Ordering::Relaxed)
            || site
                .link
                .policy
                .max_views
                .is_some_and(|max| site.link.view_count >= max)
    }

    fn base_path(&self, site: &Site) -> String {
        self.inner
            .config
            .origins
            .base_path(site.handle.as_str(), &site.page.slug)
    }

    /// Whether `visitor` may open what `link` guards; `subject` is the page or link the
    /// visitor's cookies must name, `apps` the apps a key needs (one of) to open it.
    pub(crate) async fn gate(
        &self,
        link: &Link,
        subject: Uuid,
        apps: &[App],
        visitor: &Visitor<'_>,
        now: OffsetDateTime,
    ) -> Result<Gate, InfraError> {
        if link.policy.access == Access::Public {
            return Ok(Gate::Open);
        }
        // A key or token reads a guarded page of a project it reaches only when it may serve
        // or publish pages (a link-only key opens no page), a URL link when it may manage
        // links.
        if let Some(principal) = visitor
            .principal
            .filter(|p| apps.iter().any(|a| p.has_app(*a)))
        {
            match authorize_project(
                self.inner.ports.projects.as_ref(),
                principal,
                link.project_id,
                ProjectAccess::Read,
            )
            .await
            {
                Ok(_) => return Ok(Gate::Open),
                Err(AddressError::InsufficientScope) => {}
                Err(AddressError::Infra(e)) => return Err(e),
            }
        }
        let page = subject;
        let signer = &self.inner.signer;
        match link.policy.access {
            Access::Public => Ok(Gate::Open),
            Access::Password => {
                let current = fingerprint(link);
                let unlocked = visitor.unlock.iter().any(|t| {
                    signer
                        .check(t, TokenKind::Unlock, page, now)
                        .is_some_and(|c| current.is_some() && c.fingerprint == current)
                });
                Ok(if unlocked { Gate::Open } else { Gate::Password })
            }
            Access::Private | Access::AllowList => {
                let mut refused = None;
                for token in &visitor.access {
                    let Some(claims) = signer.check(token, TokenKind::Access, page, now) else {
                        continue;
                    };
                    let Some(account) = claims.account else {
                        continue;
                    };
                    let signed_in = match &claims.session {
                        Some(session) => self
                            .session_account(session)
                            .await?
                            .filter(|(a, _)| *a == AccountId(account)),
                        None => None,
                    };
                    let Some((account, email)) = signed_in else {
                        continue;
                    };
                    if admits(link, account, email.as_ref()) {
                        return Ok(Gate::Open);
                    }
                    refused = Some(email.map(|e| e.as_str().to_owned()));
                }
                Ok(match refused {
                    Some(email) => Gate::Forbidden(email),
                    None => Gate::SignIn,
                })
            }
        }
    }

    /// The account of a dashboard session that is still fully signed in (second factor
    /// given, not expired, not signed out) with its current email (allow lists may name
    /// one), remembered for the policy TTL.
    async fn session_account(
        &self,
        id_hash: &str,
    ) -> Result<Option<(AccountId, Option<Email>)>, InfraError> {
        let inner = self.inner.clone();
        let key = id_hash.to_owned();
        self.inner
            .sessions
            .try_get_with(id_hash.to_owned(), async move {
                let now = inner.ports.clock.now();
                let Some(account) = inner
                    .ports
                    .sessions
                    .session_by_hash(&key)
                    .await?
                    .filter(|s| s.mfa_satisfied && now < s.expires_at)
                    .map(|s| s.account_id)
                else {
                    return Ok::<_, InfraError>(None);
                };
                let email = inner
                    .ports
                    .accounts
                    .handle_and_email(account)
                    .await?
                    .map(|(_, email)| email);
                Ok(Some((account, email)))
            })
            .await
            .map_err(|e| (*e).clone())
    }
}
