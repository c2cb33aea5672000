//! `quire-style`: Quire's one stylesheet, shared by the dashboard and the visitor pages, the
//! dashboard's one small script (copy buttons), and the hashed file names they are served
//! under.
//!
//! The name carries a digest of the content, so a surface can serve it with an immutable
//! cache lifetime and a new release is fetched at once. No build step, no network: the CSS
//! is a file in this crate, included at compile time. It depends on `sha2` alone.

use std::sync::LazyLock;

use sha2::{Digest, Sha256};

/// The stylesheet's text.
pub const CSS: &str = include_str!("quire.css");

/// The copy buttons' script: pages work without it (the buttons stay hidden).
pub const SCRIPT: &str = include_str!("copy.js");

/// `Cache-Control` for a response whose name changes with its content.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

fn hashed(text: &str, stem: &str, extension: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest[..5].iter().map(|b| format!("{b:02x}")).collect();
    format!("{stem}.{hex}.{extension}")
}

static FILE_NAME: LazyLock<String> = LazyLock::new(|| hashed(CSS, "quire", "css"));
static SCRIPT_NAME: LazyLock<String> = LazyLock::new(|| hashed(SCRIPT, "copy", "js"));

/// The stylesheet's file name, `quire.<10 hex digits of its SHA-256>.css`; each surface
/// serves it under a folder of its own (the dashboard at `/assets/`).
#[must_use]
pub fn file_name() -> &'static str {
    &FILE_NAME
}

/// The script's file name, `copy.<10 hex digits of its SHA-256>.js`, served beside the
/// stylesheet.
#[must_use]
pub fn script_name() -> &'static str {
    &SCRIPT_NAME
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_follows_the_content() {
        let digest = Sha256::digest(CSS.as_bytes());
        assert!(file_name().starts_with("quire."));
        assert!(file_name().ends_with(".css"));
        assert_eq!(file_name().len(), "quire.".len() + 10 + ".css".len());
        assert_eq!(&file_name()[6..8], format!("{:02x}", digest[0]));
        let digest = Sha256::digest(SCRIPT.as_bytes());
        assert!(script_name().starts_with("copy.") && script_name().ends_with(".js"));
        assert_eq!(&script_name()[5..7], format!("{:02x}", digest[0]));
    }
}
