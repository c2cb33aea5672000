//! Conditional and range requests (RFC 9110 §13 and §14), decided from the request's header
//! values and the validators of the representation the server selected. Pure: no I/O and
//! no HTTP framework type, so every origin that serves stored bytes (the pages origin, the
//! object service) answers them alike.
//!
//! What is served: the preconditions in the order of RFC 9110 §13.2.2 (`If-Match`, then
//! `If-Unmodified-Since`, then `If-None-Match`, then `If-Modified-Since`), and one byte range
//! (`bytes=a-b`, `a-`, `-n`) of a `GET`, under `If-Range`. A request for several ranges is
//! answered with the whole representation (RFC 9110 §14.2 allows a server to ignore
//! `Range`), which keeps a many-ranges request from costing more than one `GET`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The conditional and range headers of a request, as received (`None`: absent).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Conditions<'a> {
    pub if_match: Option<&'a str>,
    pub if_none_match: Option<&'a str>,
    pub if_modified_since: Option<&'a str>,
    pub if_unmodified_since: Option<&'a str>,
    pub range: Option<&'a str>,
    pub if_range: Option<&'a str>,
}

impl Conditions<'_> {
    /// No conditional or range header: the request is answered in full.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Conditions::default()
    }
}

/// The validators of the selected representation.
#[derive(Debug, Clone, Copy)]
pub struct Validators<'a> {
    /// Its strong entity tag: the opaque part, without the quotes.
    pub etag: &'a str,
    /// Strong tags of the same content in another content coding. `If-Match` and
    /// `If-None-Match` accept them too (the content they name is unchanged); `If-Range`
    /// does not, since byte offsets differ between codings.
    pub same_content: &'a [&'a str],
    /// When it was last modified, in seconds since the Unix epoch (`None`: unknown, and
    /// the date preconditions are ignored).
    pub last_modified: Option<i64>,
}

/// The request's method, as far as preconditions care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    /// Any other method: a false `If-None-Match` is 412, not 304, and `Range` is ignored.
    Other,
}

/// What to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// 200 with the whole representation.
    Full,
    /// 304.
    NotModified,
    /// 412.
    PreconditionFailed,
    /// 206 with bytes `start..=end` (`Content-Range: bytes start-end/length`).
    Partial { start: u64, end: u64 },
    /// 416 (`Content-Range: bytes */length`).
    Unsatisfiable,
}

/// Evaluates `conditions` for a representation with `validators`. `length` is the byte
/// length of the selected representation when ranges of it are served (`None`: `Range` is
/// ignored, as for an encoded representation). The caller evaluates only what would
/// otherwise be a 2xx answer (RFC 9110 §13.2.1), after any access check.
#[must_use]
pub fn evaluate(
    conditions: &Conditions<'_>,
    validators: &Validators<'_>,
    method: Method,
    length: Option<u64>,
) -> Outcome {
    let current = |tag: &str| tag == validators.etag || validators.same_content.contains(&tag);
    let modified = validators.last_modified;
    if let Some(if_match) = conditions.if_match {
        if !tags_match(if_match, true, current) {
            return Outcome::PreconditionFailed;
        }
    } else if let (Some(since), Some(modified)) = (
        conditions.if_unmodified_since.and_then(parse_http_date),
        modified,
    ) && modified > since
    {
        return Outcome::PreconditionFailed;
    }
    let safe = matches!(method, Method::Get | Method::Head);
    if let Some(if_none_match) = conditions.if_none_match {
        if tags_match(if_none_match, false, current) {
            return if safe {
                Outcome::NotModified
            } else {
                Outcome::PreconditionFailed
            };
        }
    } else if safe
        && let (Some(since), Some(modified)) = (
            conditions.if_modified_since.and_then(parse_http_date),
            modified,
        )
        && modified <= since
    {
        return Outcome::NotModified;
    }
    match (method, conditions.range, length) {
        (Method::Get, Some(range), Some(length))
            if conditions
                .if_range
                .is_none_or(|v| if_range_holds(v, validators)) =>
        {
            byte_range(range, length)
        }
        _ => Outcome::Full,
    }
}

