//! The object service's use cases on the in-memory fakes: offers, quotas and uploads.
//! One test binary for the crate: each file a module, linked once.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod offers;
mod quotas;
mod uploads;
