//! The parts of `quire db` that need no server: tables, carets, names, spans, texts.

use clap::Parser;
use serde_json::{Value, json};
use time::macros::datetime;

use super::render::{aligned, caret, result_table, size, sql_error, truncate, width};
use super::*;

#[test]
fn a_result_is_a_psql_table_with_numbers_right_and_null_spelled_out() {
    let result = json!({
        "columns": ["id", "name", "price", "tags", "ok"],
        "rows": [[1, "tea", 2.5, ["hot"], true], [12, "cake", null, null, false]],
        "rowCount": 2
    });
    assert_eq!(
        result_table(&result),
        [
            " id | name | price |  tags   |  ok",
            "----+------+-------+---------+-------",
            "  1 | tea  |   2.5 | [\"hot\"] | true",
            " 12 | cake | NULL  | NULL    | false",
            "(2 rows)",
        ]
        .join("\n")
    );
}

#[test]
fn the_count_line_says_row_rows_and_what_was_kept() {
    let one = json!({ "columns": ["n"], "rows": [[1]], "rowCount": 1 });
    assert!(result_table(&one).ends_with("\n(1 row)"));
    let none = json!({ "columns": ["n"], "rows": [], "rowCount": 0 });
    assert_eq!(result_table(&none), " n\n---\n(0 rows)");
    let cut = json!({ "columns": ["n"], "rows": [[1], [2]], "rowCount": 1500 });
    assert!(result_table(&cut).ends_with("(1500 rows; the first 2 shown)"));
}

#[test]
fn a_statement_without_columns_says_how_many_rows_it_touched() {
    let insert = json!({ "columns": [], "rows": [], "rowCount": 3 });
    assert_eq!(result_table(&insert), "OK, 3 rows affected");
    let one = json!({ "columns": [], "rows": [], "rowCount": 1 });
    assert_eq!(result_table(&one), "OK, 1 row affected");
}

#[test]
fn long_and_multi_line_cells_stay_on_one_short_line() {
    let long = "x".repeat(100);
    let result = json!({ "columns": ["t"], "rows": [[long], ["a\nb\r\nc\td"]], "rowCount": 2 });
    let table = result_table(&result);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[2], format!(" {}…", "x".repeat(39)));
    assert_eq!(lines[3], " a↵b↵c d");
    assert_eq!(truncate("short", 40), "short");
    assert_eq!(
        width(&truncate(&"日".repeat(30), 9)),
        9,
        "wide chars count twice"
    );
}

#[test]
fn wide_and_accented_cells_keep_the_bars_in_line() {
    let result =
        json!({ "columns": ["name", "n"], "rows": [["日本語", 1], ["é", 2]], "rowCount": 2 });
    let table = result_table(&result);
    let bars: Vec<usize> = table
        .lines()
        .take(4)
        .map(|l| width(l.split(['|', '+']).next().unwrap_or("")))
        .collect();
    assert!(bars.iter().all(|b| *b == bars[0]), "{table}");
    assert!(table.contains(" 日本語 |"), "{table}");
}

#[test]
fn the_caret_stands_under_the_position_as_psql_puts_it() {
    let sql = "select * from nowhere";
    let body = json!({
        "error": "sql_error",
        "message": "relation \"nowhere\" does not exist",
        "sqlstate": "42P01",
        "position": 15
    });
    assert_eq!(
        sql_error(sql, &body),
        [
            "ERROR: relation \"nowhere\" does not exist",
            "LINE 1: select * from nowhere",
            "                      ^",
        ]
        .join("\n")
    );
}

#[test]
fn the_caret_finds_its_line_in_multi_line_sql() {
    let sql = "create table t (id int);\ninsert into t values (1);\nselect * form t;\n";
    let at = sql.find("form").unwrap() + 1;
    assert_eq!(
        caret(sql, at as u64),
        Some((3, "select * form t;".to_owned(), 9))
    );
    // A position on a line's end (its `\n`) is on that line.
    assert_eq!(caret("ab\ncd", 3), Some((1, "ab".to_owned(), 2)));
    assert_eq!(
        caret("a;\r\nselect x y", 12),
        Some((2, "select x y".to_owned(), 7))
    );
}

#[test]
fn the_position_counts_characters_and_the_caret_columns() {
    // PostgreSQL counts characters: é is one, though two bytes.
    let sql = "select 'é', * form t";
    let at = sql.chars().position(|c| c == 'f').unwrap() + 1;
    assert_eq!(caret(sql, at as u64).unwrap().2, 14);
    // A CJK character is one character but two columns wide.
    let sql = "select '日本', * form t";
    let at = sql.chars().position(|c| c == 'f').unwrap() + 1;
    let (_, line, column) = caret(sql, at as u64).unwrap();
    assert_eq!(column, 17);
    assert_eq!(width(&line[..line.find("form").unwrap()]), 17);
    // Tabs are shown as one space each, so the caret counts them as one.
    assert_eq!(
        caret("\tselect x y", 11),
        Some((1, " select x y".to_owned(), 10))
    );
}

