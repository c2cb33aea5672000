//! An object at `/{slug}` of its owner's origin: the same expiry, gate and exact budget as
//! a page, then its bytes streamed from storage, whole or the range asked for.
//!
//! One download is one view: a `200`, or a `206` that starts at byte 0 (a player or a
//! download manager asks for the later ranges of the same download, which are free). A
//! budgeted object shows a browser the continue page first, and previews never spend one.

use std::sync::Arc;

use quire_kernel::conditional::{Method, Outcome, Validators, evaluate, http_date};
use quire_kernel::{App, Handle, InfraError};

use quire_links::Access;

use super::ServingService;
use crate::answer::{Answer, ByteRange, ContinuePrompt, ObjectAnswer, SharedStream, Visit};
use crate::policy::Gate;
use crate::policy::{cache_rule, expired, guarded, with_query};

impl ServingService {
    pub(super) async fn object_visit(
        &self,
        handle: &str,
        slug: &str,
        visit: &Visit<'_>,
    ) -> Result<Answer, InfraError> {
        let ports = &self.inner.ports;
        // Nothing else can be an object (`/favicon.ico` costs no lookup).
        if !quire_pages::validate::is_slug(slug) {
            return Ok(Answer::NotFound);
        }
        let Ok(handle) = Handle::parse(handle) else {
            return Ok(Answer::NotFound);
        };
        let Some(owner) = ports.accounts.account_by_handle(&handle).await? else {
            return Ok(Answer::NotFound);
        };
        let Some(object) = ports.objects.object_by_slug(owner, slug).await? else {
            return Ok(Answer::NotFound);
        };
        let Some(link) = ports.links.link(object.link_id()).await? else {
            return Ok(Answer::NotFound);
        };
        if object.archived_at.is_some() || link.archived_at.is_some() {
            return Ok(Answer::NotFound);
        }
        let now = ports.clock.now();
        if expired(&link, now)
            || link
                .policy
                .max_views
                .is_some_and(|max| link.view_count >= max)
        {
            return Ok(Answer::Gone);
        }
        let apps = [App::Serve, App::Page];
        match self
            .gate(&link, object.id.0, &apps, &visit.visitor, now)
            .await?
        {
            Gate::Open => {}
            // The password form and the sign-in pass know pages and URL links only: an
            // object that is not public opens to its owner's keys and agents alone.
            Gate::Password | Gate::SignIn | Gate::Forbidden(_) => return Ok(Answer::NotFound),
        }
        let etag = format!("\"{}\"", object.sha256);
        let modified = object.updated_at.unix_timestamp();
        let last_modified: Arc<str> = http_date(modified).into();
        let cache = cache_rule(&link);
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
        let starts_a_download = !visit.head && range.is_none_or(|r| r.start == 0);
        if starts_a_download {
            if let Some(budget) = link.policy.max_views {
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
            } else {
                self.inner.views.add(link.id);
            }
        }
        let (length, wanted) = match range {
            Some(r) => (r.end - r.start + 1, Some(r.start..r.end + 1)),
            None => (object.size_bytes, None),
        };
        let Some(bytes) = ports
            .object_bytes
            .read(object.id, &object.blob, wanted)
            .await?
        else {
            return Ok(Answer::NotFound);
        };
        let active = object.is_active_content();
        let disposition = if active || link.policy.access != Access::Public {
            quire_objects::disposition::attachment(&object.filename)
        } else {
            quire_objects::disposition::inline(&object.filename)
        };
        Ok(Answer::Object(Box::new(ObjectAnswer {
            content_type: object.content_type,
            disposition,
            active,
            etag,
            last_modified,
            range,
            length,
            cache,
            guarded: guarded(&link),
            body: SharedStream::new(bytes),
        })))
    }
}
