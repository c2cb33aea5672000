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

/// A PostgreSQL database of its own (see [`TestDatabase`]); only for tests that carry the
/// `no_postgres` ignore.
pub async fn postgres() -> (Database, TestDatabase) {
    let t = TestDatabase::create().await;
    let db = Database::connect(&DatabaseConfig::new(t.url.clone()))
        .expect("connect")
        .with_sealing_key(key());
    (db, t)
}

/// Makes each listed `async fn check(db: Database)` two tests, `sqlite::check` and
/// `postgres::check`, each on a fresh database of its own. Where PostgreSQL is not
/// configured the PostgreSQL one is reported as ignored, with the reason (the `no_postgres`
/// cfg of `build.rs`), while the SQLite one still runs.
#[allow(unused_macros)] // not every test binary checks both databases this way
macro_rules! on_both_databases {
    ($($check:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $check() {
                    let (db, _dir) = $crate::common::sqlite().await;
                    super::$check(db).await;
                }
            )+
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread")]
                #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
                async fn $check() {
                    let (db, _t) = $crate::common::postgres().await;
                    super::$check(db).await;
                }
            )+
        }
    };
}
#[allow(unused_imports)]
pub(crate) use on_both_databases;
