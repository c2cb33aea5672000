//! Admission to a guarded page: the password form's post, and the sign-in pass (issued on
//! the dashboard, accepted once on the pages origin).

use quire_kernel::password::verify_password;
use quire_kernel::secret::sha256_hex;
use quire_kernel::{
    AccountId, Budget, Email, InfraError, LinkId, PageId, Slot, Take, address_key, offloaded,
};
use quire_pages::PageStatus;
use time::OffsetDateTime;

use super::guarded::{Grant, Guarded};
use super::{PASS_BUCKET, ServingService, UNLOCK_BUCKET, UNLOCK_PAGE_BUCKET};
use crate::answer::{Admitted, PageCard, PassError, Unlock, UnlockError};
use crate::path::{encode_query, parse_relative};
use crate::policy::{admits, expired, unix_after};
use crate::token::{Claims, TokenKind};

impl ServingService {
    /// Checks a page password and, when right, makes the page's unlock cookie. Only wrong
    /// passwords count: against the client address's budget on the page, and against the
    /// page's own budget (every address together). A spent page budget refuses only the
    /// addresses that have failed on the page, so nobody can lock a page's visitors out.
    /// The password is verified on the offload port, never on the worker serving the request.
    ///
    /// # Errors
    /// `NotFound`, `Gone`, `Wrong` (with the form to show again), `Throttled`, `Infra`.
    pub async fn unlock(&self, attempt: Unlock<'_>) -> Result<Admitted, UnlockError> {
        let next = parse_relative(attempt.next).unwrap_or_default();
        let Some(site) = self.fresh_site(attempt.handle, attempt.slug).await? else {
            return self.unlock_object(&attempt).await;
        };
        if site.page.status == PageStatus::Archived {
            return Err(UnlockError::NotFound);
        }
        let now = self.inner.ports.clock.now();
        if expired(&site.link, now) || self.known_spent(&site) {
            return Err(UnlockError::Gone);
        }
        let to = Guarded::Page {
            site: &site,
            next: &next,
        };
        self.unlock_to(&to, attempt.password, attempt.client, now)
            .await
    }

    /// Checks a password of the page or link `subject` against its stored hash. Only wrong
    /// passwords count: against the client address's budget on the subject, and against the
    /// subject's own budget (every address together). A spent subject budget refuses only
    /// the addresses that have failed on it, so nobody can lock its visitors out. The
    /// password is verified on the offload port, never on the worker serving the request.
    pub(super) async fn check_password(
        &self,
        subject: uuid::Uuid,
        stored: String,
        password: &str,
        client: &str,
        now: OffsetDateTime,
    ) -> Result<bool, UnlockError> {
        let config = &self.inner.config;
        let limiter = &self.inner.ports.limiter;
        let page_key = subject.to_string();
        let address = format!("{page_key}:{}", address_key(client));
        let throttled = |retry_at: OffsetDateTime| {
            let wait = retry_at - now;
            let secs = wait.whole_seconds() + i64::from(wait.subsec_nanoseconds() > 0);
            UnlockError::Throttled {
                retry_after_secs: u64::try_from(secs).unwrap_or(1).max(1),
            }
        };
        // An address with no failure on the page is the one let past a spent page budget.
        let first_try = Budget::fixed(1, config.unlock_per_address.window);
        let (address_slot, fresh) = match limiter
            .take(UNLOCK_BUCKET, &address, &first_try, now)
            .await?
        {
            Take::Taken(slot) => (slot, true),
            Take::Refused { .. } => match limiter
                .take(UNLOCK_BUCKET, &address, &config.unlock_per_address, now)
                .await?
            {
                Take::Taken(slot) => (slot, false),
                Take::Refused { retry_at } => return Err(throttled(retry_at)),
            },
        };
        let page_slot: Option<Slot> = match limiter
            .take(UNLOCK_PAGE_BUCKET, &page_key, &config.unlock_per_page, now)
            .await?
        {
            Take::Taken(slot) => Some(slot),
            Take::Refused { .. } if fresh => None,
            Take::Refused { retry_at } => {
                limiter
                    .give_back(UNLOCK_BUCKET, &address, address_slot)
                    .await?;
                return Err(throttled(retry_at));
            }
        };
        let password = password.to_owned();
        let right = offloaded(self.inner.ports.offload.as_ref(), move || {
            verify_password(&password, &stored)
        })
        .await;
        // The right password was no guess, nor was a check the offload could not run.
        if !matches!(right, Ok(false)) {
            limiter
                .give_back(UNLOCK_BUCKET, &address, address_slot)
                .await?;
            if let Some(slot) = page_slot {
                limiter
                    .give_back(UNLOCK_PAGE_BUCKET, &page_key, slot)
                    .await?;
            }
        }
        Ok(right?)
    }

