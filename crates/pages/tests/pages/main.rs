//! The page service's use cases on the in-memory fakes: publish (and under a lease), patch,
//! offload, reads, and what a page's files leave in storage.
//! One test binary for the crate: each file a module, linked once.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;
mod offload;
mod patch;
mod publish;
mod publish_lease;
mod reads;
mod storage;
