//! `quire-read-cache`: what the API reads on every call, held in memory in front of the
//! stores for at most a second: API keys by hash ([`CachedKeyStore`]) and the page details
//! of the page fetch ([`CachedPageStore`]). Each is a decorator over its port, so the domain
//! services it serves do not know it is there. A write through this replica is seen at
//! once (the decorators drop what a write touches, and hear the services' change
//! listeners); a write through another replica within the TTL.
//!
//! The TTLs run on the kernel's `Clock`, not on moka's: [`ClockCache`], which these
//! decorators, `quire-serving` and `quire-bearer` hold what they read in, keeps when each
//! entry was stored, so a test ages them by moving its clock.
//!
//! It depends on the kernel, the ports it decorates (`quire-keys`, `quire-pages`),
//! `moka` and `metrics` (hits and misses); like `quire-serving` and `quire-bearer` it holds caches, which the domain may not.

mod clock_cache;
mod key_cache;
mod page_cache;

pub use clock_cache::ClockCache;
pub use key_cache::{CachedKeyStore, KEY_LOOKUP_TTL};
pub use page_cache::{CachedPageStore, PAGE_READ_TTL};
