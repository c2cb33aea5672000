//! An object at `/{slug}` of its owner's origin: the same expiry, gate and exact budget as
//! a page, then its bytes streamed from storage, whole or the range asked for.
//!
//! One download is one view: a `200`, or a `206` that starts at byte 0. A budgeted
//! object's counted download sets the view cookie, and the later ranges of that download
//! (a player seeking, a download manager's other connections) are free with it while it
//! has their bytes left: one file length in all, the counted answer's included
//! (`crate::view_bytes`); a later range without it, or past it, or with a cookie issued when
//! there was no place to count it (one without a nonce), is a download of its own.
//! A budgeted object shows a browser the continue page first, and previews never spend
//! one. Its password form and sign-in pass are the pages' (`admission`), pointed at the
//! object.

use std::sync::Arc;

use quire_kernel::conditional::{Method, Outcome, Validators, evaluate, http_date};
use quire_kernel::{Handle, InfraError};
use quire_links::{Access, Link};
use quire_objects::Object;

use super::ServingService;
use super::guarded::{Grant, Guarded};
use crate::answer::{
    Answer, ByteRange, ContinuePrompt, ObjectAnswer, ObjectBody, SharedStream, Visit,
};
use crate::policy::{cache_rule, expired, guarded, unix_after, with_query};
use crate::token::TokenKind;
use crate::view_bytes::{Allowance, metered};

/// An object found at `handle/slug` on its owner's origin, with its link.
pub(super) struct ObjectSite {
    pub(super) handle: Handle,
    pub(super) object: Object,
    pub(super) link: Link,
}

impl ServingService {
    /// The object at `handle/slug` and its link, unless either is missing or archived.
    pub(super) async fn object_site(
        &self,
        handle: &str,
        slug: &str,
    ) -> Result<Option<ObjectSite>, InfraError> {
        let ports = &self.inner.ports;
        // Nothing else can be an object (`/favicon.ico` costs no lookup).
        if !quire_pages::validate::is_slug(slug) {
            return Ok(None);
        }
        let Ok(handle) = Handle::parse(handle) else {
            return Ok(None);
        };
        let Some(owner) = ports.accounts.account_by_handle(&handle).await? else {
            return Ok(None);
        };
        let Some(object) = ports.objects.object_by_slug(owner, slug).await? else {
            return Ok(None);
        };
        let Some(link) = ports.links.link(object.link_id()).await? else {
            return Ok(None);
        };
        if object.archived_at.is_some() || link.archived_at.is_some() {
            return Ok(None);
        }
        Ok(Some(ObjectSite {
            handle,
            object,
            link,
        }))
    }

    /// The object's path on its owner's origin (no trailing slash: it is a file).
    pub(super) fn object_path(&self, site: &ObjectSite) -> String {
        let path = self
            .inner
            .config
            .origins
            .base_path(site.handle.as_str(), &site.object.slug);
        path.strip_suffix('/').unwrap_or(&path).to_owned()
    }

