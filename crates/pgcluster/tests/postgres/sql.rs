//! The owner's SQL: statements, values, errors, limits and deadlines.

use std::time::{Duration, Instant};

use quire_databases::{Cluster, ClusterError, OpenTable, SqlOutcome, SqlRefusal};
use quire_pgcluster::{PgCluster, PgClusterSettings, RoleTimeouts};
use serde_json::{Value, json};

use crate::{admin, cluster, cluster_with, created};

async fn refused(
    cluster: &PgCluster,
    tenant: &quire_databases::TenantAccess,
    sql: &str,
) -> SqlRefusal {
    match cluster.run_sql(tenant, sql, 10).await {
        Err(ClusterError::Refused(r)) => r,
        other => panic!("{sql}: {other:?}"),
    }
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_owner_creates_inserts_and_reads_typed_values() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    let made = cluster
        .run_sql(
            &tenant,
            "create domain positive as int check (value > 0);
             create table things (
               id bigserial primary key, small int2, n int4, big int8, ok bool, f4 float4,
               f8 float8, price numeric(10, 2), name text, doc jsonb, raw json,
               at timestamptz, uid uuid, tags text[], p positive, nothing text);",
            10,
        )
        .await
        .unwrap();
    // Supabase's default grants give `anon` the new table, and its RLS is off.
    let open = OpenTable {
        name: "things".into(),
        kind: "table".into(),
        privileges: ["select", "insert", "update", "delete"]
            .map(String::from)
            .to_vec(),
    };
    assert_eq!(
        made,
        SqlOutcome {
            columns: vec![],
            rows: vec![],
            row_count: 0,
            open_tables: Some(vec![open]),
        }
    );
    let inserted = cluster
        .run_sql(
            &tenant,
            "insert into things (small, n, big, ok, f4, f8, price, name, doc, raw, at, uid, tags, p)
             values (-2, 42, 9007199254740993, true, 1.5, 'NaN', 12.50, 'it''s', '{\"a\": [1, null]}',
                     '[1, 2]', '2026-01-02 03:04:05+00', '6f1c3f8e-98b6-4b8e-9f35-5a1e1e3f0a11',
                     '{a,b}', 7),
                    (null, null, null, false, null, 0.1, null, null, null, null, null, null, null, null)",
            10,
        )
        .await
        .unwrap();
    assert_eq!(inserted.row_count, 2);
    assert!(inserted.columns.is_empty());

    let out = cluster
        .run_sql(
            &tenant,
            "set time zone 'UTC'; select small, n, big, ok, f4, f8, price, name, doc, raw, at, uid, \
             tags, p, nothing from things order by id",
            10,
        )
        .await
        .unwrap();
    assert_eq!(
        out.columns,
        [
            "small", "n", "big", "ok", "f4", "f8", "price", "name", "doc", "raw", "at", "uid",
            "tags", "p", "nothing"
        ]
    );
    assert_eq!(out.row_count, 2);
    assert_eq!(
        out.rows[0],
        vec![
            json!(-2),
            json!(42),
            json!(9_007_199_254_740_993_i64),
            json!(true),
            json!(1.5),
            json!("NaN"),
            json!("12.50"),
            json!("it's"),
            json!({"a": [1, null]}),
            json!([1, 2]),
            json!("2026-01-02 03:04:05+00"),
            json!("6f1c3f8e-98b6-4b8e-9f35-5a1e1e3f0a11"),
            json!("{a,b}"),
            json!(7),
            Value::Null,
        ]
    );
    assert_eq!(out.rows[1][3], json!(false));
    assert_eq!(out.rows[1][5], json!(0.1));
    assert_eq!(out.rows[1][0], Value::Null);

    // Returning rows from a write, and expressions without a table.
    let returned = cluster
        .run_sql(
            &tenant,
            "update things set n = n + 1 where n is not null returning n, ok",
            10,
        )
        .await
        .unwrap();
    assert_eq!(returned.rows, [[json!(43), json!(true)]]);
    assert_eq!(returned.row_count, 1);
    let exprs = cluster
        .run_sql(
            &tenant,
            "select 1 + 1 as two, 'x' || 'y' as xy, null::int as nothing, 2.0::float8 / 3 as third",
            1,
        )
        .await
        .unwrap();
    assert_eq!(
        exprs.rows,
        [[json!(2), json!("xy"), Value::Null, json!(2.0 / 3.0)]]
    );
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn several_statements_answer_with_the_last_and_keep_their_transactions() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    let out = cluster
        .run_sql(
            &tenant,
            "create table t (x int primary key, label text);
             insert into t values (1, 'a;b'), (2, $$c;d$$); -- a comment; with a semicolon
             begin; insert into t values (3, 'e'); commit;
             select x, label from t order by x; /* trailing */",
            10,
        )
        .await
        .unwrap();
    assert_eq!(out.columns, ["x", "label"]);
    assert_eq!(
        out.rows,
        [
            [json!(1), json!("a;b")],
            [json!(2), json!("c;d")],
            [json!(3), json!("e")]
        ]
    );
    assert_eq!(out.row_count, 3);

    // Without its own transaction, the batch is one: a failure undoes what came before.
    let r = refused(
        &cluster,
        &tenant,
        "insert into t values (4, 'f'); insert into t values (1, 'dup')",
    )
    .await;
    assert_eq!(r.sqlstate, "23505");
    assert!(r.detail.unwrap_or_default().contains("(x)=(1)"));
    let count = cluster
        .run_sql(&tenant, "select count(*) from t", 1)
        .await
        .unwrap();
    assert_eq!(count.rows, [[json!(3)]]);

    // A transaction left open is rolled back when the connection closes.
    cluster
        .run_sql(&tenant, "begin; insert into t values (9, 'z')", 1)
        .await
        .unwrap();
    let count = cluster
        .run_sql(&tenant, "select count(*) from t", 1)
        .await
        .unwrap();
    assert_eq!(count.rows, [[json!(3)]]);

    // Blank SQL and comments answer nothing.
    let empty = cluster
        .run_sql(&tenant, "  -- nothing\n ; ", 1)
        .await
        .unwrap();
    assert_eq!(
        (empty.columns.len(), empty.rows.len(), empty.row_count),
        (0, 0, 0)
    );

    // Last statement a write after a select: its count, no columns.
    let write = cluster
        .run_sql(&tenant, "select 1; delete from t where x > 1", 1)
        .await
        .unwrap();
    assert_eq!((write.columns.len(), write.row_count), (0, 2));
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn refusals_carry_postgresqls_words_and_the_position() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    let r = refused(&cluster, &tenant, "select * from nowhere").await;
    assert_eq!(r.sqlstate, "42P01");
    assert_eq!(r.message, "relation \"nowhere\" does not exist");
    assert_eq!(r.position, Some(15));

    let r = refused(&cluster, &tenant, "select 1;\nselec 2").await;
    assert_eq!(r.sqlstate, "42601");
    assert_eq!(r.position, Some(11));

    let r = refused(
        &cluster,
        &tenant,
        "do $$ begin raise exception 'nope' using detail = 'the detail', hint = 'a hint', errcode = '22023'; end $$",
    )
    .await;
    assert_eq!(
        r,
        SqlRefusal {
            message: "nope".into(),
            sqlstate: "22023".into(),
            detail: Some("the detail".into()),
            hint: Some("a hint".into()),
            position: None,
        }
    );
    // Notices on the way do no harm.
    let ok = cluster
        .run_sql(
            &tenant,
            "do $$ begin raise notice 'hello'; end $$; select 'after'",
            1,
        )
        .await
        .unwrap();
    assert_eq!(ok.rows, [[json!("after")]]);
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn rows_past_the_limit_are_counted_not_kept() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    let out = cluster
        .run_sql(
            &tenant,
            "select g as n from generate_series(1, 25000) g",
            10,
        )
        .await
        .unwrap();
    assert_eq!(out.rows.len(), 10);
    assert_eq!(out.rows[9], [json!(10)]);
    assert_eq!(out.row_count, 25000);
    let none = cluster
        .run_sql(&tenant, "select 1 where false", 10)
        .await
        .unwrap();
    assert_eq!(
        (none.columns.len(), none.rows.len(), none.row_count),
        (1, 0, 0)
    );
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn rows_past_eight_mebibytes_of_values_are_counted_not_kept() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    // Twenty rows of 3 MiB each: two fit in 8 MiB, the third does not, and none after it
    // is kept though it would fit no better.
    let out = cluster
        .run_sql(
            &tenant,
            "select g as n, repeat('x', 3 * 1024 * 1024) as big \
             from generate_series(1, 20) g",
            1_000,
        )
        .await
        .unwrap();
    assert_eq!(out.row_count, 20);
    assert_eq!(out.rows.len(), 2);
    assert_eq!(out.rows[1][0], json!(2));
    // One value larger than the whole allowance: counted, nothing kept.
    let huge = cluster
        .run_sql(
            &tenant,
            "select repeat('x', 20 * 1024 * 1024) as big",
            1_000,
        )
        .await
        .unwrap();
    assert_eq!((huge.row_count, huge.rows.len()), (1, 0));
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

fn quick(owner: Duration, margin: Duration) -> PgClusterSettings {
    PgClusterSettings {
        timeouts: RoleTimeouts {
            owner,
            ..RoleTimeouts::default()
        },
        connect_timeout: Duration::from_secs(2),
        sql_deadline_margin: margin,
        ..PgClusterSettings::default()
    }
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_owners_statement_timeout_cuts_a_long_query() {
    let cluster = cluster_with(quick(Duration::from_secs(1), Duration::from_secs(5))).await;
    let tenant = created(&cluster).await;
    let shown = cluster
        .run_sql(&tenant, "show statement_timeout", 1)
        .await
        .unwrap();
    assert_eq!(shown.rows, [[json!("1s")]]);
    let started = Instant::now();
    let r = refused(&cluster, &tenant, "select pg_sleep(30)").await;
    assert_eq!(r.sqlstate, "57014");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn an_owner_who_lifts_its_timeout_is_cancelled_by_the_deadline() {
    let cluster = cluster_with(quick(Duration::from_secs(1), Duration::from_secs(1))).await;
    let tenant = created(&cluster).await;
    let started = Instant::now();
    let r = refused(
        &cluster,
        &tenant,
        "set statement_timeout = 0; select pg_sleep(30)",
    )
    .await;
    let took = started.elapsed();
    assert_eq!(r.sqlstate, "57014");
    assert!(r.message.contains("Quire"), "{r:?}");
    assert!(took < Duration::from_secs(6), "{took:?}");
    // The query does not run on behind the answer.
    let admin = admin().await;
    let mut left = 1;
    for _ in 0..50 {
        left = admin
            .query_one(
                "select count(*) from pg_stat_activity where usename = $1 and state = 'active'",
                &[&tenant.names.owner_role],
            )
            .await
            .unwrap()
            .get::<_, i64>(0);
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, 0);
    cluster.drop_tenant(&tenant.names).await.unwrap();
}