#[test]
fn a_position_at_or_past_the_end() {
    assert_eq!(caret("select (", 9), Some((1, "select (".to_owned(), 8)));
    assert_eq!(caret("select (", 10), None);
    assert_eq!(caret("select (", 0), None);
    let body = json!({ "message": "syntax error", "position": 99 });
    assert_eq!(sql_error("select (", &body), "ERROR: syntax error");
}

#[test]
fn a_long_line_is_cut_around_the_caret() {
    let sql = format!(
        "select {} from nowhere where {}",
        "a, ".repeat(40),
        "x = 1, ".repeat(20)
    );
    let at = sql.find("nowhere").unwrap() + 1;
    let (_, line, column) = caret(&sql, at as u64).unwrap();
    assert!(line.starts_with("...") && line.ends_with("..."), "{line}");
    assert!(width(&line) <= 72 + 6, "{line}");
    assert_eq!(&line[column..column + 7], "nowhere", "{line}");
}

#[test]
fn detail_and_hint_follow_the_caret() {
    let body = json!({
        "message": "insert or update on table \"b\" violates foreign key constraint",
        "detail": "Key (a_id)=(9) is not present in table \"a\".",
        "hint": "Insert the row of a first.",
    });
    let text = sql_error("insert into b values (9)", &body);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[1].starts_with("DETAIL: Key (a_id)"));
    assert_eq!(lines[2], "HINT: Insert the row of a first.");
}

#[test]
fn lists_align_and_sizes_read_as_people_say_them() {
    let rows = vec![
        vec!["shop".to_owned(), "日本".to_owned(), "x".to_owned()],
        vec!["crm_2".to_owned(), "CRM".to_owned(), "y".to_owned()],
    ];
    assert_eq!(
        aligned(&["SLUG", "NAME", "ID"], &rows),
        "SLUG   NAME  ID\nshop   日本  x\ncrm_2  CRM   y"
    );
    assert_eq!(size(None), "-");
    assert_eq!(size(Some(512)), "512 B");
    assert_eq!(size(Some(7_643_315)), "7.3 MiB");
    assert_eq!(size(Some(3 << 30)), "3.0 GiB");
}

fn target(name: &str) -> Target {
    Target {
        database: name.to_owned(),
        project: None,
    }
}

#[tokio::test]
async fn an_id_is_taken_as_is_and_a_slug_is_looked_up() {
    // No key and no server: an id needs neither, a slug needs both.
    let api = Api::new("http://127.0.0.1:9", None).unwrap();
    let id = "0193a5f2-7c1e-7b3d-9a42-5d8e6f1c2b3a";
    assert_eq!(id_of(&api, &target(id)).await.unwrap(), id);
    let Err(Failure::Local(m)) = id_of(&api, &target("shop")).await else {
        panic!("a slug asks the server");
    };
    assert!(m.contains("not logged in"), "{m}");

    let list = json!({ "databases": [
        { "id": "a", "slug": "shop" }, { "id": "b", "slug": "shop_2" }
    ], "project": "ann", "available": true });
    assert_eq!(find_in(&list, "shop_2").unwrap()["id"], "b");
    assert!(find_in(&list, "sho").is_none());
    assert!(find_in(&json!({ "databases": [] }), "shop").is_none());
}

#[test]
fn expires_in_takes_units_and_sums() {
    assert_eq!(span("2h").ok(), Some(Duration::hours(2)));
    assert_eq!(span("1h30m").ok(), Some(Duration::minutes(90)));
    assert_eq!(span("45s").ok(), Some(Duration::seconds(45)));
    assert_eq!(span("7d").ok(), Some(Duration::days(7)));
    assert_eq!(span("2w").ok(), Some(Duration::weeks(2)));
    for bad in ["", "2", "h", "2x", "0m", "-1h", "2 h", "1.5h", "h2"] {
        assert!(span(bad).is_err(), "{bad:?} is refused");
    }
    let now = datetime!(2026-11-28 08:00:00.123 UTC);
    assert_eq!(
        expires_after(now, "2h").ok().as_deref(),
        Some("2026-11-28T10:00:00Z")
    );
    assert!(checked_time("2026-12-01T09:00:00Z").is_ok());
    assert!(checked_time("tomorrow").is_err());
}

#[test]
fn the_secret_warns_about_the_service_role_key_and_shows_python() {
    let text = secret_text(
        "shop",
        &json!({
            "jwtSecret": "s3cret", "anonKey": "anon.jwt.x", "serviceRoleKey": "svc.jwt.y",
            "url": "http://h/db/shop", "restUrl": "http://h/db/shop/rest/v1",
            "authUrl": "http://h/db/shop/auth/v1"
        }),
    );
    assert!(text.contains("service role key:  svc.jwt.y"), "{text}");
    assert!(text.contains("bypasses row-level security"), "{text}");
    assert!(text.contains("never ship it in a page"), "{text}");
    assert!(text.contains("quire db rotate-secret shop"), "{text}");
    assert!(
        text.contains(
            "A Quire key with the base app acts\nas service_role too and is revocable one by one"
        ),
        "{text}"
    );
    assert!(
        text.contains("create_client(\"http://h/db/shop\", \"anon.jwt.x\")"),
        "{text}"
    );
}

