//! The serving use cases on the in-memory world: access, leases, object views, offload, origins, passwords, ranges and visits.
//! One test binary for the crate: each file a module, linked once.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod access;
mod common;
mod leases;
mod object_views;
mod offload;
mod origins;
mod passwords;
mod ranges;
mod visits;
