//! The bounded in-memory caches of the hot path: page policies and manifests (kept for a
//! short time, so a change made on another replica shows within that time) and small files
//! (kept until evicted: they are addressed by content, so they never go stale).

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::AtomicBool;

use bytes::Bytes;
use quire_kernel::Handle;
use quire_links::Link;
use quire_pages::{FileEntry, Page};

/// A page as the pages origin needs it: record, owner handle, link (policy) and manifest.
#[derive(Debug)]
pub(crate) struct Site {
    pub page: Page,
    pub handle: Handle,
    pub link: Link,
    pub files: HashMap<String, FileEntry>,
    /// Set when a view claim found the budget spent, before the entry is next reloaded.
    pub spent: AtomicBool,
}

/// A file's bytes, and their gzip encoding when that is worth sending.
#[derive(Debug)]
pub struct CachedFile {
    pub identity: Bytes,
    pub gzip: Option<Bytes>,
}

impl CachedFile {
    pub(crate) fn weight(&self) -> u32 {
        let n = self.identity.len() + self.gzip.as_ref().map_or(0, Bytes::len);
        u32::try_from(n).unwrap_or(u32::MAX)
    }
}

/// Types worth compressing: text, and the text-based application and image types.
#[must_use]
pub(crate) fn compressible(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.starts_with("text/")
        || matches!(
            essence,
            "application/javascript"
                | "application/json"
                | "application/xml"
                | "application/xhtml+xml"
                | "application/manifest+json"
                | "application/wasm"
                | "image/svg+xml"
        )
}

/// Smallest body worth compressing: below it the gzip header eats the gain.
const MIN_GZIP_BYTES: usize = 256;

/// The gzip encoding of `bytes` when it saves at least a tenth.
pub(crate) fn gzip(content_type: &str, bytes: &[u8]) -> Option<Bytes> {
    if bytes.len() < MIN_GZIP_BYTES || !compressible(content_type) {
        return None;
    }
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 3),
        flate2::Compression::default(),
    );
    encoder.write_all(bytes).ok()?;
    let out = encoder.finish().ok()?;
    (out.len() * 10 <= bytes.len() * 9).then(|| Bytes::from(out))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::Read;

    use super::*;

    #[test]
    fn text_is_gzipped_and_decodes_back() {
        let html = "<p>hello</p>\n".repeat(100);
        let gz = gzip("text/html; charset=utf-8", html.as_bytes()).unwrap();
        assert!(gz.len() < html.len() / 5);
        let mut back = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut back)
            .unwrap();
        assert_eq!(back, html);
    }

    #[test]
    fn images_small_bodies_and_incompressible_bytes_stay_as_they_are() {
        assert_eq!(gzip("image/png", &[0u8; 4096]), None);
        assert_eq!(gzip("text/css", b"a{}"), None);
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x.to_le_bytes()[0]
            })
            .collect();
        assert_eq!(gzip("text/plain", &noise), None);
        assert!(compressible("image/svg+xml"));
        assert!(!compressible("application/octet-stream"));
    }
}
