//! `quire-testkit`: what tests of every layer share.
//!
//! - [`memory::MemoryStore`]: an in-memory implementation of every store port, with a
//!   failure switch for fault-injection tests of the domain.
//! - [`databases`]: the database service's other fakes: the PostgreSQL cluster (and a
//!   decorator that makes any cluster's step go wrong), the data API's instances, a
//!   database's end users and their email.
//! - [`captcha::solve`]: an ALTCHA solver, to answer the activation captcha.
//! - [`fixtures`]: a fixed clock, a timer the test fires by hand, an offload that runs each
//!   job on a thread of its own (or, [`Heartbeats`], only while the async worker is free),
//!   and principals.
//! - [`documents::MemoryDocuments`]: client metadata documents served by URL.
//! - [`mailer::MemoryMailer`]: a relay that keeps what it is given, or refuses as told.
//! - [`pg`]: a fresh PostgreSQL database per test, from `QUIRE_TEST_POSTGRES_URL`.
//! - [`smtp_relay`]: a real SMTP server (Debian's aiosmtpd) per test.
//! - [`world`]: a test world in a line (fakes, clock, timer, accounts, every service built by
//!   the composition root; with the `http` feature, the HTTP edge's state too).
//!
//! It depends on the domain crates, the kernel, `quire-dataapi` (the data API's plans and
//! schema, for the fake instances) and the composition root (`quire-app`), tokio
//! (the hand timer, the thread offload and stalled uploads wait on its channels, the fake
//! cluster's size reads on its barrier),
//! tokio-postgres (for [`pg`]), tempfile (for [`smtp_relay`]), altcha (for [`captcha`]) and,
//! with `http`, `quire-edge`; it is a dev-dependency everywhere. The store contract suite is
//! a crate of its own, `quire-store-contract`.

// Test support: a panic is how a failed check reports itself.
#![allow(clippy::unwrap_used)]

pub mod captcha;
pub mod databases;
pub mod documents;
pub mod fixtures;
pub mod mailer;
pub mod memory;
pub mod pg;
pub mod smtp_relay;
pub mod world;

pub use documents::MemoryDocuments;
pub use fixtures::{FixedClock, HandTimer, Heartbeats, ThreadOffload};
pub use mailer::MemoryMailer;
pub use memory::{MemoryBundles, MemoryObjectBytes, MemoryStore};
pub use world::World;
