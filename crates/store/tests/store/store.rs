//! Behaviour of the real adapter beyond the shared contract: migration parity and
//! idempotence, server secrets shared by replicas, and what callers see when the database
//! goes away or its URL is wrong. Rollback under injected faults is in `rollback.rs`.

use std::time::Duration;

use quire_accounts::AccountStore;
use quire_kernel::AccountId;
use quire_store::{Database, DatabaseConfig, MIGRATION_NAMES_POSTGRES, MIGRATION_NAMES_SQLITE};
use quire_testkit::pg::TestDatabase;

use crate::common;
use common::{key, postgres, sqlite};

#[test]
fn both_backends_have_the_same_migrations() {
    assert!(!MIGRATION_NAMES_POSTGRES.is_empty());
    assert_eq!(*MIGRATION_NAMES_POSTGRES, *MIGRATION_NAMES_SQLITE);
}

async fn migrations_apply_once(db: &Database) {
    assert_eq!(
        db.migrate().await.expect("first run"),
        MIGRATION_NAMES_SQLITE.len()
    );
    assert_eq!(db.migrate().await.expect("second run"), 0);
    db.ping().await.expect("ping");
}

#[tokio::test(flavor = "multi_thread")]
async fn migrations_apply_once_and_create_the_sqlite_directory() {
    let (db, _dir) = sqlite().await;
    migrations_apply_once(&db).await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn migrations_apply_once_on_postgres() {
    let (db, _t) = postgres().await;
    migrations_apply_once(&db).await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn an_unreachable_postgres_is_an_error_not_a_hang_and_recovers() {
    let t = TestDatabase::create().await;
    let mut config = DatabaseConfig::new(t.url.clone());
    config.acquire_timeout = Duration::from_secs(2);
    let db = Database::connect(&config).expect("connect");
    db.migrate().await.expect("migrate");
    db.ping().await.expect("ping while up");

    t.admin(&format!(
        "ALTER DATABASE {0} ALLOW_CONNECTIONS false; \
         SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{0}'",
        t.name()
    ))
    .await;
    let started = std::time::Instant::now();
    assert!(db.ping().await.is_err());
    let err = db.account_by_id(AccountId::new()).await.unwrap_err();
    assert!(!err.to_string().is_empty());
    assert_eq!(
        err.kind(),
        quire_kernel::InfraKind::Unavailable,
        "{}",
        err.chain()
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    t.admin(&format!(
        "ALTER DATABASE {} ALLOW_CONNECTIONS true",
        t.name()
    ))
    .await;
    db.ping().await.expect("ping after recovery");
}

#[tokio::test(flavor = "multi_thread")]
async fn unsupported_urls_are_refused_with_a_clear_message() {
    let err = Database::connect(&DatabaseConfig::new("mysql://localhost/x")).unwrap_err();
    assert!(err.to_string().contains("sqlite://"), "{err}");
}

#[test]
fn connecting_outside_a_runtime_is_an_error_not_a_panic_later() {
    let err = Database::connect(&DatabaseConfig::new("sqlite://x.db")).unwrap_err();
    assert!(err.to_string().contains("tokio runtime"), "{err}");
}

async fn server_secrets_are_made_once_and_shared(first: &Database, second: &Database) {
    first.migrate().await.unwrap();
    // Two replicas racing at first start agree on one value.
    let (a, b) = tokio::join!(
        first.server_secret("pages-signing"),
        second.server_secret("pages-signing")
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a, b);
    assert_eq!(a.len(), 43, "256 bits in base64url");
    assert_eq!(first.server_secret("pages-signing").await.unwrap(), a);
    assert_ne!(first.server_secret("other").await.unwrap(), a);
}

#[tokio::test(flavor = "multi_thread")]
async fn server_secrets_are_made_once_and_shared_by_replicas_on_sqlite() {
    let (db, dir) = sqlite().await;
    let url = format!("sqlite://{}/nested/dir/quire.db", dir.path().display());
    let twin = Database::connect(&DatabaseConfig::new(url))
        .expect("connect")
        .with_sealing_key(key());
    server_secrets_are_made_once_and_shared(&db, &twin).await;
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn server_secrets_are_made_once_and_shared_by_replicas_on_postgres() {
    let (db, t) = postgres().await;
    let twin = Database::connect(&DatabaseConfig::new(t.url.clone()))
        .expect("connect")
        .with_sealing_key(key());
    server_secrets_are_made_once_and_shared(&db, &twin).await;
}