#[test]
fn a_list_and_a_database_read_plainly() {
    let db = json!({
        "id": "0193", "slug": "shop", "name": "Shop", "status": "ready", "sizeBytes": 2048,
        "expiresAt": null, "project": "ann", "createdAt": "2026-11-28T08:00:00Z",
        "dataApi": { "enabled": false, "url": "http://h/db/shop" }
    });
    let list = json!({ "databases": [db], "project": "ann", "available": true });
    assert_eq!(
        list_text(&list),
        "SLUG  NAME  SIZE     DATA API  EXPIRES  ID\nshop  Shop  2.0 KiB  off       never    0193"
    );
    assert_eq!(
        list_text(&json!({ "databases": [], "project": "ann" })),
        "No databases in project ann."
    );
    let shown = details(&db);
    assert!(
        shown.contains("data API  off (quire db enable-api shop)"),
        "{shown}"
    );
    assert!(shown.contains("expires   never"), "{shown}");
}

#[test]
fn open_tables_are_warned_of_with_what_anon_may_do_and_nothing_else_is() {
    let open = json!([
        { "name": "notes", "kind": "table", "privileges": ["select", "insert", "update", "delete"] },
        { "name": "everything", "kind": "view", "privileges": ["select"] }
    ]);
    let warned = open::warning(&open).unwrap_or_default();
    let lines: Vec<&str> = warned.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "WARNING: 2 tables are open to anon, with no row-level security:",
            "  TABLE       KIND   ANON MAY",
            "  notes       table  select, insert, update, delete",
            "  everything  view   select",
        ]
    );
    assert!(
        lines[4].starts_with("Anyone with the anon key")
            && warned.contains("(alter table NAME enable row level security; create policy …)"),
        "{warned}"
    );
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{warned}");
    let one = open::warning(&json!([open[0].clone()])).unwrap_or_default();
    assert!(one.starts_with("WARNING: 1 table is open to anon"), "{one}");
    // None open, or the server did not say: no warning.
    for quiet in [json!([]), Value::Null] {
        assert_eq!(open::warning(&quiet), None);
        assert_eq!(open::followed_by_warning("OK".into(), &quiet), "OK");
    }
    assert_eq!(
        open::followed_by_warning("OK, 0 rows affected".into(), &open),
        format!("OK, 0 rows affected\n\n{warned}")
    );

    let list = json!({ "databases": [
        { "slug": "shop", "openTables": open },
        { "slug": "safe", "openTables": [] },
        { "slug": "unread" }
    ] });
    assert_eq!(
        open::list_warnings(&list).as_deref(),
        Some(
            "WARNING: shop leaves tables open to anon, with no row-level security: notes, \
             everything (quire db get shop)"
        )
    );
    assert_eq!(open::list_warnings(&json!({ "databases": [] })), None);
}

#[test]
fn the_command_line_parses_as_documented() {
    let parse = |args: &[&str]| crate::Cli::try_parse_from(args.iter().copied());
    assert!(parse(&["quire", "db", "sql", "shop", "-c", "select 1"]).is_ok());
    assert!(parse(&["quire", "db", "rotate-secret", "shop", "--yes"]).is_ok());
    assert!(
        parse(&[
            "quire",
            "db",
            "rotate-secret",
            "shop",
            "--project",
            "p",
            "-y"
        ])
        .is_ok()
    );
    assert!(
        parse(&[
            "quire",
            "databases",
            "sql",
            "shop",
            "q.sql",
            "--project",
            "p"
        ])
        .is_ok()
    );
    assert!(parse(&["quire", "db", "sql", "shop", "q.sql", "-c", "select 1"]).is_err());
    assert!(parse(&["quire", "db", "create", "x", "--expires-in", "2h"]).is_ok());
    assert!(
        parse(&[
            "quire",
            "db",
            "create",
            "x",
            "--expires-in",
            "2h",
            "--expires-at",
            "t"
        ])
        .is_err()
    );
    assert!(parse(&["quire", "--json", "db", "delete", "shop", "-y"]).is_ok());
    <crate::Cli as clap::CommandFactory>::command().debug_assert();
}

#[test]
fn a_list_ends_with_the_accounts_quotas_when_the_server_gives_them() {
    let list = json!({
        "databases": [], "project": "ann", "available": true,
        "quota": {
            "databases": { "used": 3, "limit": 10 },
            "bytes": { "used": 25_270_272, "limit": 1_073_741_824 }
        }
    });
    assert_eq!(
        list_text(&list),
        "No databases in project ann.\n\n\
         This account has 3 of 10 databases, holding 24.1 MiB of 1.0 GiB (all its projects)."
    );
    let uncapped = json!({ "databases": [], "project": "ann", "quota": {
        "databases": { "used": 1, "limit": null }, "bytes": { "used": 10, "limit": null }
    }});
    assert!(
        list_text(&uncapped)
            .ends_with("This account has 1 databases, holding 10 B (all its projects).")
    );
}
