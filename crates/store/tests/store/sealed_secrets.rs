//! The keys that sign, at rest, on both backends: what the rows hold is sealed under the
//! server's key, so a copy of the database alone opens nothing; the start-up step seals rows
//! stored bare before sealing began (once, all or nothing); and re-sealing under a new key
//! moves every sealed value (second-factor secrets too) or none. The rows are read with raw
//! SQL, as whoever holds a copy of the database would.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use diesel::{Connection as _, RunQueryDsl as _};
use quire_accounts::{AccountStore, SealedSecret, SealingKey, Session, SessionStore, TotpSecret};
use quire_kernel::{Clock, SystemClock};
use quire_oauth::{SigningKey, SigningKeyStore};
use quire_store::{Database, DatabaseConfig, Resealed, SealedAtStart};
use quire_testkit::pg::TestDatabase;

const PAGES: &str = "pages-signing-key";

/// Raw SQL on the database's file or server, beside the adapter.
enum Raw {
    Sqlite(String),
    Postgres(String),
}

#[derive(diesel::QueryableByName)]
struct Pair {
    #[diesel(sql_type = diesel::sql_types::Text)]
    a: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    b: String,
}

impl Raw {
    /// Rows of a query selecting two text columns named `a` and `b`.
    async fn pairs(&self, sql: &str) -> Vec<(String, String)> {
        match self {
            Raw::Sqlite(path) => {
                let (path, sql) = (path.clone(), sql.to_owned());
                tokio::task::spawn_blocking(move || {
                    let mut conn = diesel::SqliteConnection::establish(&path).unwrap();
                    diesel::sql_query(sql)
                        .load::<Pair>(&mut conn)
                        .unwrap()
                        .into_iter()
                        .map(|p| (p.a, p.b))
                        .collect()
                })
                .await
                .unwrap()
            }
            Raw::Postgres(url) => {
                let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                tokio::spawn(conn);
                let rows = client.query(sql, &[]).await.unwrap();
                rows.iter().map(|r| (r.get("a"), r.get("b"))).collect()
            }
        }
    }

    async fn exec(&self, sql: &str) {
        match self {
            Raw::Sqlite(path) => {
                let (path, sql) = (path.clone(), sql.to_owned());
                tokio::task::spawn_blocking(move || {
                    let mut conn = diesel::SqliteConnection::establish(&path).unwrap();
                    diesel::sql_query(sql).execute(&mut conn).unwrap();
                })
                .await
                .unwrap();
            }
            Raw::Postgres(url) => {
                let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                tokio::spawn(conn);
                client.batch_execute(sql).await.unwrap();
            }
        }
    }

    async fn secrets(&self) -> Vec<(String, String)> {
        self.pairs("SELECT name AS a, value AS b FROM server_secrets ORDER BY name")
            .await
    }

    async fn oauth_keys(&self) -> Vec<(String, String)> {
        self.pairs("SELECT kid AS a, private_key AS b FROM oauth_signing_keys ORDER BY kid")
            .await
    }

    async fn totp(&self) -> Vec<(String, String)> {
        self.pairs(
            "SELECT handle AS a, totp_secret AS b FROM accounts \
             WHERE totp_secret IS NOT NULL ORDER BY handle",
        )
        .await
    }

    async fn pending(&self) -> Vec<(String, String)> {
        self.pairs(
            "SELECT id_hash AS a, pending_totp_secret AS b FROM sessions \
             WHERE pending_totp_secret IS NOT NULL ORDER BY id_hash",
        )
        .await
    }
}

/// One database of a backend, opened under `key`, with raw access beside it.
struct Fixture {
    url: String,
    raw: Raw,
    _keep: Box<dyn std::any::Any + Send>,
}

impl Fixture {
    fn open(&self, key: Option<SealingKey>) -> Database {
        let db = Database::connect(&DatabaseConfig::new(self.url.clone())).unwrap();
        match key {
            Some(k) => db.with_sealing_key(k),
            None => db,
        }
    }
}

async fn sqlite() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = format!("{}/quire.db", dir.path().display());
    let f = Fixture {
        url: format!("sqlite://{path}"),
        raw: Raw::Sqlite(path),
        _keep: Box::new(dir),
    };
    f.open(None).migrate().await.unwrap();
    f
}

