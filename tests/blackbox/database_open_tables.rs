//! The tables a database leaves open to whoever holds its anon key, through the database
//! API on both metadata databases, with tenant databases on the test cluster: `openTables`
//! on a database fetched and listed, and on the answer to SQL, naming each table and view
//! of `public` that `anon` reaches with no row-level security, and what `anon` may do to
//! it; the anon key indeed reads and writes what is listed; row-level security, a
//! `security_invoker` view and a revoke take them off the list.

use serde_json::{Value, json};

use crate::databases::{DATABASES, create, enable_data_api, sql, with_cluster};
use crate::harness::{Backend, Server, on_both_backends};

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    open_tables_are_listed_where_a_database_is_shown_until_closed
);

fn open(name: &str, kind: &str, privileges: &[&str]) -> Value {
    json!({ "name": name, "kind": kind, "privileges": privileges })
}

const ALL: &[&str] = &["select", "insert", "update", "delete"];

/// A request to `/db/exposed/rest/v1/{path}` with the anon key.
async fn as_anon(srv: &Server, anon: &str, method: reqwest::Method, path: &str) -> u16 {
    let mut request = srv
        .http
        .request(
            method.clone(),
            format!("{}/db/exposed/rest/v1/{path}", srv.base),
        )
        .header("apikey", anon)
        .header("prefer", "return=minimal");
    if method == reqwest::Method::POST {
        request = request.json(&json!({ "id": 9, "body": "anyone's" }));
    }
    request.send().await.unwrap().status().as_u16()
}

async fn open_tables_are_listed_where_a_database_is_shown_until_closed(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let made = create(&srv, &ann.key, json!({ "slug": "exposed" })).await;
    let id = made["id"].as_str().unwrap().to_owned();
    let sealed = create(&srv, &ann.key, json!({ "slug": "sealed" })).await;
    let one = format!("{DATABASES}/{id}");
    let fetched = srv.get(&one, &ann.key).await;
    assert_eq!(fetched.assert_status(200)["openTables"], json!([]));

    // Tutorial SQL: tables in `public` get Supabase's grants, so they are open at once.
    let ran = sql(
        &srv,
        &ann.key,
        &id,
        "create table notes (id int primary key, body text);
         insert into notes values (1, 'private');
         create view everything as select * from notes;
         create table guarded (id int); alter table guarded enable row level security;
         create table kept (id int); revoke all on kept from anon;
         create table shown (id int); revoke all on shown from anon; grant select on shown to anon;
         create schema private; create table private.elsewhere (id int);",
    )
    .await;
    assert_eq!(
        ran.assert_status(200),
        &json!({
            "columns": [],
            "rows": [],
            "rowCount": 0,
            "openTables": [
                open("everything", "view", ALL),
                open("notes", "table", ALL),
                open("shown", "table", &["select"]),
            ]
        })
    );
    let listed_open = json!([
        open("everything", "view", ALL),
        open("notes", "table", ALL),
        open("shown", "table", &["select"]),
    ]);
    let fetched = srv.get(&one, &ann.key).await;
    let fetched = fetched.assert_status(200);
    assert_eq!(fetched["openTables"], listed_open);
    assert_eq!(
        fetched["slug"], "exposed",
        "the rest of the database as ever"
    );
    let listed = srv.get(DATABASES, &ann.key).await;
    let by_slug: Vec<(Value, Value)> = listed.assert_status(200)["databases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["slug"].clone(), d["openTables"].clone()))
        .collect();
    assert_eq!(
        by_slug,
        [
            (json!("sealed"), json!([])),
            (json!("exposed"), listed_open.clone()),
        ]
    );
    // The answer to a creation does not read it: a new database has none.
    assert!(sealed.get("openTables").is_none(), "{sealed}");

    // What the warning says is so: the anon key reads every row and writes.
    let secret = enable_data_api(&srv, &ann.key, &id).await;
    let anon = secret["anonKey"].as_str().unwrap();
    let read = srv
        .http
        .get(format!("{}/db/exposed/rest/v1/notes", srv.base))
        .header("apikey", anon)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
    assert_eq!(
        read.json::<Value>().await.unwrap(),
        json!([{ "id": 1, "body": "private" }])
    );
    assert_eq!(
        as_anon(&srv, anon, reqwest::Method::POST, "notes").await,
        201
    );

    // Row-level security on the table, the view running as its caller: none left open,
    // and the anon key meets row-level security.
    let closed = sql(
        &srv,
        &ann.key,
        &id,
        "alter table notes enable row level security;
         alter view everything set (security_invoker = on);
         revoke select on shown from anon;",
    )
    .await;
    assert_eq!(closed.assert_status(200)["openTables"], json!([]));
    assert_eq!(
        srv.get(&one, &ann.key).await.assert_status(200)["openTables"],
        json!([])
    );
    let read = srv
        .http
        .get(format!("{}/db/exposed/rest/v1/notes", srv.base))
        .header("apikey", anon)
        .send()
        .await
        .unwrap();
    assert_eq!(read.json::<Value>().await.unwrap(), json!([]));
    assert_eq!(
        as_anon(&srv, anon, reqwest::Method::POST, "notes").await,
        401,
        "no policy lets anon insert"
    );
}
