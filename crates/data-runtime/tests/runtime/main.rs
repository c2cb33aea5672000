//! The runtime against a real PostgreSQL (`QUIRE_TEST_POSTGRES_URL`, a superuser; reported
//! as ignored when unset, docs/decisions/test-skips.md), in one test binary: schema reloads
//! (`reloads`) and a request's miss (`misses`), the connection cap shared out among
//! accounts (`shares`), what a tenant sets on its database against the data API's sessions
//! (`sessions`), what a request leaves behind once it is over (`abandoned`), a database's
//! data API settings on its instance (`settings`), and the `TenantUsers` contract list on
//! an instance's users (`contract`).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod support;

mod abandoned;
mod contract;
mod misses;
mod reloads;
mod sessions;
mod settings;
mod shares;
