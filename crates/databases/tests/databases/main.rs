//! The database service's use cases on the in-memory fakes: data API requests, end users and quotas.
//! One test binary for the crate: each file a module, linked once.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod end_users;
mod quotas;
mod rest_requests;
mod support;
