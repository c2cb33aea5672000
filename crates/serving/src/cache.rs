//! The bounded in-memory caches of the hot path: page policies and manifests (kept for a
//! short time, so a change made on another replica shows within that time) and small files
//! (kept until evicted: they are addressed by content, so they never go stale).

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use quire_kernel::Handle;
use quire_links::Link;
use quire_pages::{FileEntry, Page};
use time::OffsetDateTime;

/// A page as the pages origin needs it: record, owner handle, link (policy) and manifest.
#[derive(Debug)]
pub(crate) struct Site {
    pub page: Page,
    pub handle: Handle,
    pub link: Link,
    pub files: HashMap<String, FileSlot>,
    /// When the page last changed (its files or settings), in seconds since the epoch and
    /// as an HTTP-date: its files' `Last-Modified`, formatted once per load.
    pub last_modified: (i64, Arc<str>),
    /// Set when a view claim found the budget spent, before the entry is next reloaded.
    pub spent: AtomicBool,
    /// When the policy was read from the store, by the service's clock: the entry is good
    /// for the policy TTL from here, wherever it is kept.
    pub loaded_at: OffsetDateTime,
}

/// Whether something loaded at `loaded_at` is still good at `now` for `ttl`. Something loaded
/// "after now" is not: the clock went back, and how old it is cannot be told.
pub(crate) fn fresh(loaded_at: OffsetDateTime, now: OffsetDateTime, ttl: Duration) -> bool {
    let age = now - loaded_at;
    !age.is_negative() && age < ttl
}

/// One file of the manifest, and its bytes once a request has read them (kept with the
/// site entry, so a hot file costs no lookup; the bytes are shared with the file cache).
#[derive(Debug)]
pub(crate) struct FileSlot {
    pub entry: FileEntry,
    pub bytes: OnceLock<Arc<CachedFile>>,
}

/// Most pages one worker thread keeps in its own front cache.
const FRONT_CAPACITY: usize = 256;

/// foldhash rather than SipHash: three lookups per visit, on keys from the request's path.
/// Its seed is random per process, and an entry is made only for a page that exists.
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
type Front = Map<u64, Map<String, Map<String, Arc<Site>>>>;

thread_local! {
    /// Per worker thread, per service: handle → slug → site. Read without any lock or
    /// shared write, which is most of what a hot public page costs; entries are trusted
    /// only while their policy is fresh and no local change was made since.
    static FRONT: RefCell<Front> = RefCell::new(Map::default());
}

/// How long a site is good for, and what it must be newer than.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Freshness {
    pub now: OffsetDateTime,
    pub ttl: Duration,
    /// The service's last local change: a site loaded before it is not trusted.
    pub changed_at: Option<OffsetDateTime>,
}

impl Freshness {
    pub(crate) fn trusts(&self, site: &Site) -> bool {
        self.trusts_load(site.loaded_at)
    }

    /// Whether what was loaded at `loaded_at` may still be served.
    pub(crate) fn trusts_load(&self, loaded_at: OffsetDateTime) -> bool {
        fresh(loaded_at, self.now, self.ttl) && self.changed_at.is_none_or(|c| loaded_at > c)
    }
}

/// Counts a lookup of one of the hot path's caches in the metrics (a no-op unless the server
/// exports them).
pub(crate) fn count_lookup(cache: &'static str, hit: bool) {
    let result = if hit { "hit" } else { "miss" };
    metrics::counter!("quire_cache_lookups_total", "cache" => cache, "result" => result)
        .increment(1);
}

/// The site this thread holds for `handle`/`slug`, if `freshness` trusts it.
pub(crate) fn front_get(
    service: u64,
    handle: &str,
    slug: &str,
    freshness: &Freshness,
) -> Option<Arc<Site>> {
    FRONT.with(|front| {
        let front = front.borrow();
        let site = front.get(&service)?.get(handle)?.get(slug)?;
        freshness.trusts(site).then(|| site.clone())
    })
}

/// Keeps `site` in this thread's front cache. Entries older than the TTL are dropped first
/// (with the file bytes they hold), so the cache never keeps what it would not serve.
pub(crate) fn front_put(service: u64, site: &Arc<Site>, freshness: &Freshness) {
    FRONT.with(|front| {
        let mut front = front.borrow_mut();
        let pages = front.entry(service).or_default();
        for slugs in pages.values_mut() {
            slugs.retain(|_, s| fresh(s.loaded_at, freshness.now, freshness.ttl));
        }
        pages.retain(|_, slugs| !slugs.is_empty());
        if pages.values().map(Map::len).sum::<usize>() >= FRONT_CAPACITY {
            pages.clear();
        }
        pages
            .entry(site.handle.as_str().to_owned())
            .or_default()
            .insert(site.page.slug.clone(), site.clone());
    });
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
