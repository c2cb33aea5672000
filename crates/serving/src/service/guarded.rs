//! Admission to a guarded thing, written once for the three that sit behind a link: a page,
//! an object and a URL link. What its gate shows a visitor it does not admit (the password
//! form, the sign-in page, a refusal), the visitor cookies that open it (name, scope,
//! lifetime, claims), and where an admitted visitor lands. The use cases around it (which
//! thing, expired or spent, the pass spent once) stay with each thing.

use std::time::Duration;

use quire_kernel::{App, InfraError};
use quire_links::{Access, Link};
use time::OffsetDateTime;
use uuid::Uuid;

use super::objects::ObjectSite;
use super::{ACCESS_COOKIE, ServingService, UNLOCK_COOKIE, VIEW_COOKIE};
use crate::answer::{
    Admitted, Answer, IssuedCookie, PasswordPrompt, SignInPrompt, UnlockError, Visitor,
};
use crate::cache::Site;
use crate::path::{encode_query, encode_relative};
use crate::policy::{Gate, fingerprint, unix_after};
use crate::token::{Claims, TokenKind};

/// A guarded thing a visitor asks to open.
pub(super) enum Guarded<'a> {
    /// A page, entered at `next` (a path inside it): the password form and the sign-in
    /// bring the visitor back there.
    Page {
        site: &'a Site,
        next: &'a str,
    },
    Object(&'a ObjectSite),
    /// A URL link, by the code the visitor followed.
    Link {
        link: &'a Link,
        code: &'a str,
    },
}

/// What a visitor cookie grants.
pub(super) enum Grant {
    /// The password was given; a new password changes the fingerprint and voids the cookie.
    Unlock { fingerprint: String },
    /// A sign-in pass was checked and spent: its account and session, for longer.
    Access(Claims),
    /// A counted view of a budgeted thing; `nonce` gives it a count of its own.
    View { nonce: Option<String> },
}

impl Guarded<'_> {
    fn link(&self) -> &Link {
        match self {
            Self::Page { site, .. } => &site.link,
            Self::Object(site) => &site.link,
            Self::Link { link, .. } => link,
        }
    }

    /// What the visitor's cookies of it must name.
    fn subject(&self) -> Uuid {
        match self {
            Self::Page { site, .. } => site.page.id.0,
            Self::Object(site) => site.object.id.0,
            Self::Link { link, .. } => link.id.0,
        }
    }

    fn title(&self) -> String {
        match self {
            Self::Page { site, .. } => site.page.title.clone(),
            Self::Object(site) => site.object.title.clone(),
            Self::Link { link, .. } => link.title.clone().unwrap_or_else(|| "A link".into()),
        }
    }

    /// The apps a key needs (one of) to open it: a link-only key opens no page or object,
    /// a URL link opens to a key that may manage links.
    fn apps(&self) -> &'static [App] {
        match self {
            Self::Page { .. } | Self::Object(_) => &[App::Serve, App::Page],
            Self::Link { .. } => &[App::Link],
        }
    }
}

impl ServingService {
    /// `to`'s access rule applied to `visitor`: `None` when it may open it, else the answer
    /// (the password form, the sign-in page, a refusal).
    pub(super) async fn admit(
        &self,
        to: &Guarded<'_>,
        visitor: &Visitor<'_>,
        now: OffsetDateTime,
    ) -> Result<Option<Answer>, InfraError> {
        let link = to.link();
        Ok(
            match self
                .gate(link, to.subject(), to.apps(), visitor, now)
                .await?
            {
                Gate::Open => None,
                Gate::Password => Some(Answer::Password(self.password_prompt(to, false))),
                Gate::SignIn => Some(Answer::SignIn(SignInPrompt {
                    title: to.title(),
                    shared: link.policy.access == Access::AllowList,
                    location: self.sign_in_location(to),
                })),
                Gate::Forbidden(email) => Some(Answer::Forbidden {
                    title: to.title(),
                    email,
                }),
            },
        )
    }

    /// The password form's post for `to`, its budgets and expiry already checked: `to`'s
    /// unlock cookie when the password is right, the form again when it is wrong, and no
    /// cookie when `to` no longer asks for a password.
    pub(super) async fn unlock_to(
        &self,
        to: &Guarded<'_>,
        password: &str,
        client: &str,
        now: OffsetDateTime,
    ) -> Result<Admitted, UnlockError> {
        let link = to.link();
        let Some(fingerprint) =
            fingerprint(link).filter(|_| link.policy.access == Access::Password)
        else {
            return Ok(Admitted {
                cookie: None,
                location: self.landing(to),
            });
        };
        let stored = link.password_hash.clone().unwrap_or_default();
        if !self
            .check_password(to.subject(), stored, password, client, now)
            .await?
        {
            return Err(UnlockError::Wrong(self.password_prompt(to, true)));
        }
        Ok(self.admit_to(to, Grant::Unlock { fingerprint }, now))
    }

