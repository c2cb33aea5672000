//! The answer with a file a visit may see: its preconditions and `Range` (304, 412, 416,
//! 206: `quire_kernel::conditional`), the view it counts, and its body in the coding asked
//! for.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use quire_kernel::InfraError;
use quire_kernel::conditional::{Method, Outcome, Validators, evaluate};
use time::OffsetDateTime;

use super::ServingService;
use super::guarded::{Grant, Guarded};
use crate::answer::{Answer, ByteRange, FileAnswer, Visit};
use crate::cache::{CachedFile, FileSlot, Site};
use crate::policy::{cache_rule, etag_value, guarded};

/// The tag of the file's other coding, which `If-Match` and `If-None-Match` also take: made
/// only for a conditional request.
fn other_coding(base: &str, gzip: bool, varies: bool) -> Option<String> {
    if gzip {
        Some(base.to_owned())
    } else {
        varies.then(|| format!("{base}-gz"))
    }
}

/// The bytes of `range` of a body that holds all of it (the manifest's length is the
/// body's; a shorter body gives what it has).
fn body_range(identity: &Bytes, range: ByteRange) -> Bytes {
    let len = identity.len();
    let start = usize::try_from(range.start).unwrap_or(len).min(len);
    let end = usize::try_from(range.end)
        .unwrap_or(len)
        .saturating_add(1)
        .min(len);
    identity.slice(start..end.max(start))
}

impl ServingService {
    /// Answers `visit` with the file of `slot` once its access is settled: `found` is false
    /// when it stands for a missing file (the page's `404.html`), and only a `document`
    /// counts a view.
    pub(super) async fn file_answer(
        &self,
        site: &Site,
        slot: &FileSlot,
        found: bool,
        document: bool,
        visit: &Visit<'_>,
        now: OffsetDateTime,
    ) -> Result<Answer, InfraError> {
        let entry = &slot.entry;
        let cache = cache_rule(&site.link);
        let etag_base = etag_value(&entry.sha256);
        let last_modified = site.last_modified.1.clone();
        // Small files are in memory with their gzip variant, which a 304 must know of too
        // (its ETag and Vary are the 200's); large ones have none and are read only to be sent.
        let small = entry.size_bytes <= self.inner.config.max_cached_file;
        let mut file = if small {
            Some(self.file(site.page.id, slot).await?)
        } else {
            None
        };
        let varies = file.as_ref().is_some_and(|f| f.gzip.is_some());
        // Ranges are of the identity bytes: a GET with `Range` is answered in identity,
        // whatever it accepts (`docs/decisions/http-semantics-pages-origin.md`).
        let ranged = found && !visit.head && visit.conditions.range.is_some();
        let gzip = varies && visit.accepts_gzip && !ranged;
        let etag = if gzip {
            format!("\"{etag_base}-gz\"")
        } else {
            format!("\"{etag_base}\"")
        };
        let mut range = None;
        if found && !visit.conditions.is_empty() {
            let (selected, other) = (
                &etag[1..etag.len() - 1],
                other_coding(etag_base, gzip, varies),
            );
            let other = other.as_deref();
            let same_content = other.as_slice();
            let outcome = evaluate(
                &visit.conditions,
                &Validators {
                    etag: selected,
                    same_content,
                    last_modified: Some(site.last_modified.0),
                },
                if visit.head {
                    Method::Head
                } else {
                    Method::Get
                },
                (!gzip).then_some(entry.size_bytes),
            );
            match outcome {
                Outcome::Full => {}
                Outcome::NotModified => {
                    return Ok(Answer::NotModified {
                        etag,
                        cache,
                        varies,
                        last_modified,
                    });
                }
                Outcome::PreconditionFailed => return Ok(Answer::PreconditionFailed),
                Outcome::Unsatisfiable => {
                    return Ok(Answer::RangeNotSatisfiable {
                        length: entry.size_bytes,
                    });
                }
                Outcome::Partial { start, end } => {
                    range = Some(ByteRange {
                        start,
                        end,
                        length: entry.size_bytes,
                    });
                }
            }
        }
        // A range of a large file reads only its bytes (a player seeking through a video
        // asks for many); a small file is whole in memory already.
        let (file, sliced) = match (file.take(), range) {
            (Some(file), _) => (file, false),
            (None, Some(r)) => {
                let part = self
                    .inner
                    .load_range(site.page.id, &entry.sha256, r.start..r.end + 1)
                    .await?;
                let part = Arc::new(CachedFile {
                    identity: part,
                    gzip: None,
                });
                (part, true)
            }
            (None, None) => (self.file(site.page.id, slot).await?, false),
        };
        let mut cookie = None;
        if document && found && !visit.head {
            if let Some(budget) = site.link.policy.max_views {
                let left = budget.saturating_sub(site.link.view_count);
                if !self
                    .inner
                    .leases
                    .take(
                        self.inner.ports.links.as_ref(),
                        site.link.id,
                        budget,
                        left,
                        now,
                    )
                    .await?
                {
                    site.spent.store(true, Ordering::Relaxed);
                    return Ok(Answer::Gone);
                }
                // `left` is at least what the budget has (counts only grow): the last view
                // is taken, so the next visitor is told at once.
                if left <= 1 {
                    site.spent.store(true, Ordering::Relaxed);
                }
                let to = Guarded::Page { site, next: "" };
                cookie = Some(self.visitor_cookie(&to, Grant::View { nonce: None }, now));
            } else {
                self.inner.views.add(site.link.id);
            }
        }
        let body = match (&file.gzip, range) {
            (Some(gz), _) if gzip => gz.clone(),
            (_, Some(r)) if !sliced => body_range(&file.identity, r),
            _ => file.identity.clone(),
        };
        Ok(Answer::File(Box::new(FileAnswer {
            found,
            body,
            gzip,
            varies,
            content_type: entry.content_type.clone(),
            etag,
            last_modified,
            range,
            cache,
            guarded: guarded(&site.link),
            cookie,
        })))
    }
}
