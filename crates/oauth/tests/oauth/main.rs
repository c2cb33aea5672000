//! The OAuth authorization server's flows against the in-memory fakes and a fixed clock.
//! One test binary for the crate: each file a module, linked once.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;
mod connected;
mod consent_choice;
mod documents;
mod flow;
mod resource;
mod verify;
