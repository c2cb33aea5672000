//! The SQLite migration that rebuilds `links` (`2026-11-28-090000_link_targets`) run over a
//! database holding a page's link with codes, an allow entry, daily views and a lease:
//! every row comes through, as a page's link, and the tables that point at `links` point at
//! the new one. The connection has foreign keys on, as the one that migrates a server's
//! database does (diesel turns them on), so a cascade would show.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel_migrations::MigrationHarness;

use quire_store::SQLITE_MIGRATIONS;

/// The version of the migration before it (`2026-11-27-110000_oauth_grant_project`).
const BEFORE: &str = "20261127110000";
/// Its own version (`2026-11-28-090000_link_targets`).
const LINK_TARGETS: &str = "20261128090000";

#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct LinkAfter {
    #[diesel(sql_type = Text)]
    target_kind: String,
    #[diesel(sql_type = Nullable<Text>)]
    target_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    target_url: Option<String>,
    #[diesel(sql_type = Text)]
    alias: String,
    #[diesel(sql_type = BigInt)]
    view_count: i64,
    #[diesel(sql_type = BigInt)]
    views_leased: i64,
    #[diesel(sql_type = BigInt)]
    redirect_status: i64,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Parent {
    #[diesel(sql_type = Text)]
    table: String,
}

fn count(conn: &mut SqliteConnection, sql: &str) -> i64 {
    diesel::sql_query(sql)
        .get_result::<Count>(conn)
        .expect("count")
        .n
}

#[test]
fn rebuilding_links_keeps_every_page_link_and_what_points_at_it() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("q.db");
    let mut conn = SqliteConnection::establish(path.to_str().expect("path")).expect("open");
    loop {
        let ran = conn
            .run_next_migration(SQLITE_MIGRATIONS)
            .expect("an earlier migration");
        if ran.to_string().replace('-', "") == BEFORE {
            break;
        }
    }
    // As the server writes them, with foreign keys on (as on the connection that migrates).
    conn.batch_execute(
        "INSERT INTO accounts (id, email, handle, default_project_id, created_at) \
           VALUES ('a1', 'ann@example.com', 'ann', 'j1', '2026-11-27T00:00:00.000000Z'); \
         INSERT INTO projects (id, account_id, name, tag, color, slug, status, created_at, \
           updated_at) VALUES ('j1', 'a1', 'Ann', '', '#000000', 'ann', 'active', \
           '2026-11-27T00:00:00.000000Z', '2026-11-27T00:00:00.000000Z'); \
         INSERT INTO links (id, page_id, account_id, project_id, public_id, alias, access, \
           password_hash, expires_at, max_views, view_count, created_at, updated_at, views_leased) \
         VALUES ('l1', 'p1', 'a1', 'j1', 'PUBLICID01', 'launch', 'allow_list', NULL, NULL, 9, 4, \
           '2026-11-27T00:00:00.000000Z', '2026-11-27T00:00:00.000000Z', 2); \
         INSERT INTO link_codes (code, link_id) VALUES ('PUBLICID01', 'l1'), ('launch', 'l1'); \
         INSERT INTO link_allow (id, link_id, account_id, email, created_at) \
           VALUES ('e1', 'l1', NULL, 'bob@example.com', '2026-11-27T00:00:00.000000Z'); \
         INSERT INTO link_views_daily (link_id, day, views) VALUES ('l1', '2026-11-27', 4); \
         INSERT INTO view_leases (link_id, holder, views, expires_at) \
           VALUES ('l1', 'h1', 2, '2026-11-27T00:02:00.000000Z');",
    )
    .expect("rows of the old schema");

    conn.run_pending_migrations(SQLITE_MIGRATIONS)
        .expect("the rest");

    let links = diesel::sql_query(
        "SELECT target_kind, target_id, target_url, alias, view_count, views_leased, \
           redirect_status FROM links",
    )
    .load::<LinkAfter>(&mut conn)
    .expect("links");
    assert_eq!(
        links,
        [LinkAfter {
            target_kind: "page".into(),
            target_id: Some("p1".into()),
            target_url: None,
            alias: "launch".into(),
            view_count: 4,
            views_leased: 2,
            redirect_status: 302,
        }]
    );
    for (table, rows) in [
        ("link_codes", 2),
        ("link_allow", 1),
        ("link_views_daily", 1),
        ("view_leases", 1),
    ] {
        assert_eq!(
            count(&mut conn, &format!("SELECT COUNT(*) AS n FROM {table}")),
            rows,
            "{table}"
        );
        let parents = diesel::sql_query(format!(
            "SELECT \"table\" FROM pragma_foreign_key_list('{table}')"
        ))
        .load::<Parent>(&mut conn)
        .expect("foreign keys");
        assert!(
            parents.iter().any(|p| p.table == "links"),
            "{table} still points at links"
        );
    }
    // Reverted (with every later migration) and applied again, the same rows are there.
    loop {
        let reverted = conn.revert_last_migration(SQLITE_MIGRATIONS).expect("down");
        if reverted.to_string().replace('-', "") == LINK_TARGETS {
            break;
        }
    }
    assert_eq!(
        count(
            &mut conn,
            "SELECT COUNT(*) AS n FROM links WHERE page_id = 'p1'"
        ),
        1
    );
    assert_eq!(count(&mut conn, "SELECT COUNT(*) AS n FROM link_codes"), 2);
    conn.run_pending_migrations(SQLITE_MIGRATIONS)
        .expect("up again");
    assert_eq!(count(&mut conn, "SELECT COUNT(*) AS n FROM link_codes"), 2);
    assert_eq!(count(&mut conn, "SELECT COUNT(*) AS n FROM view_leases"), 1);

    // Deleting the link takes what points at it, as before.
    conn.batch_execute("DELETE FROM links WHERE id = 'l1';")
        .expect("delete");
    assert_eq!(count(&mut conn, "SELECT COUNT(*) AS n FROM link_codes"), 0);
    assert_eq!(count(&mut conn, "SELECT COUNT(*) AS n FROM view_leases"), 0);
}