async fn postgres() -> Fixture {
    let t = TestDatabase::create().await;
    let f = Fixture {
        url: t.url.clone(),
        raw: Raw::Postgres(t.url.clone()),
        _keep: Box::new(t),
    };
    f.open(None).migrate().await.unwrap();
    f
}

/// Each check twice, `sqlite::check` and `postgres::check`; the PostgreSQL one is reported
/// as ignored, with the reason, where PostgreSQL is not configured.
macro_rules! on_both_databases {
    ($($check:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread")]
                async fn $check() {
                    super::$check(super::sqlite().await).await;
                }
            )+
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread")]
                #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
                async fn $check() {
                    super::$check(super::postgres().await).await;
                }
            )+
        }
    };
}

on_both_databases!(
    a_copy_of_the_database_holds_no_key_that_signs,
    the_start_up_step_seals_bare_rows_once_and_all_or_nothing,
    re_sealing_moves_every_sealed_value_to_the_new_key_or_none,
);

fn key(byte: u8) -> SealingKey {
    SealingKey::from_bytes(&[byte; 32]).unwrap()
}

async fn a_copy_of_the_database_holds_no_key_that_signs(f: Fixture) {
    let db = f.open(Some(key(1)));
    let pages = db.server_secret(PAGES).await.unwrap();
    let captcha = db.server_secret("captcha").await.unwrap();
    let now = SystemClock.now();
    let oauth = SigningKey::generate(now, now).unwrap();
    db.insert_signing_key(&oauth).await.unwrap();

    // What the rows hold: sealed values, none of them the key or its encoding.
    let stored = f.raw.secrets().await;
    assert_eq!(stored.len(), 2);
    for (name, value) in &stored {
        assert!(value.starts_with("v1."), "{name}: {value}");
        assert!(
            !value.contains(&pages) && !value.contains(&captcha),
            "{name}"
        );
    }
    let [(kid, private)] = &f.raw.oauth_keys().await[..] else {
        panic!("one key")
    };
    assert_eq!(kid, &oauth.kid);
    assert!(private.starts_with("v1."));
    assert_ne!(private, &STANDARD.encode(&oauth.private_pkcs8));
    assert!(STANDARD.decode(private).is_err(), "not the PKCS#8 document");

    // With the key file they open; a row moved under another name does not.
    assert_eq!(db.server_secret(PAGES).await.unwrap(), pages);
    assert_eq!(db.signing_keys().await.unwrap(), vec![oauth.clone()]);
    f.raw
        .exec(&format!(
            "UPDATE server_secrets SET value = '{}' WHERE name = 'captcha'",
            stored.iter().find(|(n, _)| n == PAGES).unwrap().1
        ))
        .await;
    let err = db.server_secret("captcha").await.unwrap_err().to_string();
    assert!(err.contains("server secret captcha"), "{err}");

    // Without it, or with another key, nothing opens, and no error shows a value.
    for other in [None, Some(key(2))] {
        let copy = f.open(other);
        let err = copy.server_secret(PAGES).await.unwrap_err().to_string();
        assert!(!err.contains(&pages), "{err}");
        assert!(copy.signing_keys().await.is_err());
    }
}

