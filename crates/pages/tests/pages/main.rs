//! The page service's use cases on the in-memory fakes: publish under a lease, offload, reads and the service's rules.
//! One test binary for the crate: each file a module, linked once.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;
mod offload;
mod publish_lease;
mod reads;
mod service;
