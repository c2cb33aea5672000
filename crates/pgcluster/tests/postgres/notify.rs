//! Schema reloads: asked for, and announced by DDL.

use std::time::Duration;

use quire_databases::Cluster;

use crate::{cluster, created, heard, listener};

const RELOAD: (&str, &str) = ("pgrst", "reload schema");

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_reload_reaches_a_listening_data_api() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    let (_client, mut rx) = listener(&cluster, &tenant).await;
    cluster.announce_reload(&tenant).await.unwrap();
    let got = heard(&mut rx, Duration::from_secs(5)).await;
    assert_eq!(got, Some((RELOAD.0.to_owned(), RELOAD.1.to_owned())));
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn ddl_announces_itself_and_plain_writes_do_not() {
    let cluster = cluster().await;
    assert!(
        cluster.announces_ddl(),
        "the test server's admin is a superuser"
    );
    let tenant = created(&cluster).await;
    let (_client, mut rx) = listener(&cluster, &tenant).await;
    let expected = Some((RELOAD.0.to_owned(), RELOAD.1.to_owned()));

    cluster
        .run_sql(&tenant, "create table t (x int)", 1)
        .await
        .unwrap();
    assert_eq!(heard(&mut rx, Duration::from_secs(5)).await, expected);

    cluster
        .run_sql(&tenant, "insert into t values (1); select * from t", 1)
        .await
        .unwrap();
    assert_eq!(heard(&mut rx, Duration::from_millis(300)).await, None);

    // Several DDL statements in one transaction: one notification (NOTIFY folds repeats).
    cluster
        .run_sql(
            &tenant,
            "alter table t add column y int; create view v as select x from t",
            1,
        )
        .await
        .unwrap();
    assert_eq!(heard(&mut rx, Duration::from_secs(5)).await, expected);
    assert_eq!(heard(&mut rx, Duration::from_millis(300)).await, None);

    cluster
        .run_sql(&tenant, "drop view v; drop table t", 1)
        .await
        .unwrap();
    assert_eq!(heard(&mut rx, Duration::from_secs(5)).await, expected);

    // A failed transaction announces nothing.
    let _ = cluster
        .run_sql(&tenant, "create table u (x int); select 1/0", 1)
        .await;
    assert_eq!(heard(&mut rx, Duration::from_millis(300)).await, None);
    cluster.drop_tenant(&tenant.names).await.unwrap();
}