    /// On the dashboard: a signed-in account asks to open the page whose short-link code is
    /// `code`, from the session whose id hash is `session`. Returns the pages-origin URL that
    /// carries the pass; the access it gives ends when that session does.
    ///
    /// # Errors
    /// `NotFound` (unknown or archived page), `Forbidden` (the page does not admit the
    /// account), `Infra`.
    pub async fn issue_pass(
        &self,
        code: &str,
        account: AccountId,
        email: &Email,
        session: &str,
        next: &str,
    ) -> Result<String, PassError> {
        // Archived pages load as `None`; a URL link's pass lands on the links origin, an
        // object's on its owner's.
        let origins = &self.inner.config.origins;
        let (link, landing) = match self.inner.load_by_code(code).await? {
            Some(site) => (
                site.link.clone(),
                origins.owner_origin(site.handle.as_str()),
            ),
            None => match self.inner.ports.links.link_by_code(code).await? {
                Some(link) if link.url().is_some() && link.archived_at.is_none() => {
                    (link, origins.links_origin())
                }
                Some(link) if link.object().is_some() => match self.object_of(link).await? {
                    Some(site) => (site.link, origins.owner_origin(site.handle.as_str())),
                    None => return Err(PassError::NotFound),
                },
                _ => return Err(PassError::NotFound),
            },
        };
        if !admits(&link, account, Some(email)) {
            return Err(PassError::Forbidden);
        }
        let subject = link.page().map_or(link.id.0, |p| p.0);
        let now = self.inner.ports.clock.now();
        let pass = self.inner.signer.sign(&Claims {
            kind: TokenKind::Pass,
            page: subject,
            expires: unix_after(now, self.inner.config.pass_ttl),
            account: Some(account.0),
            fingerprint: None,
            session: Some(session.to_owned()),
            nonce: Some(quire_kernel::secret::random_url_token()[..16].to_owned()),
        });
        let next = parse_relative(next).unwrap_or_default();
        Ok(format!(
            "{landing}/-/pass?token={pass}&next={}",
            encode_query(&next)
        ))
    }

    /// On the dashboard: the page whose short-link code is `code` (not archived), named as
    /// the hand-off's pages name it to the signed-in visitor, whether or not it admits them:
    /// its title and address are what its own sign-in page shows anyone with the address.
    ///
    /// # Errors
    /// [`InfraError`] on store failure.
    pub async fn page_card(&self, code: &str) -> Result<Option<PageCard>, InfraError> {
        let ports = &self.inner.ports;
        let Some(link) = ports.links.link_by_code(code).await? else {
            return Ok(None);
        };
        if link.object().is_some() {
            return self.object_card(link).await;
        }
        let Some(page) = link.page() else {
            return Ok(
                (link.url().is_some() && link.archived_at.is_none()).then(|| PageCard {
                    title: link.title.clone().unwrap_or_else(|| "A link".into()),
                    url: self.inner.config.origins.short_url(link.code()),
                }),
            );
        };
        let Some(page) = ports
            .pages
            .page(page)
            .await?
            .filter(|p| p.status != PageStatus::Archived)
        else {
            return Ok(None);
        };
        let Some((handle, _)) = ports.accounts.handle_and_email(page.account_id).await? else {
            return Ok(None);
        };
        Ok(Some(PageCard {
            url: self
                .inner
                .config
                .origins
                .page_url(handle.as_str(), &page.slug),
            title: page.title,
        }))
    }

    /// On the pages origin: turns a pass into the page's access cookie, once. `owner` is the
    /// owner whose origin received it (per-owner origins): a pass lands only on the origin of
    /// its page's owner.
    ///
    /// # Errors
    /// `Forbidden` for an invalid, expired or already used pass, `NotFound` when the page is
    /// gone or belongs to another origin, `Infra`.
    pub async fn accept_pass(
        &self,
        owner: Option<&str>,
        token: &str,
        next: &str,
    ) -> Result<Admitted, PassError> {
        let now = self.inner.ports.clock.now();
        let claims = self
            .inner
            .signer
            .check_any_page(token, TokenKind::Pass, now)
            .ok_or(PassError::Forbidden)?;
        // The page and its owner first: a pass shown to another owner's origin is refused
        // without being spent. A URL link's pass lands on the links origin only.
        let site = self.inner.load_by_id(PageId(claims.page)).await?;
        let object = match &site {
            Some(_) => None,
            None => self.object_for_pass(owner, claims.page).await?,
        };
        let link = match (&site, &object) {
            (None, None) if owner.is_none() => self
                .inner
                .ports
                .links
                .link(LinkId(claims.page))
                .await?
                .filter(|l| l.url().is_some()),
            _ => None,
        };
        let next = parse_relative(next).unwrap_or_default();
        let to = match (&site, &object, &link) {
            (Some(site), _, _) => {
                if self.inner.config.origins.per_owner() && owner != Some(site.handle.as_str()) {
                    return Err(PassError::NotFound);
                }
                Guarded::Page { site, next: &next }
            }
            (None, Some(object), _) => Guarded::Object(object),
            (None, None, Some(link)) => Guarded::Link {
                link,
                code: link.code(),
            },
            (None, None, None) => return Err(PassError::NotFound),
        };
        // Each pass works once. Its uses are counted in the window that holds its expiry, the
        // same window for every use of one pass, so a replay is seen on any replica.
        let expires = OffsetDateTime::from_unix_timestamp(claims.expires)
            .map_err(|_| PassError::Forbidden)?;
        let first_use = self
            .inner
            .ports
            .limiter
            .hit(
                PASS_BUCKET,
                &sha256_hex(token.as_bytes()),
                self.inner.config.pass_ttl,
                1,
                expires,
            )
            .await?;
        if !first_use {
            return Err(PassError::Forbidden);
        }
        // An archived URL link spends the pass all the same.
        if matches!(to, Guarded::Link { link, .. } if link.archived_at.is_some()) {
            return Err(PassError::NotFound);
        }
        Ok(self.admit_to(&to, Grant::Access(claims), now))
    }
}
