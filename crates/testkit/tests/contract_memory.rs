//! The fake passes the same contract as the real stores, so domain tests that use it test
//! against behaviour the real adapters are held to.

use std::sync::Arc;

use quire_testkit::MemoryStore;

async fn make() -> Option<(Arc<MemoryStore>, ())> {
    Some((Arc::new(MemoryStore::new()), ()))
}

quire_testkit::store_contract!(make);