    /// The object's bytes, all or `range` of them: its file on local disk (the answer is
    /// sent with `sendfile`), else storage's stream; `None` when they are missing. Bytes
    /// sent under a view cookie's `allowance` are counted as they go, so they stream.
    async fn object_body(
        &self,
        object: &Object,
        range: Option<std::ops::Range<u64>>,
        allowance: Option<Allowance>,
    ) -> Result<Option<ObjectBody>, InfraError> {
        let bytes = &self.inner.ports.object_bytes;
        let local = bytes.local_file(object.id, &object.blob);
        let Some(path) = local.filter(|_| allowance.is_none()) else {
            let stream = bytes.read(object.id, &object.blob, range).await?;
            return Ok(stream.map(|stream| {
                ObjectBody::Stream(match allowance {
                    Some(allowance) => metered(stream, allowance),
                    None => stream,
                })
            }));
        };
        // Opened on the worker, as nginx opens what it sends: a lookup in the directory
        // cache, not worth a thread hop.
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(InfraError::new(format!("open an object's file: {e}"))),
        };
        // A file shorter than its record says is no object to send (the connection would
        // cut the answer short).
        let length = file.metadata().map(|m| m.len()).unwrap_or(0);
        if length < object.size_bytes {
            return Ok(None);
        }
        let offset = range.map_or(0, |r| r.start);
        Ok(Some(ObjectBody::File { file, offset }))
    }

    pub(super) async fn object_visit(
        &self,
        handle: &str,
        slug: &str,
        visit: &Visit<'_>,
    ) -> Result<Answer, InfraError> {
        let ports = &self.inner.ports;
        let Some(site) = self.object_site(handle, slug).await? else {
            return Ok(Answer::NotFound);
        };
        let (object, link) = (&site.object, &site.link);
        let now = ports.clock.now();
        if expired(link, now) {
            return Ok(Answer::Gone);
        }
        let subject = object.id.0;
        // The visitor's valid view cookie of the object, with its claims.
        let held = || {
            visit.visitor.view.iter().find_map(|t| {
                self.inner
                    .signer
                    .check(t, TokenKind::View, subject, now)
                    .map(|claims| (*t, claims))
            })
        };
        let spent = link
            .policy
            .max_views
            .is_some_and(|max| link.view_count >= max);
        if spent && held().is_none() {
            return Ok(Answer::Gone);
        }
        if let Some(refusal) = self
            .admit(&Guarded::Object(&site), &visit.visitor, now)
            .await?
        {
            return Ok(refusal);
        }
        let etag = format!("\"{}\"", object.sha256);
        let modified = object.updated_at.unix_timestamp();
        let last_modified: Arc<str> = http_date(modified).into();
        let cache = cache_rule(link);
        let mut range = None;
        if !visit.conditions.is_empty() {
            let outcome = evaluate(
                &visit.conditions,
                &Validators {
                    etag: &object.sha256,
                    same_content: &[],
                    last_modified: Some(modified),
                },
                if visit.head {
                    Method::Head
                } else {
                    Method::Get
                },
                Some(object.size_bytes),
            );
            match outcome {
                Outcome::Full => {}
                Outcome::NotModified => {
                    return Ok(Answer::NotModified {
                        etag,
                        cache,
                        varies: false,
                        last_modified,
                    });
                }
                Outcome::PreconditionFailed => return Ok(Answer::PreconditionFailed),
                Outcome::Unsatisfiable => {
                    return Ok(Answer::RangeNotSatisfiable {
                        length: object.size_bytes,
                    });
                }
                Outcome::Partial { start, end } => {
                    range = Some(ByteRange {
                        start,
                        end,
                        length: object.size_bytes,
                    });
                }
            }
        }
        // A budgeted object's later range is free only to the download that was counted,
        // while its cookie has the range's bytes left.
        let budget = link.policy.max_views;
        let later = range.filter(|r| r.start > 0);
        let mut allowance = None;
        let counts = match (later, budget) {
            _ if visit.head => false,
            (None, _) => true,
            (Some(_), None) => false,
            (Some(r), Some(_)) => {
                // A cookie without a nonce was issued with no count of its own.
                let counted = held().filter(|(_, claims)| claims.nonce.is_some());
                allowance = counted.and_then(|(token, claims)| {
                    let wanted = r.end - r.start + 1;
                    let (now, size) = (now.unix_timestamp(), object.size_bytes);
                    self.inner.view_bytes.later_range(
                        token,
                        object.account_id,
                        size,
                        claims.expires,
                        now,
                        wanted,
                    )
                });
                allowance.is_none()
            }
        };
        let mut cookie = None;
        if counts {
            if let Some(budget) = budget {
                if visit.asker.bot() {
                    self.inner.notes.bot(link.id);
                }
                if visit.asker.holds_back() {
                    return Ok(Answer::Continue(ContinuePrompt {
                        title: Some(object.title.clone()),
                        host: None,
                        action: with_query(visit.path.to_owned(), visit.query),
                    }));
                }
                let left = budget.saturating_sub(link.view_count);
                if !self
                    .inner
                    .leases
                    .take(ports.links.as_ref(), link.id, budget, left, now)
                    .await?
                {
                    return Ok(Answer::Gone);
                }
                let expires = unix_after(now, self.inner.config.view_cookie_ttl);
                let to = Guarded::Object(&site);
                let view = |nonce| self.visitor_cookie(&to, Grant::View { nonce }, now);
                // Each download's cookie its own, so each has a count of its own.
                let nonce = quire_kernel::secret::random_url_token()[..16].to_owned();
                let mut issued = view(Some(nonce));
                allowance = self.inner.view_bytes.issued(
                    &issued.value,
                    object.account_id,
                    object.size_bytes,
                    expires,
                    now.unix_timestamp(),
                );
                if allowance.is_none() {
                    // No place to count it: this download goes whole, and its cookie frees
                    // no later range, here or on another replica, even once places free up.
                    issued = view(None);
                }
                cookie = Some(issued);
            } else {
                self.inner.views.add(link.id);
            }
        }
        let (length, wanted) = match range {
            Some(r) => (r.end - r.start + 1, Some(r.start..r.end + 1)),
            None => (object.size_bytes, None),
        };
        let Some(body) = self.object_body(object, wanted, allowance).await? else {
            return Ok(Answer::NotFound);
        };
        let active = !object.is_inert();
        let disposition = if active || link.policy.access != Access::Public {
            quire_objects::disposition::attachment(&object.filename)
        } else {
            quire_objects::disposition::inline(&object.filename)
        };
        Ok(Answer::Object(Box::new(ObjectAnswer {
            content_type: object.content_type.clone(),
            disposition,
            active,
            etag,
            last_modified,
            range,
            length,
            cache,
            guarded: guarded(link),
            cookie,
            body: SharedStream::new(body),
        })))
    }
}
