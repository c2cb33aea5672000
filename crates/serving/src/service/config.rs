//! The serving service's settings and their defaults.

use std::time::Duration;

use quire_kernel::Budget;
use quire_pages::PageOrigins;

/// Settings of the serving service.
#[derive(Debug, Clone)]
pub struct ServingConfig {
    /// Where pages and short links live (`QUIRE_PAGES_URL`).
    pub origins: PageOrigins,
    /// Public origin of the dashboard (`QUIRE_BASE_URL`), where visitors sign in.
    pub base_url: String,
    /// How long a page's policy and manifest are served from memory before they are read
    /// again: the most a change made on another replica takes to show.
    pub policy_ttl: Duration,
    /// Most pages whose policy is kept in memory.
    pub max_cached_pages: u64,
    /// Bytes of file content kept in memory (identity plus gzip).
    pub file_cache_bytes: u64,
    /// Largest file kept in memory (and gzipped); larger ones are read per request.
    pub max_cached_file: u64,
    /// Wrong passwords per page from one client address (its /64 for IPv6).
    pub unlock_per_address: Budget,
    /// Wrong passwords per page from every address together; past it, only an address that
    /// has not failed on the page is let try.
    pub unlock_per_page: Budget,
    pub unlock_cookie_ttl: Duration,
    pub access_cookie_ttl: Duration,
    /// Life of the sign-in pass the dashboard hands over in a URL.
    pub pass_ttl: Duration,
    /// How long the assets of a counted view of a page with a budget keep loading.
    pub view_cookie_ttl: Duration,
    /// How long a view lease lives in the store after its last grant or settle
    /// ([`crate::LEASE_TTL`] by default).
    pub view_lease_ttl: Duration,
    /// Most budgeted objects' view cookies whose bytes this replica counts at once, and
    /// most of them of one owner's objects (`crate::view_bytes`).
    pub counted_view_cookies: usize,
    pub counted_view_cookies_per_owner: usize,
}

impl Default for ServingConfig {
    fn default() -> Self {
        Self {
            origins: PageOrigins::default(),
            base_url: "http://127.0.0.1:8080".into(),
            policy_ttl: Duration::from_millis(800),
            max_cached_pages: 10_000,
            file_cache_bytes: 64 * 1024 * 1024,
            max_cached_file: 1024 * 1024,
            // 10 in 15 minutes, the last five 1, 2, 4, 8 and 16 s apart.
            unlock_per_address: Budget::with_backoff(
                10,
                Duration::from_secs(15 * 60),
                5,
                Duration::from_secs(1),
            ),
            // 20 in 15 minutes, then waits from 1 s that double up to 15 minutes.
            unlock_per_page: Budget::with_backoff(
                100,
                Duration::from_secs(15 * 60),
                20,
                Duration::from_secs(1),
            ),
            unlock_cookie_ttl: Duration::from_secs(24 * 3600),
            access_cookie_ttl: Duration::from_secs(12 * 3600),
            pass_ttl: Duration::from_secs(60),
            view_cookie_ttl: Duration::from_secs(10 * 60),
            view_lease_ttl: crate::LEASE_TTL,
            counted_view_cookies: crate::view_bytes::MAX_COUNTED_COOKIES,
            counted_view_cookies_per_owner: crate::view_bytes::MAX_COUNTED_COOKIES_PER_OWNER,
        }
    }
}