async fn the_start_up_step_seals_bare_rows_once_and_all_or_nothing(f: Fixture) {
    let db = f.open(Some(key(3)));
    // Rows as an older version stored them: the secret itself, the key in base64.
    f.raw
        .exec("INSERT INTO server_secrets (name, value) VALUES ('pages-signing-key', 'bare-pages-key')")
        .await;
    let now = SystemClock.now();
    let oauth = SigningKey::generate(now, now).unwrap();
    db.insert_signing_key(&oauth).await.unwrap();
    f.raw
        .exec(&format!(
            "UPDATE oauth_signing_keys SET private_key = '{}'",
            STANDARD.encode(&oauth.private_pkcs8)
        ))
        .await;
    // Bare rows are read as they are until sealed.
    assert_eq!(db.server_secret(PAGES).await.unwrap(), "bare-pages-key");
    let before = (f.raw.secrets().await, f.raw.oauth_keys().await);

    // A failure halfway leaves every row as it was.
    db.fail_at("seal_stored_secrets:server_secrets");
    assert!(db.seal_stored_secrets().await.is_err());
    assert_eq!((f.raw.secrets().await, f.raw.oauth_keys().await), before);

    assert_eq!(
        db.seal_stored_secrets().await.unwrap(),
        SealedAtStart {
            server_secrets: 1,
            oauth_keys: 1
        }
    );
    let sealed = (f.raw.secrets().await, f.raw.oauth_keys().await);
    assert!(sealed.0[0].1.starts_with("v1.") && !sealed.0[0].1.contains("bare-pages-key"));
    assert!(sealed.1[0].1.starts_with("v1."));
    // Still the same keys: cookies and tokens signed before keep working.
    assert_eq!(db.server_secret(PAGES).await.unwrap(), "bare-pages-key");
    assert_eq!(db.signing_keys().await.unwrap(), vec![oauth]);
    // Again: nothing to do, nothing changed.
    assert_eq!(
        db.seal_stored_secrets().await.unwrap(),
        SealedAtStart::default()
    );
    assert_eq!((f.raw.secrets().await, f.raw.oauth_keys().await), sealed);
}

async fn re_sealing_moves_every_sealed_value_to_the_new_key_or_none(f: Fixture) {
    let (old, new) = (key(4), key(5));
    let db = f.open(Some(old.clone()));
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let now = clock.now();
    let ann = quire_testkit::fixtures::create_account(Arc::new(db.clone()), clock.clone(), "ann")
        .await
        .account
        .id;
    let secret = TotpSecret::generate();
    assert!(
        db.enroll_totp(ann, &old.seal_totp(ann, &secret), 1, "none", &[], now)
            .await
            .unwrap()
    );
    let pending = TotpSecret::generate();
    db.insert_session(&Session {
        id_hash: "s1".into(),
        account_id: ann,
        mfa_satisfied: true,
        created_at: now,
        expires_at: now + time::Duration::hours(1),
        pending_totp: Some(old.seal_totp(ann, &pending)),
    })
    .await
    .unwrap();
    let pages = db.server_secret(PAGES).await.unwrap();
    let oauth = SigningKey::generate(now, now).unwrap();
    db.insert_signing_key(&oauth).await.unwrap();
    let rows = async || {
        (
            f.raw.totp().await,
            f.raw.pending().await,
            f.raw.secrets().await,
            f.raw.oauth_keys().await,
        )
    };
    let before = rows().await;

    // A failure halfway, or a value that does not open under the old key, changes nothing.
    db.fail_at("reseal_all:totp");
    assert!(db.reseal_all(&old, &new).await.is_err());
    assert_eq!(rows().await, before);
    let err = db.reseal_all(&new, &old).await.unwrap_err().to_string();
    assert!(err.contains("does not open"), "{err}");
    assert_eq!(rows().await, before);

    assert_eq!(
        db.reseal_all(&old, &new).await.unwrap(),
        Resealed {
            totp_secrets: 1,
            pending_totp_secrets: 1,
            server_secrets: 1,
            oauth_keys: 1
        }
    );
    let after = rows().await;
    assert_ne!(after.0, before.0);
    assert_ne!(after.1, before.1);
    assert_ne!(after.2, before.2);
    assert_ne!(after.3, before.3);

    // Under the new key everything opens as before; under the old one nothing does.
    let moved = f.open(Some(new.clone()));
    assert_eq!(moved.server_secret(PAGES).await.unwrap(), pages);
    assert_eq!(moved.signing_keys().await.unwrap(), vec![oauth]);
    let stored = moved
        .account_by_id(ann)
        .await
        .unwrap()
        .unwrap()
        .totp_secret
        .unwrap();
    assert_eq!(new.open_totp(ann, &stored), Ok(secret));
    assert!(old.open_totp(ann, &stored).is_err());
    let session = moved.session_by_hash("s1").await.unwrap().unwrap();
    assert_eq!(
        new.open_totp(ann, &session.pending_totp.unwrap()),
        Ok(pending)
    );
    assert!(f.open(Some(old)).server_secret(PAGES).await.is_err());
    let bare = SealedSecret::stored(after.2[0].1.clone());
    assert!(!bare.is_legacy());
}
