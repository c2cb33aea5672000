//! The rules of an object's own fields; slug and title are the pages' (one namespace).

use quire_links::rules::Invalid;

/// Longest file name kept, in characters.
pub const MAX_FILENAME_CHARS: usize = 255;
/// Longest content type, in bytes.
pub const MAX_CONTENT_TYPE_LEN: usize = 255;
/// Default cap of one object's bytes: 1 GiB.
pub const DEFAULT_MAX_OBJECT_BYTES: u64 = 1 << 30;

/// The name a download is saved as: the last segment of what the client sent (no
/// directory survives, whichever separator it used), control characters replaced by `_`,
/// at most [`MAX_FILENAME_CHARS`] characters; an empty name is `file`. Filenames are what
/// browsers and tools send, so they are made safe rather than refused.
#[must_use]
pub fn filename(raw: &str) -> String {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String = last
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .take(MAX_FILENAME_CHARS)
        .collect();
    let trimmed = cleaned.trim();
    if trimmed.is_empty() || trimmed == "." || trimmed == ".." {
        "file".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// A declared content type: `type/subtype` with optional parameters, printable ASCII.
///
/// # Errors
/// When it is not of that shape.
pub fn content_type(raw: &str) -> Result<String, Invalid> {
    let ok = raw.len() <= MAX_CONTENT_TYPE_LEN
        && raw.bytes().all(|b| (0x20..0x7f).contains(&b))
        && raw
            .split(';')
            .next()
            .and_then(|essence| essence.trim().split_once('/'))
            .is_some_and(|(t, s)| is_token(t) && is_token(s));
    if ok {
        Ok(raw.trim().to_owned())
    } else {
        Err(Invalid(
            "contentType must be a media type such as application/pdf".into(),
        ))
    }
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
}

/// The type a file name suggests, when none was declared.
#[must_use]
pub fn guessed_content_type(filename: &str) -> String {
    quire_pages::validate::content_type(filename)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filenames_lose_directories_and_control_characters() {
        assert_eq!(filename("../../etc/passwd"), "passwd");
        assert_eq!(filename("C:\\Users\\ann\\report.pdf"), "report.pdf");
        assert_eq!(filename("a\r\nSet-Cookie: x.txt"), "a__Set-Cookie: x.txt");
        assert_eq!(filename("nul\0byte"), "nul_byte");
        assert_eq!(filename("dir/"), "file");
        assert_eq!(filename(".."), "file");
        assert_eq!(filename("résumé \"final\".pdf"), "résumé \"final\".pdf");
        assert_eq!(
            filename(&"x".repeat(400)).chars().count(),
            MAX_FILENAME_CHARS
        );
    }

    #[test]
    fn content_types_must_be_media_types() {
        assert_eq!(
            content_type("text/plain; charset=utf-8").unwrap(),
            "text/plain; charset=utf-8"
        );
        assert!(content_type("application/pdf").is_ok());
        assert!(content_type("pdf").is_err());
        assert!(content_type("text/plain\r\nX: y").is_err());
        assert!(content_type("/x").is_err());
    }
}
