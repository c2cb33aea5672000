//! The store contract suite on both real backends, plus what only a real database can show:
//! migrations, rollback of multi-step transactions, and behaviour when the database is gone.

use std::sync::Arc;

use quire_accounts::SealingKey;
use quire_store::{Database, DatabaseConfig};
use quire_testkit::pg::TestDatabase;

mod sqlite {
    use super::*;

    pub async fn make() -> Option<(Arc<Database>, tempfile::TempDir)> {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}/quire.db", dir.path().display());
        let db = Database::connect(&DatabaseConfig::new(url))
            .expect("connect")
            .with_sealing_key(SealingKey::ephemeral());
        db.migrate().await.expect("migrate");
        Some((Arc::new(db), dir))
    }

    quire_store_contract::store_contract!(make);
}

mod postgres {
    use super::*;

    pub async fn make() -> Option<(Arc<Database>, TestDatabase)> {
        let test_db = TestDatabase::create().await;
        let db = Database::connect(&DatabaseConfig::new(test_db.url.clone()))
            .expect("connect")
            .with_sealing_key(SealingKey::ephemeral());
        db.migrate().await.expect("migrate");
        Some((Arc::new(db), test_db))
    }

    quire_store_contract::store_contract!(
        #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
        make
    );
}
