//! What the adapter's own tests share: a database of each backend.

use quire_store::{Database, DatabaseConfig};
use quire_testkit::pg::TestDatabase;

/// A SQLite database in a directory that does not exist yet (the adapter creates it).
pub async fn sqlite() -> (Database, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}/nested/dir/quire.db", dir.path().display());
    let db = Database::connect(&DatabaseConfig::new(url)).expect("connect");
    (db, dir)
}

/// A PostgreSQL database of its own, or `None` to skip (see [`TestDatabase`]).
pub async fn postgres() -> Option<(Database, TestDatabase)> {
    let t = TestDatabase::create().await?;
    let db = Database::connect(&DatabaseConfig::new(t.url.clone())).expect("connect");
    Some((db, t))
}