/// `If-Range`: an entity tag that is strongly the selected representation's, or the date it
/// was last modified, exactly (RFC 9110 §13.1.5). Anything else sends the whole.
fn if_range_holds(value: &str, validators: &Validators<'_>) -> bool {
    let value = value.trim();
    if value.starts_with('"') || value.starts_with("W/") {
        return match EntityTags::new(value).next() {
            Some(Ok(Tag::Strong(tag))) => tag == validators.etag,
            _ => false,
        };
    }
    parse_http_date(value).is_some_and(|date| validators.last_modified == Some(date))
}

/// The answer to `Range` over a representation of `length` bytes: one byte range is served;
/// several ranges, another unit, or a syntax error give the whole (RFC 9110 §14.2: such a
/// `Range` may be ignored).
fn byte_range(value: &str, length: u64) -> Outcome {
    let Some((unit, set)) = value.split_once('=') else {
        return Outcome::Full;
    };
    if !unit.trim().eq_ignore_ascii_case("bytes") || set.contains(',') || length == 0 {
        return Outcome::Full;
    }
    let Some((first, last)) = set.trim().split_once('-') else {
        return Outcome::Full;
    };
    let number = |text: &str| {
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<u64>().unwrap_or(u64::MAX))
    };
    match (first, last) {
        ("", suffix) => match number(suffix) {
            None => Outcome::Full,
            Some(0) => Outcome::Unsatisfiable,
            Some(n) => Outcome::Partial {
                start: length.saturating_sub(n),
                end: length - 1,
            },
        },
        (first, last) => {
            let Some(start) = number(first) else {
                return Outcome::Full;
            };
            let end = match last {
                "" => u64::MAX,
                last => match number(last) {
                    Some(end) if end >= start => end,
                    _ => return Outcome::Full,
                },
            };
            if start >= length {
                Outcome::Unsatisfiable
            } else {
                Outcome::Partial {
                    start,
                    end: end.min(length - 1),
                }
            }
        }
    }
}

/// Whether a list of entity tags (`If-Match`, `If-None-Match`) names a current tag: `*`
/// always does; `strong` excludes weak tags (RFC 9110 §8.8.3.2). A list that does not parse
/// names nothing past the error.
fn tags_match(list: &str, strong: bool, current: impl Fn(&str) -> bool) -> bool {
    if list.trim() == "*" {
        return true;
    }
    EntityTags::new(list)
        .map_while(Result::ok)
        .any(|tag| match tag {
            Tag::Strong(t) => current(t),
            Tag::Weak(t) => !strong && current(t),
        })
}

enum Tag<'a> {
    Strong(&'a str),
    Weak(&'a str),
}

/// The entity tags of a comma-separated list, each `"opaque"` or `W/"opaque"` (the opaque
/// part may hold commas, so the list is read tag by tag, not split).
struct EntityTags<'a> {
    rest: &'a str,
}

impl<'a> EntityTags<'a> {
    fn new(list: &'a str) -> Self {
        Self { rest: list }
    }
}

impl<'a> Iterator for EntityTags<'a> {
    type Item = Result<Tag<'a>, ()>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return None;
        }
        let (weak, quoted) = match rest.strip_prefix("W/") {
            Some(quoted) => (true, quoted),
            None => (false, rest),
        };
        let Some(opaque_and_rest) = quoted.strip_prefix('"') else {
            self.rest = "";
            return Some(Err(()));
        };
        let Some(close) = opaque_and_rest.find('"') else {
            self.rest = "";
            return Some(Err(()));
        };
        let opaque = &opaque_and_rest[..close];
        self.rest = &opaque_and_rest[close + 1..];
        Some(Ok(if weak {
            Tag::Weak(opaque)
        } else {
            Tag::Strong(opaque)
        }))
    }
}

/// An HTTP-date (IMF-fixdate, or the obsolete RFC 850 and asctime forms) as seconds since the
/// Unix epoch; `None` when it is not one (a list of dates is not).
#[must_use]
pub fn parse_http_date(value: &str) -> Option<i64> {
    let time = httpdate::parse_http_date(value.trim()).ok()?;
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).ok(),
        Err(before) => i64::try_from(before.duration().as_secs()).ok().map(|s| -s),
    }
}

/// `secs` since the Unix epoch as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), for
/// `Last-Modified`; times before the epoch are given as the epoch.
#[must_use]
pub fn http_date(secs: i64) -> String {
    let after = Duration::from_secs(u64::try_from(secs).unwrap_or(0));
    httpdate::fmt_http_date(SystemTime::UNIX_EPOCH + after)
}

#[cfg(test)]
mod tests;
