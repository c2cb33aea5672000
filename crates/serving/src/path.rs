//! Visitor paths: the raw (percent-encoded) request path is split on `/` first and each
//! segment decoded afterwards, so an encoded slash, dot segment or backslash can never
//! climb out of a page. A page's files are a manifest lookup, never a filesystem path, and
//! anything that does not parse is simply not found.

use std::borrow::Cow;

use quire_kernel::Handle;

/// `/{handle}/{slug}` and what follows it, borrowed from the request where nothing needed
/// decoding (the common case: no allocation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagePath<'a> {
    pub handle: &'a str,
    pub slug: &'a str,
    /// `None` for `/{handle}/{slug}` (no trailing slash); otherwise the decoded path inside
    /// the page, `""` for the root, ending in `/` for a directory.
    pub rest: Option<Cow<'a, str>>,
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Whether a decoded segment is a plain file or directory name.
fn safe(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && !s.contains(['/', '\\'])
        && !s.chars().any(char::is_control)
}

/// Decodes one segment; `None` when it is malformed or could mean anything but a plain
/// file or directory name.
fn segment(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = hex(*bytes.get(i + 1)?)?;
            let lo = hex(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let s = String::from_utf8(out).ok()?;
    safe(&s).then_some(s)
}

/// Parses a raw request path of the pages origin.
///
/// `None` for anything that is not `/{handle}/{slug}[/{safe path}]`: a bad handle or slug
/// (these are never percent-encoded: their characters need no escaping), an empty, `.` or
/// `..` segment (encoded or not), an encoded `/`, a backslash, a control character or
/// invalid UTF-8.
#[must_use]
pub fn parse_page_path(raw: &str) -> Option<PagePath<'_>> {
    let raw = raw.strip_prefix('/')?;
    let mut parts = raw.splitn(3, '/');
    let handle = parts.next().filter(|h| Handle::is_valid(h))?;
    let slug = parts.next().filter(|s| quire_pages::validate::is_slug(s))?;
    let rest = match parts.next() {
        None => None,
        Some(rest) => Some(parse_relative(rest)?),
    };
    Some(PagePath { handle, slug, rest })
}

/// Parses a raw request path on an owner's own origin, `/{slug}[/{safe path}]`, for the
/// owner named by the host; the same rules as [`parse_page_path`].
#[must_use]
pub fn parse_owner_path<'a>(owner: &'a str, raw: &'a str) -> Option<PagePath<'a>> {
    let raw = raw.strip_prefix('/')?;
    let (slug, rest) = match raw.split_once('/') {
        Some((slug, rest)) => (slug, Some(parse_relative(rest)?)),
        None => (raw, None),
    };
    if !Handle::is_valid(owner) || !quire_pages::validate::is_slug(slug) {
        return None;
    }
    Some(PagePath {
        handle: owner,
        slug,
        rest,
    })
}

/// Decodes a path inside a page (`""`, `a/b.css`, `docs/`); `None` when unsafe.
#[must_use]
pub fn parse_relative(raw: &str) -> Option<Cow<'_, str>> {
    if raw.len() > 3 * 1024 {
        return None;
    }
    if !raw.contains('%') {
        let body = raw.strip_suffix('/').unwrap_or(raw);
        let plain = raw.len() <= 1024 && (raw.is_empty() || body.split('/').all(safe));
        return plain.then_some(Cow::Borrowed(raw));
    }
    let (body, dir) = match raw.strip_suffix('/') {
        Some(body) => (body, true),
        None => (raw, false),
    };
    let mut out = String::with_capacity(raw.len());
    for (i, part) in body.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(&segment(part)?);
    }
    if dir {
        out.push('/');
    }
    (out.len() <= 1024).then_some(Cow::Owned(out))
}

/// Percent-encodes everything but unreserved characters and those in `keep`.
fn percent_encode(value: &str, keep: &[u8]) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || keep.contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Percent-encodes a decoded page path for a `Location` header (segments keep their `/`).
#[must_use]
pub fn encode_relative(path: &str) -> String {
    percent_encode(path, b"/")
}

/// Percent-encodes a value for a query string.
#[must_use]
pub fn encode_query(value: &str) -> String {
    percent_encode(value, b"")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn rest(raw: &str) -> Option<Option<String>> {
        parse_page_path(raw).map(|p| p.rest.map(Cow::into_owned))
    }

    #[test]
    fn splits_handle_slug_and_rest() {
        let p = parse_page_path("/ann/site/css/a%20b.css").unwrap();
        assert_eq!(p.handle, "ann");
        assert_eq!(p.slug, "site");
        assert_eq!(p.rest.as_deref(), Some("css/a b.css"));
        assert_eq!(rest("/ann/site"), Some(None));
        assert_eq!(rest("/ann/site/"), Some(Some(String::new())));
        assert_eq!(rest("/ann/site/docs/"), Some(Some("docs/".into())));
        assert!(matches!(
            parse_page_path("/ann/site/docs/a.css").unwrap().rest,
            Some(Cow::Borrowed("docs/a.css"))
        ));
    }

    #[test]
    fn refuses_every_way_out_of_the_page() {
        for raw in [
            "/ann/site/../other/index.html",
            "/ann/site/%2e%2e/other/index.html",
            "/ann/site/%2E%2E/x",
            "/ann/site/.%2e/x",
            "/ann/site/a/%2e/b",
            "/ann/site/..%2fother%2findex.html",
            "/ann/site/%2fetc%2fpasswd",
            "/ann/site/..%5cother",
            "/ann/site/a\\b",
            "/ann/site//etc/passwd",
            "/ann/site/a//b",
            "/ann/site/%00",
            "/ann/site/%ff",
            "/ann/site/%zz",
            "/ann/site/%2",
            "/ann/%2e%2e/index.html",
            "/%2e%2e/site/",
            "ann/site/",
            "/ann/Site/",
            "/a/site/",
            "/%61nn/site/",
            "/ann/site/a/./b",
            "/ann/site/./",
            "/ann/site/a/../b",
            "/ann/site/..",
            "/ann/site//",
            "/ann/site/a\u{7f}b",
        ] {
            assert_eq!(parse_page_path(raw), None, "{raw}");
        }
    }

    #[test]
    fn relative_paths_round_trip_through_encoding() {
        let decoded = parse_relative("docs/a%20b%3F.html").unwrap();
        assert_eq!(decoded, "docs/a b?.html");
        assert_eq!(encode_relative(&decoded), "docs/a%20b%3F.html");
        assert_eq!(parse_relative(&encode_relative(&decoded)).unwrap(), decoded);
    }
}
