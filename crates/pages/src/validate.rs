//! Validation of everything a page request carries. Each function names the field it
//! refuses in its message, so the HTTP layer can pass it on unchanged.

use std::collections::HashSet;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::model::{FileData, FileEntry, FileInput, Limits};

/// Longest safe path, in characters (as the OpenAPI document's `maxLength` counts).
pub const MAX_PATH_CHARS: usize = 1024;

/// Longest page password, in characters: within the hasher's 1,024 bytes whatever the
/// characters, and a length the OpenAPI document can state.
pub const MAX_PAGE_PASSWORD_CHARS: usize = 256;
/// Longest page slug.
pub const MAX_SLUG_LEN: usize = 64;

/// A refused field: the message names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

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

/// Whether `raw` is a valid page slug (1-64 of `a-z 0-9 -`).
#[must_use]
pub fn is_slug(raw: &str) -> bool {
    !raw.is_empty()
        && raw.len() <= MAX_SLUG_LEN
        && raw
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// # Errors
/// When the slug is not 1-64 of `a-z 0-9 -`.
pub fn slug(raw: &str) -> Result<String, Invalid> {
    if !is_slug(raw) {
        return Err(Invalid("slug must be 1-64 of a-z, 0-9 and -".into()));
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

/// Most entries of an allow list.
pub const MAX_ALLOW_ENTRIES: usize = 1_000;

pub use quire_kernel::text::quoted;

/// # Errors
/// A page password over [`MAX_PAGE_PASSWORD_CHARS`] characters.
pub fn page_password(password: &str) -> Result<(), Invalid> {
    if password.chars().count() > MAX_PAGE_PASSWORD_CHARS {
        return Err(Invalid(format!(
            "password must be at most {MAX_PAGE_PASSWORD_CHARS} characters"
        )));
    }
    Ok(())
}

/// # Errors
/// When the alias is not 3-64 of `A-Z a-z 0-9 _ -`.
pub fn alias(raw: &str) -> Result<String, Invalid> {
    if !(3..=64).contains(&raw.len())
        || !raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(Invalid(
            "alias must be 3-64 of A-Z, a-z, 0-9, _ and -".into(),
        ));
    }
    Ok(raw.to_owned())
}

/// # Errors
/// When the value is not an RFC 3339 time, or not in the future.
pub fn expires_at(raw: &str, now: OffsetDateTime) -> Result<OffsetDateTime, Invalid> {
    let t = OffsetDateTime::parse(raw, &Rfc3339)
        .map_err(|_| Invalid("expiresAt must be an ISO 8601 (RFC 3339) time".into()))?;
    if t <= now {
        return Err(Invalid("expiresAt must be in the future".into()));
    }
    Ok(quire_kernel::clock::truncate_to_micros(t))
}

/// # Errors
/// When the value is not a positive integer.
pub fn max_views(raw: i128) -> Result<u64, Invalid> {
    u64::try_from(raw)
        .ok()
        .filter(|n| *n > 0 && *n <= i64::MAX as u64)
        .ok_or_else(|| Invalid("maxViews must be a positive integer".into()))
}

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

/// Validates and decodes a whole batch before anything is stored: every path safe, no path
/// twice, every encoding known, base64 that decodes, and the limits, counting the page's
/// `existing` files that the batch does not replace.
///
/// # Errors
/// The first problem found; nothing is partially accepted.
pub fn files(
    inputs: Vec<FileInput>,
    existing: &[FileEntry],
    limits: &Limits,
) -> Result<Vec<FileData>, FilesError> {
    if inputs.is_empty() {
        return Err(FilesError::Invalid(Invalid(
            "files must be a non-empty array".into(),
        )));
    }
    let mut seen = HashSet::new();
    for f in &inputs {
        path(&f.path).map_err(FilesError::Invalid)?;
        if !seen.insert(f.path.clone()) {
            return Err(FilesError::Invalid(Invalid(format!(
                "file path {} appears twice",
                quoted(&f.path)
            ))));
        }
    }
    let kept: Vec<&FileEntry> = existing
        .iter()
        .filter(|e| !seen.contains(&e.path))
        .collect();
    let count = kept.len() + inputs.len();
    if count > limits.max_files {
        return Err(FilesError::TooLarge {
            limit: LimitKind::Files,
            message: format!(
                "a page may hold at most {} files; this would make {count}",
                limits.max_files
            ),
        });
    }
    let mut total: u64 = kept.iter().map(|e| e.size_bytes).sum();
    let mut out = Vec::with_capacity(inputs.len());
    // Decoded and hashed on every core; then checked in request order, so the first problem
    // reported is the same as one file at a time would find.
    for decoded in crate::decode::decode_all(inputs) {
        let crate::decode::Decoded {
            path,
            bytes,
            sha256,
        } = decoded?;
        let size = bytes.len() as u64;
        if size > limits.max_file_bytes {
            return Err(FilesError::TooLarge {
                limit: LimitKind::FileSize,
                message: format!(
                    "{} is {size} bytes; a file may be at most {} bytes",
                    quoted(&path),
                    limits.max_file_bytes
                ),
            });
        }
        total += size;
        if total > limits.max_page_bytes {
            return Err(FilesError::TooLarge {
                limit: LimitKind::PageSize,
                message: format!(
                    "the page's files would exceed {} bytes",
                    limits.max_page_bytes
                ),
            });
        }
        out.push(FileData {
            entry: FileEntry {
                content_type: content_type(&path),
                sha256,
                size_bytes: size,
                path,
            },
            bytes,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(path: &str, content: &str, encoding: Option<&str>) -> FileInput {
        FileInput {
            path: path.into(),
            content: content.into(),
            encoding: encoding.map(str::to_owned),
        }
    }

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
        assert!(slug("ok-slug-9").is_ok());
        for bad in ["", "Caps", "under_score", "sp ace", &"x".repeat(65)] {
            assert!(slug(bad).is_err(), "{bad:?}");
        }
        assert!(alias("My_Alias-1").is_ok());
        for bad in ["ab", "has space", "slash/x", &"x".repeat(65)] {
            assert!(alias(bad).is_err(), "{bad:?}");
        }
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

    #[test]
    fn batches_are_checked_whole() {
        let limits = Limits {
            max_files: 3,
            max_file_bytes: 10,
            max_page_bytes: 15,
        };
        let ok = files(
            vec![
                input("index.html", "<p>hi</p>", None),
                input("a.bin", "AAEC", Some("base64")),
            ],
            &[],
            &limits,
        )
        .unwrap();
        assert_eq!(ok[1].bytes, vec![0, 1, 2]);
        assert_eq!(ok[0].entry.content_type, "text/html; charset=utf-8");
        assert_eq!(ok[0].entry.size_bytes, 9);
        assert_eq!(ok[1].entry.sha256, sha256_hex(&[0, 1, 2]));

        let dup = files(
            vec![input("a", "1", None), input("a", "2", None)],
            &[],
            &limits,
        );
        assert!(matches!(dup, Err(FilesError::Invalid(_))));
        let b64 = files(
            vec![input("a", "!!notbase64", Some("base64"))],
            &[],
            &limits,
        );
        assert!(matches!(b64, Err(FilesError::Invalid(_))));
        let enc = files(vec![input("a", "x", Some("hex"))], &[], &limits);
        assert!(matches!(enc, Err(FilesError::Invalid(_))));
        assert!(matches!(
            files(vec![], &[], &limits),
            Err(FilesError::Invalid(_))
        ));
        let unsafe_path = files(
            vec![input("ok", "1", None), input("../etc", "2", None)],
            &[],
            &limits,
        );
        assert!(matches!(unsafe_path, Err(FilesError::Invalid(_))));

        let big = files(vec![input("a", &"x".repeat(11), None)], &[], &limits);
        assert!(matches!(
            big,
            Err(FilesError::TooLarge {
                limit: LimitKind::FileSize,
                ..
            })
        ));
        let many = files(
            (0..4).map(|i| input(&format!("f{i}"), "x", None)).collect(),
            &[],
            &limits,
        );
        assert!(matches!(
            many,
            Err(FilesError::TooLarge {
                limit: LimitKind::Files,
                ..
            })
        ));
        let total = files(
            vec![
                input("a", &"x".repeat(8), None),
                input("b", &"x".repeat(8), None),
            ],
            &[],
            &limits,
        );
        assert!(matches!(
            total,
            Err(FilesError::TooLarge {
                limit: LimitKind::PageSize,
                ..
            })
        ));
    }

    #[test]
    fn limits_count_existing_files_that_are_not_replaced() {
        let limits = Limits {
            max_files: 2,
            max_file_bytes: 10,
            max_page_bytes: 12,
        };
        let existing = vec![FileEntry {
            path: "index.html".into(),
            size_bytes: 10,
            content_type: "text/html".into(),
            sha256: "x".into(),
        }];
        // Replacing index.html does not count its old size.
        assert!(
            files(
                vec![input("index.html", "0123456789", None)],
                &existing,
                &limits
            )
            .is_ok()
        );
        // Adding next to it does.
        let over = files(vec![input("b", "abc", None)], &existing, &limits);
        assert!(matches!(
            over,
            Err(FilesError::TooLarge {
                limit: LimitKind::PageSize,
                ..
            })
        ));
        let count = files(
            vec![input("b", "a", None), input("c", "b", None)],
            &existing,
            &limits,
        );
        assert!(matches!(
            count,
            Err(FilesError::TooLarge {
                limit: LimitKind::Files,
                ..
            })
        ));
    }
}
