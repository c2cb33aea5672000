//! `quire db` as a person uses it, against the real server: a database made, listed, fed SQL
//! on standard input and shown as a table, a table left open to the anon key warned of
//! (after the SQL, in the database and the list) until row-level security closes it, an SQL
//! mistake pointed at with a caret, the data API's keys and their rotation, its settings
//! shown and changed, then the database deleted; and a server without a cluster saying so
//! plainly.

use std::io::Write;
use std::process::Stdio;

use serde_json::Value;

use crate::cli::User;
use crate::databases::{cluster_has, tenant_names, with_cluster};
use crate::harness::{Backend, on_both_backends, setup};

/// Runs `quire` with `key`, `stdin` written to it: (exit code, stdout, stderr).
fn run(user: &User, key: &str, args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    let mut child = user
        .command(args)
        .env("QUIRE_KEY", key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if !stdin.is_empty() {
        input.write_all(stdin.as_bytes()).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

on_both_backends!(a_server_without_a_cluster_says_so_from_the_cli);

async fn a_server_without_a_cluster_says_so_from_the_cli(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let user = User::new(&srv);
    let (code, out, err) = run(&user, &ann.key, &["db", "list"], "");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("this server has no database service: ")
            && out.contains("QUIRE_DATABASES_URL"),
        "{out}"
    );
    let (code, out, _) = run(&user, &ann.key, &["--json", "db", "list"], "");
    assert_eq!(code, Some(0));
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["available"], false);
    assert_eq!(listed["databases"], serde_json::json!([]));

    let (code, _, err) = run(&user, &ann.key, &["db", "create", "shop"], "");
    assert_eq!(code, Some(1));
    assert!(
        err.contains("this server has no database service: ")
            && err.contains("QUIRE_DATABASES_URL"),
        "{err}"
    );
    let (code, _, err) = run(&user, &ann.key, &["db", "sql", "shop"], "select 1");
    assert_eq!(code, Some(1));
    assert!(err.contains("this server has no database service"), "{err}");
}

/// The test that needs the cluster, in a module of its own: each use of the macro makes its
/// `sqlite` and `postgres` modules.
mod on_a_cluster {
    use super::*;

    on_both_backends!(
        #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
        a_database_is_made_queried_and_deleted_from_the_cli
    );
}

async fn a_database_is_made_queried_and_deleted_from_the_cli(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let user = User::new(&srv);
    let quire = |args: &[&str], stdin: &str| run(&user, &ann.key, args, stdin);

    let (code, out, err) = quire(
        &[
            "db",
            "create",
            "shop",
            "--name",
            "Shop",
            "--expires-in",
            "2h",
        ],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("Created database shop"), "{out}");
    assert!(out.contains("project   ann"), "{out}");
    assert!(
        !out.contains("expires   never"),
        "--expires-in was sent: {out}"
    );

    let (code, out, err) = quire(&["db", "list"], "");
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("SLUG  NAME  SIZE"), "{out}");
    assert!(lines[1].starts_with("shop  Shop  "), "{out}");
    let (_, out, _) = quire(&["--json", "db", "list"], "");
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["available"], true);
    assert_eq!(listed["databases"][0]["slug"], "shop");
    let id = listed["databases"][0]["id"].as_str().unwrap().to_owned();
    let (code, out, _) = quire(&["db", "get", &id], "");
    assert_eq!(code, Some(0));
    assert!(
        out.contains("data API  off (quire db enable-api shop)"),
        "{out}"
    );

    // SQL on standard input, several statements: the last one's rows as psql shows them.
    let (code, out, err) = quire(
        &["db", "sql", "shop"],
        "create table items (id serial primary key, name text);\n\
         insert into items (name) values ('tea'), ('日本茶'), (null);\n\
         select id, name from items order by id\n",
    );
    assert_eq!(code, Some(0), "{err}");
    let (rows, warning) = out.split_once("\n\n").unwrap_or((&out, ""));
    assert_eq!(
        rows,
        " id |  name\n----+--------\n  1 | tea\n  2 | 日本茶\n  3 | NULL\n(3 rows)"
    );
    // The new table has Supabase's grants and no row-level security: said after the rows.
    let warned = [
        "WARNING: 1 table is open to anon, with no row-level security:",
        "  TABLE  KIND   ANON MAY",
        "  items  table  select, insert, update, delete",
    ];
    assert!(warning.starts_with(&warned.join("\n")), "{out}");
    assert!(warning.contains("enable row level security"), "{out}");
    let (_, out, _) = quire(&["db", "get", "shop"], "");
    assert!(out.contains(&warned.join("\n")), "{out}");
    let (_, out, _) = quire(&["db", "list"], "");
    assert!(
        out.contains(
            "WARNING: shop leaves a table open to anon, with no row-level security: items \
             (quire db get shop)"
        ),
        "{out}"
    );
    let (_, out, _) = quire(&["--json", "db", "get", "shop"], "");
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["openTables"][0]["name"], "items");
    // Closed: no warning any more.
    let (code, out, err) = quire(
        &[
            "db",
            "sql",
            "shop",
            "-c",
            "alter table items enable row level security",
        ],
        "",
    );
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "OK, 0 rows affected\n"),
        "{err}"
    );
    let (_, out, _) = quire(&["db", "list"], "");
    assert!(!out.contains("WARNING"), "{out}");
    let (code, out, err) = quire(
        &[
            "db",
            "sql",
            "shop",
            "-c",
            "insert into items (name) values ('cake')",
        ],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "OK, 1 row affected\n");
    let file = user.home.path().join("count.sql");
    std::fs::write(&file, "select count(*) as n from items").unwrap();
    let (_, out, _) = quire(&["db", "sql", "shop", file.to_str().unwrap()], "");
    assert_eq!(out, " n\n---\n 4\n(1 row)\n");

    // PostgreSQL's refusal, with a caret under the place on its own line; exit status 1.
    let (code, out, err) = quire(&["db", "sql", "shop"], "select id\nfrom nowhere\n");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        err.starts_with(
            "ERROR: relation \"nowhere\" does not exist\nLINE 2: from nowhere\n             ^"
        ),
        "{err}"
    );
    let (code, out, _) = quire(
        &["--json", "db", "sql", "shop", "-c", "select * from nowhere"],
        "",
    );
    assert_eq!(code, Some(1));
    let refused: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(refused["error"], "sql_error");
    assert_eq!(refused["sqlstate"], "42P01");
    assert_eq!(refused["position"], 15);

    // The data API: on, its keys and how to use them, reload, off.
    let (code, out, err) = quire(&["db", "enable-api", "shop"], "");
    assert_eq!(code, Some(0), "{err}");
    let url = format!("{}/db/shop", srv.base);
    assert!(out.contains(&url), "{out}");
    let (_, out, _) = quire(&["--json", "db", "secret", "shop"], "");
    let secret: Value = serde_json::from_str(&out).unwrap();
    let anon = secret["anonKey"].as_str().unwrap();
    assert_eq!(anon.split('.').count(), 3);
    let (code, out, err) = quire(&["db", "secret", "shop"], "");
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(&format!("anon key:          {anon}")), "{out}");
    assert!(out.contains("bypasses row-level security"), "{out}");
    assert!(
        out.contains(&format!("create_client(\"{url}\", \"{anon}\")")),
        "{out}"
    );
    let (code, _, err) = quire(&["db", "reload", "shop"], "");
    assert_eq!(code, Some(0), "{err}");

    // Rotation: not without --yes off a terminal; then new keys, the old ones refused.
    let (code, _, err) = quire(&["db", "rotate-secret", "shop"], "y\n");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("confirm with --yes"), "{err}");
    let (_, out, _) = quire(&["--json", "db", "secret", "shop"], "");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        secret,
        "not rotated"
    );
    let (code, out, err) = quire(&["db", "rotate-secret", "shop", "--yes"], "");
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("Rotated the JWT secret of shop"), "{out}");
    assert!(!out.contains(anon), "{out}");
    assert!(
        out.contains(
            "A Quire key with the base app acts\nas service_role too and is revocable one by one"
        ),
        "{out}"
    );
    let (code, out, err) = quire(&["--json", "db", "rotate-secret", "shop", "--yes"], "");
    assert_eq!(code, Some(0), "{err}");
    let rotated: Value = serde_json::from_str(&out).unwrap();
    let (_, out, _) = quire(&["--json", "db", "secret", "shop"], "");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), rotated);
    let read = |key: &str| {
        srv.http
            .get(format!("{url}/rest/v1/items"))
            .header("apikey", key)
            .send()
    };
    assert_eq!(read(anon).await.unwrap().status().as_u16(), 401);
    let fresh = rotated["serviceRoleKey"].as_str().unwrap();
    assert_eq!(read(fresh).await.unwrap().status().as_u16(), 200);

    // The settings PostgREST leaves off: shown, changed, then used by the data API.
    let (code, out, err) = quire(&["db", "settings", "shop"], "");
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("  aggregates  off\n"), "{out}");
    let (code, out, err) = quire(
        &[
            "db",
            "settings",
            "shop",
            "--aggregates",
            "on",
            "--schemas",
            "public,later",
        ],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("Changed the data API settings of shop."),
        "{out}"
    );
    assert!(out.contains("  aggregates  on\n"), "{out}");
    assert!(
        out.contains("warning: shop has no schema later yet"),
        "{out}"
    );
    let (_, out, _) = quire(&["db", "get", "shop"], "");
    assert!(
        out.contains("settings  schemas public, later; aggregates on"),
        "{out}"
    );
    let counted = srv
        .http
        .get(format!("{url}/rest/v1/items?select=count()"))
        .header("apikey", fresh)
        .send()
        .await
        .unwrap();
    assert_eq!(counted.status().as_u16(), 200);
    let (code, _, err) = quire(&["db", "settings", "shop", "--max-rows", "0"], "");
    assert_eq!(code, Some(1));
    assert!(err.contains("maxRows must be a whole number"), "{err}");

    let (code, _, err) = quire(&["db", "disable-api", "shop"], "");
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = quire(&["db", "reload", "shop"], "");
    assert_eq!(code, Some(1));
    assert!(err.contains("data_api_disabled"), "{err}");

    // Not a terminal and no --yes: nothing deleted, exit 2.
    let (code, _, err) = quire(&["db", "delete", "shop"], "");
    assert_eq!(code, Some(2), "{err}");
    let (database, _, _) = tenant_names(&id);
    assert!(cluster_has("database", &database).await);
    let (code, out, err) = quire(&["db", "delete", "shop", "--yes"], "");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "Deleted database shop.\n");
    assert!(!cluster_has("database", &database).await);
    let (code, _, err) = quire(&["db", "get", "shop"], "");
    assert_eq!(code, Some(1));
    assert!(
        err.contains("no database named \"shop\" in project ann"),
        "{err}"
    );
}
