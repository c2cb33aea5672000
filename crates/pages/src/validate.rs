//! Validation of everything a page request carries. Each function names the field it
//! refuses in its message, so the HTTP layer can pass it on unchanged.

/// Longest safe path, in characters (as the OpenAPI document's `maxLength` counts).
pub const MAX_PATH_CHARS: usize = 1024;

pub use quire_links::rules::{
    Invalid, MAX_ALLOW_ENTRIES, MAX_PAGE_PASSWORD_CHARS, MIN_PAGE_PASSWORD_CHARS, alias,
    expires_at, max_views, page_password,
};

/// Longest page slug.
pub const MAX_SLUG_LEN: usize = 64;

/// Which limit a request exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    Files,
    FileSize,
    PageSize,
}

impl LimitKind {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::Files => "files_per_page",
            LimitKind::FileSize => "file_size",
            LimitKind::PageSize => "page_size",
        }
    }
}

/// Why a batch of files was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilesError {
    #[error("{0}")]
    Invalid(Invalid),
    #[error("{message}")]
    TooLarge { limit: LimitKind, message: String },
}

/// # Errors
/// When the title is empty, blank or over 200 characters.
pub fn title(raw: &str) -> Result<String, Invalid> {
    let n = raw.chars().count();
    if raw.trim().is_empty() || n > 200 {
        return Err(Invalid("title must be 1-200 characters".into()));
    }
    if quire_kernel::text::has_control(raw) {
        return Err(Invalid("title must not contain control characters".into()));
    }
    Ok(raw.to_owned())
}

