//! What the adapter's own tests share: a database of each backend.

use quire_accounts::SealingKey;
use quire_store::{Database, DatabaseConfig};
use quire_testkit::pg::TestDatabase;

/// The sealing key of every database these helpers open (replicas share one).
#[allow(dead_code)] // not every test binary opens a twin
pub fn key() -> SealingKey {
    SealingKey::from_bytes(&[7; 32]).expect("32 bytes")
}

/// A SQLite database in a directory that does not exist yet (the adapter creates it).
pub async fn sqlite() -> (Database, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}/nested/dir/quire.db", dir.path().display());
    let db = Database::connect(&DatabaseConfig::new(url))
        .expect("connect")
        .with_sealing_key(key());
    (db, dir)
}

/// A PostgreSQL database of its own, or `None` to skip (see [`TestDatabase`]).
pub async fn postgres() -> Option<(Database, TestDatabase)> {
    let t = TestDatabase::create().await?;
    let db = Database::connect(&DatabaseConfig::new(t.url.clone()))
        .expect("connect")
        .with_sealing_key(key());
    Some((db, t))
}
