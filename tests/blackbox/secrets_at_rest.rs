//! A copy of the database forges nothing: the keys that sign are sealed under the key file,
//! so a cookie signed with what the database holds is refused by the real server. Rows an
//! older version stored bare are sealed at the next start and what they signed keeps
//! working; `admin rotate-secret-key` moves everything to a new key file, and a server
//! started with the old one stops with a clear error that shows no secret.

use std::io::{BufRead as _, BufReader};
use std::process::Stdio;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use diesel::{Connection as _, RunQueryDsl as _};
use quire_oauth::SigningKeyStore as _;
use quire_serving::{Claims, Signer};
use serde_json::json;

use crate::harness::{Backend, Server, TestDb, on_both_backends, setup};
use crate::serving::{publish, reply, set_cookie, site, visit_with, visitor, with};

on_both_backends!(a_copy_of_the_database_forges_nothing);

const PAGES_KEY: &str = "pages-signing-key";

#[derive(diesel::QueryableByName)]
struct Value {
    #[diesel(sql_type = diesel::sql_types::Text)]
    v: String,
}

/// One text value selected as `v`, read beside the server as a copy's holder would.
async fn raw_value(db: &TestDb, sql: &str) -> String {
    if let Some(path) = db.url.strip_prefix("sqlite://") {
        let mut conn = diesel::SqliteConnection::establish(path).unwrap();
        let rows = diesel::sql_query(sql).load::<Value>(&mut conn).unwrap();
        return rows.into_iter().next().expect("a row").v;
    }
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client.query_one(sql, &[]).await.unwrap().get("v")
}

async fn raw_exec(db: &TestDb, sql: &str) {
    if let Some(path) = db.url.strip_prefix("sqlite://") {
        let mut conn = diesel::SqliteConnection::establish(path).unwrap();
        diesel::sql_query(sql).execute(&mut conn).unwrap();
        return;
    }
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client.batch_execute(sql).await.unwrap();
}

async fn stored_pages_key(db: &TestDb) -> String {
    raw_value(
        db,
        "SELECT value AS v FROM server_secrets WHERE name = 'pages-signing-key'",
    )
    .await
}

/// `quire_unlock_secret=<claims>.<tag>` signed with `key`.
fn cookie(key: &[u8], claims: &Claims) -> String {
    format!("quire_unlock_secret={}", Signer::new(key).sign(claims))
}

async fn status_with(srv: &Server, cookie: &str) -> u16 {
    visit_with(srv, "/ann/secret/", &[("cookie", cookie)])
        .await
        .status
}

async fn jwks_kids(srv: &Server) -> Vec<String> {
    let v: serde_json::Value = srv
        .http
        .get(format!("{}/.well-known/jwks.json", srv.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap().to_owned())
        .collect()
}

async fn a_copy_of_the_database_forges_nothing(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let body = with(
        with(site("secret"), "access", json!("password")),
        "password",
        json!("open sesame"),
    );
    publish(&srv, &ann.key, body).await;
    let owner = srv.owner("ann");
    let r = reply(
        visitor()
            .post(format!("{owner}/-/unlock"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("origin", &owner)
            .body("handle=ann&slug=secret&next=&password=open+sesame")
            .send()
            .await
            .unwrap(),
    )
    .await;
    let (genuine, _) = set_cookie(&r, "quire_unlock_secret").expect("unlock cookie");
    assert_eq!(status_with(&srv, &genuine).await, 200);
    let token = genuine.split_once('=').unwrap().1;
    let claims: Claims = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(token.split_once('.').unwrap().0)
            .unwrap(),
    )
    .unwrap();
    let kids = jwks_kids(&srv).await;
    assert_eq!(kids.len(), 1);

    // What a copy of the database holds is sealed; signing with it, as one would with the
    // key, gives a cookie the server refuses. With the key file too it would be the genuine
    // cookie, so this test can tell a sealed key from a bare one.
    let stored = stored_pages_key(&db).await;
    assert!(stored.starts_with("v1."), "{stored}");
    assert_eq!(
        status_with(&srv, &cookie(stored.as_bytes(), &claims)).await,
        401
    );
    let pages_key = db.store().server_secret(PAGES_KEY).await.unwrap();
    assert!(!stored.contains(&pages_key));
    assert_eq!(cookie(pages_key.as_bytes(), &claims), genuine);
    let captcha = raw_value(
        &db,
        "SELECT value AS v FROM server_secrets WHERE name = 'captcha'",
    )
    .await;
    assert!(captcha.starts_with("v1."), "{captcha}");
    // The OAuth private key is no PKCS#8 document in any encoding, and nothing signs with it.
    let private = raw_value(
        &db,
        &format!(
            "SELECT private_key AS v FROM oauth_signing_keys WHERE kid = '{}'",
            kids[0]
        ),
    )
    .await;
    assert!(private.starts_with("v1."), "{private}");
    assert!(STANDARD.decode(&private).is_err());
    let der = db.store().signing_keys().await.unwrap()[0]
        .private_pkcs8
        .clone();
    let sealed = URL_SAFE_NO_PAD
        .decode(private.trim_start_matches("v1."))
        .unwrap();
    assert!(!sealed.windows(der.len()).any(|w| w == der.as_slice()));
    drop(srv);

    // A key an older version stored bare is sealed at the next start, and the cookies it
    // signed keep working.
    raw_exec(
        &db,
        "UPDATE server_secrets SET value = 'an-older-bare-key' WHERE name = 'pages-signing-key'",
    )
    .await;
    let srv = db.start();
    let resealed = stored_pages_key(&db).await;
    assert!(resealed.starts_with("v1."), "{resealed}");
    assert!(!resealed.contains("an-older-bare-key"));
    let older = cookie(b"an-older-bare-key", &claims);
    assert_eq!(status_with(&srv, &older).await, 200);
    drop(srv);

    // Rotation: every sealed value moves to the new file in one go; a server on the new file
    // keeps every key (cookies, OAuth keys), one on the old file stops with a clear error.
    let out = db.admin(
        &["rotate-secret-key", "--new-key-file", "data/new.key"],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let done: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&done["serverSecrets"], &done["oauthKeys"]),
        (&json!(2), &json!(1)),
        "{done}"
    );
    assert_ne!(stored_pages_key(&db).await, resealed);

    let mut child = db
        .command()
        .arg("serve")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    if !line.is_empty() {
        child.kill().unwrap();
        panic!("started under the old key file: {line}");
    }
    let failed = child.wait_with_output().unwrap();
    assert!(!failed.status.success());
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(
        err.contains("server secret pages-signing-key does not open")
            && err.contains("QUIRE_SECRET_KEY_FILE"),
        "{err}"
    );
    assert!(!err.contains("an-older-bare-key"), "{err}");

    let srv = db.start_with(&[("QUIRE_SECRET_KEY_FILE", "data/new.key")]);
    assert_eq!(status_with(&srv, &older).await, 200);
    assert_eq!(jwks_kids(&srv).await, kids);
}