    /// Lets the visitor in: `to`'s cookie of `grant`, and where it lands.
    pub(super) fn admit_to(&self, to: &Guarded<'_>, grant: Grant, now: OffsetDateTime) -> Admitted {
        Admitted {
            cookie: Some(self.visitor_cookie(to, grant, now)),
            location: self.landing(to),
        }
    }

    /// The visitor cookie of `to` that carries `grant`, lasting the grant's lifetime.
    ///
    /// On per-owner origins it is named for the slug (a URL link's public id) on the whole
    /// host, `__Host-` on https. On the shared origin a page or object has a path of its own
    /// to scope its cookie to; URL links share `/s/`, so theirs keep the public id in the name.
    pub(super) fn visitor_cookie(
        &self,
        to: &Guarded<'_>,
        grant: Grant,
        now: OffsetDateTime,
    ) -> IssuedCookie {
        let (claims, kind, ttl) = self.claims(to, grant, now);
        let (key, shared) = match to {
            Guarded::Page { site, .. } => {
                (&site.page.slug, (kind.to_owned(), self.base_path(site)))
            }
            Guarded::Object(site) => (&site.object.slug, (kind.to_owned(), self.object_path(site))),
            Guarded::Link { link, .. } => (
                &link.public_id,
                (format!("{kind}_{}", link.public_id), "/s/".to_owned()),
            ),
        };
        let origins = &self.inner.config.origins;
        let (name, path) = if origins.per_owner() {
            let prefix = if origins.https() { "__Host-" } else { "" };
            (format!("{prefix}{kind}_{key}"), "/".to_owned())
        } else {
            shared
        };
        IssuedCookie {
            name,
            value: self.inner.signer.sign(&claims),
            path,
            max_age: ttl,
        }
    }

    /// The claims of `grant` for `to`, with the name and lifetime of the cookie that
    /// carries them.
    fn claims(
        &self,
        to: &Guarded<'_>,
        grant: Grant,
        now: OffsetDateTime,
    ) -> (Claims, &'static str, Duration) {
        let config = &self.inner.config;
        let own = |kind, ttl| Claims {
            kind,
            page: to.subject(),
            expires: unix_after(now, ttl),
            account: None,
            fingerprint: None,
            session: None,
            nonce: None,
        };
        match grant {
            Grant::Unlock { fingerprint } => {
                let ttl = config.unlock_cookie_ttl;
                let claims = Claims {
                    fingerprint: Some(fingerprint),
                    ..own(TokenKind::Unlock, ttl)
                };
                (claims, UNLOCK_COOKIE, ttl)
            }
            Grant::Access(pass) => {
                let ttl = config.access_cookie_ttl;
                let claims = Claims {
                    kind: TokenKind::Access,
                    expires: unix_after(now, ttl),
                    ..pass
                };
                (claims, ACCESS_COOKIE, ttl)
            }
            Grant::View { nonce } => {
                let ttl = config.view_cookie_ttl;
                let claims = Claims {
                    nonce,
                    ..own(TokenKind::View, ttl)
                };
                (claims, VIEW_COOKIE, ttl)
            }
        }
    }

    /// Where an admitted visitor goes: back into the page, to the object, through the link.
    fn landing(&self, to: &Guarded<'_>) -> String {
        match to {
            Guarded::Page { site, next } => {
                format!("{}{}", self.base_path(site), encode_relative(next))
            }
            Guarded::Object(site) => self.object_path(site),
            Guarded::Link { code, .. } => format!("/s/{code}"),
        }
    }

    /// The password form of `to` (`wrong`: after a wrong password). A URL link's form posts
    /// its code; a page's and an object's, the owner's handle and the slug.
    fn password_prompt(&self, to: &Guarded<'_>, wrong: bool) -> PasswordPrompt {
        let (handle, slug, next, code) = match to {
            Guarded::Page { site, next } => (
                site.handle.as_str().to_owned(),
                site.page.slug.clone(),
                (*next).to_owned(),
                None,
            ),
            Guarded::Object(site) => (
                site.handle.as_str().to_owned(),
                site.object.slug.clone(),
                String::new(),
                None,
            ),
            Guarded::Link { code, .. } => (
                String::new(),
                String::new(),
                String::new(),
                Some((*code).to_owned()),
            ),
        };
        PasswordPrompt {
            title: to.title(),
            handle,
            slug,
            next,
            wrong,
            code,
        }
    }

    /// The dashboard's sign-in hand-off for `to`; a page's returns to where in it the
    /// visitor was.
    fn sign_in_location(&self, to: &Guarded<'_>) -> String {
        let base = self.inner.config.base_url.trim_end_matches('/');
        let page = &to.link().public_id;
        match to {
            Guarded::Page { next, .. } => {
                format!("{base}/visit?page={page}&next={}", encode_query(next))
            }
            Guarded::Object(_) | Guarded::Link { .. } => format!("{base}/visit?page={page}"),
        }
    }
}
