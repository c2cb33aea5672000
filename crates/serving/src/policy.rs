//! The pure visitor policy: which pages are guarded or expired, what may be cached and
//! for how long, who an allow list admits, which file a path resolves to, and what a
//! cookie's name says. No I/O and no cache: every function here decides from its arguments.

use std::time::Duration;

use quire_kernel::secret::sha256_hex;
use quire_kernel::{AccountId, Email};
use quire_links::{Access, AllowEntry, Link};
use quire_pages::FileEntry;
use time::OffsetDateTime;

use crate::answer::CacheRule;
use crate::cache::{FileSlot, Site};
use crate::service::{ACCESS_COOKIE, UNLOCK_COOKIE, VIEW_COOKIE};
use crate::token::TokenKind;

/// The kind of a visitor cookie by its name (`quire_unlock`, `quire_unlock_{slug}`,
/// `__Host-quire_unlock_{slug}`), or `None` for a cookie that is not the pages origin's.
#[must_use]
pub fn cookie_kind(name: &str) -> Option<TokenKind> {
    let name = name.strip_prefix("__Host-").unwrap_or(name);
    [
        (UNLOCK_COOKIE, TokenKind::Unlock),
        (ACCESS_COOKIE, TokenKind::Access),
        (VIEW_COOKIE, TokenKind::View),
    ]
    .into_iter()
    .find_map(|(prefix, kind)| {
        let rest = name.strip_prefix(prefix)?;
        (rest.is_empty() || rest.starts_with('_')).then_some(kind)
    })
}

pub(crate) fn guarded(link: &Link) -> bool {
    link.policy.access != Access::Public || link.policy.max_views.is_some()
}

pub(crate) fn with_query(location: String, query: &str) -> String {
    if query.is_empty() {
        location
    } else {
        format!("{location}?{query}")
    }
}

pub(crate) fn expired(link: &Link, now: OffsetDateTime) -> bool {
    link.policy.expires_at.is_some_and(|t| now >= t)
}

pub(crate) fn cache_rule(link: &Link) -> CacheRule {
    if link.policy.access == Access::Public
        && link.policy.max_views.is_none()
        && link.policy.expires_at.is_none()
    {
        CacheRule::Revalidate
    } else {
        CacheRule::NoStore
    }
}

pub(crate) fn is_document(entry: &FileEntry) -> bool {
    let essence = entry.content_type.split(';').next().unwrap_or("").trim();
    essence == "text/html" || essence == "application/xhtml+xml"
}

/// A fingerprint of the password hash: the hash is salted, so any password change (even
/// to the same password) gives a new fingerprint and voids the cookies of the old one.
pub(crate) fn fingerprint(link: &Link) -> Option<String> {
    link.password_hash
        .as_deref()
        .map(|h| sha256_hex(h.as_bytes())[..32].to_owned())
}

/// Whether a signed-in account may open a private or allow-list page.
pub(crate) fn admits(link: &Link, account: AccountId, email: Option<&Email>) -> bool {
    if account == link.account_id {
        return true;
    }
    link.policy.access == Access::AllowList
        && link.policy.allow.iter().any(|entry| match entry {
            AllowEntry::Account(a) => *a == account,
            AllowEntry::Email(e) => Some(e) == email,
        })
}

pub(crate) fn etag_value(sha: &str) -> &str {
    &sha[..sha.len().min(32)]
}

pub(crate) enum Resolved<'a> {
    File(&'a FileSlot),
    /// `dir` without its slash names a directory with an `index.html`.
    Directory(String),
    Missing,
}

pub(crate) fn resolve<'a>(site: &'a Site, rest: &str) -> Resolved<'a> {
    let wanted: std::borrow::Cow<'_, str> = if rest.is_empty() {
        site.page.entrypoint.as_str().into()
    } else if rest.ends_with('/') {
        format!("{rest}index.html").into()
    } else {
        rest.into()
    };
    if let Some(slot) = site.files.get(wanted.as_ref()) {
        return Resolved::File(slot);
    }
    if !rest.is_empty()
        && !rest.ends_with('/')
        && site.files.contains_key(&format!("{rest}/index.html"))
    {
        return Resolved::Directory(format!("{rest}/"));
    }
    Resolved::Missing
}

pub(crate) enum Gate {
    Open,
    Password,
    SignIn,
    Forbidden(Option<String>),
}

pub(crate) fn unix_after(now: OffsetDateTime, ttl: Duration) -> i64 {
    now.unix_timestamp()
        .saturating_add(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX))
}
