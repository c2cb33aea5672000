//! The fake passes the same contract as the real stores, so domain tests that use it test
//! against behaviour the real adapters are held to.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::sync::Arc;

use quire_testkit::MemoryStore;

async fn make() -> Option<(Arc<MemoryStore>, ())> {
    Some((Arc::new(MemoryStore::new()), ()))
}

quire_store_contract::store_contract!(make);
