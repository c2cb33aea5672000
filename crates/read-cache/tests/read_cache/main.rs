//! The read caches in front of the key and page stores.
//! One test binary for the crate: each file a module, linked once.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod key_cache;
mod page_cache;