/// Whether `raw` may be the slug of a stored page (1-64 of `a-z 0-9 -`): what the pages
/// origin accepts in a path. Pages published before slugs had to start and end with a
/// letter or digit keep being served.
#[must_use]
pub fn is_slug(raw: &str) -> bool {
    !raw.is_empty()
        && raw.len() <= MAX_SLUG_LEN
        && raw
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// # Errors
/// When the slug is not 1-64 of `a-z 0-9 -` starting and ending with a letter or digit: a
/// new slug never collides with the origin's own `/-/` paths.
pub fn slug(raw: &str) -> Result<String, Invalid> {
    let alnum = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if !is_slug(raw) || !alnum(raw.as_bytes().first()) || !alnum(raw.as_bytes().last()) {
        return Err(Invalid(
            "slug must be 1-64 of a-z, 0-9 and -, starting and ending with a letter or digit"
                .into(),
        ));
    }
    Ok(raw.to_owned())
}

/// A slug made from a title: lower case, runs of anything else as one `-`, trimmed, at most
/// 64 bytes; `page` when nothing is left.
#[must_use]
pub fn slug_from_title(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut s = out.trim_matches('-').to_owned();
    s.truncate(MAX_SLUG_LEN);
    let s = s.trim_end_matches('-').to_owned();
    if s.is_empty() { "page".into() } else { s }
}

/// The `n`th candidate for a derived slug: `base`, then `base-2`, `base-3`, … within 64 bytes.
#[must_use]
pub fn slug_candidate(base: &str, n: u32) -> String {
    if n <= 1 {
        return base.to_owned();
    }
    let suffix = format!("-{n}");
    let mut stem = base.to_owned();
    stem.truncate(MAX_SLUG_LEN - suffix.len());
    format!("{}{suffix}", stem.trim_end_matches('-'))
}

pub use quire_kernel::text::quoted;

/// A safe path: relative, `/`-separated, no empty, `.` or `..` segment, no backslash, NUL or
/// other control character, at most 1024 characters.
///
/// # Errors
/// Naming the path and the rule it breaks.
pub fn path(raw: &str) -> Result<(), Invalid> {
    let bad = |why: &str| Err(Invalid(format!("unsafe file path {}: {why}", quoted(raw))));
    if raw.is_empty() {
        return bad("empty");
    }
    if raw.chars().count() > MAX_PATH_CHARS {
        return bad("longer than 1024 characters");
    }
    if raw.starts_with('/') {
        return bad("absolute");
    }
    if raw.contains('\\') {
        return bad("backslash");
    }
    if raw.chars().any(char::is_control) {
        return bad("control character");
    }
    for segment in raw.split('/') {
        match segment {
            "" => return bad("empty segment"),
            "." | ".." => return bad("dot segment"),
            _ => {}
        }
    }
    Ok(())
}

/// Content type from the extension (`application/octet-stream` when unknown), with
/// `charset=utf-8` on text types.
#[must_use]
pub fn content_type(path: &str) -> String {
    let mime = mime_guess::from_path(path).first_or_octet_stream();
    let essence = mime.essence_str();
    if mime.type_() == mime_guess::mime::TEXT
        || matches!(
            essence,
            "application/javascript" | "application/json" | "image/svg+xml"
        )
    {
        format!("{essence}; charset=utf-8")
    } else {
        essence.to_owned()
    }
}

pub use quire_kernel::secret::sha256_hex;

/// The batch of files, checked whole (in `batch.rs`).
pub use crate::batch::files;

#[cfg(test)]
mod tests {
    use super::*;
    use time::OffsetDateTime;

    #[test]
    fn path_traversal_and_other_unsafe_paths_are_refused() {
        let long = "a/".repeat(600);
        for bad in [
            "../x",
            "a/../../b",
            "/etc/passwd",
            "a\\b",
            "a//b",
            ".",
            "./a",
            "a/.",
            "..",
            "a\0b",
            "a\nb",
            "a/\u{7f}",
            "",
            "a/",
            long.as_str(),
        ] {
            assert!(path(bad).is_err(), "{bad:?} accepted");
        }
        for good in [
            "index.html",
            "a/b/c.css",
            "..a",
            "a..b/c",
            ".well-known/x",
            "é/ü.txt",
        ] {
            assert!(path(good).is_ok(), "{good:?} refused");
        }
        assert!(path(&"x".repeat(1024)).is_ok());
        assert!(path(&"x".repeat(1025)).is_err());
    }

    #[test]
    fn titles_slugs_aliases() {
        assert!(title("").is_err() && title("   ").is_err());
        assert!(title(&"é".repeat(200)).is_ok() && title(&"é".repeat(201)).is_err());
        assert_eq!(slug_from_title("Hello, World! 2026"), "hello-world-2026");
        assert_eq!(slug_from_title("  --  "), "page");
        assert_eq!(slug_from_title("Ünïcode Ökay"), "n-code-kay");
        // Cut at 64 bytes, then a trailing dash is dropped.
        assert_eq!(slug_from_title(&"abc ".repeat(20)).len(), 63);
        assert_eq!(slug_from_title(&"ab ".repeat(40)).len(), 64);
        assert_eq!(slug_candidate("site", 1), "site");
        assert_eq!(slug_candidate("site", 3), "site-3");
        assert_eq!(slug_candidate(&"x".repeat(64), 12).len(), 64);
        assert!(slug("ok-slug-9").is_ok() && slug("7").is_ok() && slug("a--b").is_ok());
        for bad in [
            "",
            "Caps",
            "under_score",
            "sp ace",
            &"x".repeat(65),
            "-",
            "--",
            "-a",
            "a-",
            "-a-",
        ] {
            assert!(slug(bad).is_err(), "{bad:?}");
        }
        // Slugs of pages published before the rule still address them.
        assert!(is_slug("-a") && is_slug("a-"));
        // Derived slugs always pass the rule.
        for title in ["--x--", "!a!", "Hello, World! 2026", &"ab ".repeat(40)] {
            let derived = slug_from_title(title);
            assert!(slug(&derived).is_ok(), "{derived:?}");
            assert!(slug(&slug_candidate(&derived, 12)).is_ok());
        }
        assert!(alias("My_Alias-1").is_ok());
        for bad in ["ab", "has space", "slash/x", &"x".repeat(65)] {
            assert!(alias(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn new_page_passwords_have_8_to_256_characters() {
        assert!(page_password("1234567").is_err());
        assert!(page_password("ééééééé").is_err(), "characters, not bytes");
        assert!(page_password("12345678").is_ok() && page_password("éééééééé").is_ok());
        assert!(page_password(&"x".repeat(256)).is_ok());
        assert!(page_password(&"x".repeat(257)).is_err());
    }

    #[test]
    fn expiry_and_budget() {
        let now = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        assert!(expires_at("2099-01-01T00:00:00Z", now).is_ok());
        assert!(expires_at("2020-01-01T00:00:00Z", now).is_err());
        assert!(expires_at("tomorrow", now).is_err());
        assert_eq!(max_views(5), Ok(5));
        assert!(max_views(0).is_err() && max_views(-1).is_err());
    }
}
