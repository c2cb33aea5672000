//! The tables a database leaves open to `anon`: a table of `public` with row-level security
//! off and a view that runs as its owner are open while `anon` holds a privilege on them;
//! what RLS, `security_invoker`, a revoke or another schema closes is not; the answer to
//! the owner's SQL says what that SQL left, a transaction it left open rolled back first;
//! and several databases are read at once.

use quire_databases::{Cluster, OpenTable, TenantAccess};
use quire_pgcluster::PgCluster;

use crate::{cluster, created};

fn open(name: &str, kind: &str, privileges: &[&str]) -> OpenTable {
    OpenTable {
        name: name.into(),
        kind: kind.into(),
        privileges: privileges.iter().map(|p| (*p).to_owned()).collect(),
    }
}

const ALL: &[&str] = &["select", "insert", "update", "delete"];

async fn open_after(cluster: &PgCluster, tenant: &TenantAccess, sql: &str) -> Vec<OpenTable> {
    let outcome = cluster.run_sql(tenant, sql, 10).await.unwrap();
    let after = outcome
        .open_tables
        .expect("the open tables are read after the SQL");
    // The same as a read of its own.
    let read = cluster.open_tables(std::slice::from_ref(tenant)).await;
    assert_eq!(read.get(&tenant.names.database), Some(&after), "{sql}");
    after
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn what_anon_reaches_without_rls_is_open_and_what_closes_it_is_not() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    assert_eq!(open_after(&cluster, &tenant, "select 1").await, []);

    let made = "create table notes (id int primary key, body text);
        create table secure (id int); alter table secure enable row level security;
        create table hidden (id int); revoke all on hidden from anon;
        create table readable (id int, name text);
        revoke all on readable from anon; grant select (name) on readable to anon;
        create view everything as select * from notes;
        create view invoker with (security_invoker = on) as select * from notes;
        create materialized view snapshot as select * from notes;
        create schema private; create table private.kept (id int);
        grant usage on schema private to anon; grant all on private.kept to anon;
        create table parted (id int) partition by range (id);
        alter table parted enable row level security;
        create table parted_low partition of parted for values from (0) to (10);";
    assert_eq!(
        open_after(&cluster, &tenant, made).await,
        [
            open("everything", "view", ALL),
            open("notes", "table", ALL),
            // A partition is a table of its own: RLS on its parent does not cover it when
            // it is named.
            open("parted_low", "table", ALL),
            // A privilege on one column is enough to read that column.
            open("readable", "table", &["select"]),
            open("snapshot", "materialized view", &["select"]),
        ]
    );

    let closed = "alter table notes enable row level security;
        alter view everything set (security_invoker = true);
        revoke select on snapshot from anon;
        alter table parted_low enable row level security;
        revoke all on readable from anon;";
    assert_eq!(open_after(&cluster, &tenant, closed).await, []);

    // Without `usage` on `public`, `anon` reaches nothing there.
    open_after(
        &cluster,
        &tenant,
        "create table wide_open (id int); revoke usage on schema public from anon, public",
    )
    .await;
    assert_eq!(
        open_after(&cluster, &tenant, "select 1").await,
        [],
        "nothing in public is reachable"
    );
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_answer_says_what_the_sql_left_whatever_the_session_holds() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    // A transaction left open is rolled back when the connection closes: its table is not
    // left behind, so it is not said to be open.
    let outcome = cluster
        .run_sql(&tenant, "begin; create table fleeting (id int)", 10)
        .await
        .unwrap();
    assert_eq!(outcome.open_tables, Some(vec![]));
    // The session's settings are the owner's to change, `search_path` too, even ahead of
    // `pg_catalog`: the read names every function with its schema.
    let outcome = cluster
        .run_sql(
            &tenant,
            "create table kept (id int); create schema decoy;
             create function decoy.has_any_column_privilege(name, oid, text) returns boolean
               language sql as 'select false';
             create function decoy.has_table_privilege(name, oid, text) returns boolean
               language sql as 'select false';
             set search_path = decoy, pg_catalog, public",
            10,
        )
        .await
        .unwrap();
    assert_eq!(outcome.open_tables, Some(vec![open("kept", "table", ALL)]));
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn several_databases_are_read_at_once_and_each_says_its_own() {
    let cluster = cluster().await;
    let mut tenants = Vec::new();
    for i in 0..6 {
        let tenant = created(&cluster).await;
        cluster
            .run_sql(&tenant, &format!("create table t{i} (id int)"), 10)
            .await
            .unwrap();
        tenants.push(tenant);
    }
    let read = cluster.open_tables(&tenants).await;
    assert_eq!(read.len(), tenants.len());
    for (i, tenant) in tenants.iter().enumerate() {
        assert_eq!(
            read[&tenant.names.database],
            [open(&format!("t{i}"), "table", ALL)]
        );
    }
    for tenant in tenants {
        cluster.drop_tenant(&tenant.names).await.unwrap();
    }
}
