//! The store beyond the in-memory fakes: the contract on SQLite and PostgreSQL, rollback under injected faults, sealed secrets, migrations and SQLite's formats.
//! One test binary for the crate: each file a module, linked once.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod account_rollback;
mod common;
mod contract;
mod page_rollback;
mod rollback;
mod sealed_secrets;
mod store;
// What the store writes in SQLite's own formats: times as text, a migration that rebuilds a
// table.
mod link_targets;
mod sqlite_time;
