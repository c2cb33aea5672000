//! `quire-read-cache`: what the API reads on every call, held in memory in front of the
//! stores for at most a second: API keys by hash ([`CachedKeyStore`]) and the page details
//! of the page fetch ([`CachedPageStore`]). Each is a decorator over its port, so the domain
//! services it serves do not know it is there. A write through this replica is seen at
//! once (the decorators drop what a write touches, and hear the services' change
//! listeners); a write through another replica within the TTL.
//!
//! It depends on the kernel, the ports it decorates (`quire-keys`, `quire-pages`) and
//! `moka`; like `quire-serving` and `quire-bearer` it holds caches, which the domain may not.

mod key_cache;
mod page_cache;

pub use key_cache::{CachedKeyStore, KEY_LOOKUP_TTL};
pub use page_cache::{CachedPageStore, PAGE_READ_TTL};
