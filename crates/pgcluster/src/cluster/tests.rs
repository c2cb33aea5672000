//! The second line of defence against the owner's `COPY`: one the lexical check did not see
//! (here: not asked) is the owner's refusal, and its backend ends. Against a real
//! PostgreSQL (`QUIRE_TEST_POSTGRES_URL`); the public paths are in `tests/postgres`.

use std::time::{Duration, Instant};

use quire_databases::{Cluster, ClusterError, TenantAccess, TenantNames};
use quire_kernel::DatabaseId;
use tokio_postgres::NoTls;

use super::PgCluster;
use crate::settings::PgClusterSettings;

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_copy_past_the_check_is_refused_and_its_backend_ends() {
    let url = std::env::var("QUIRE_TEST_POSTGRES_URL").expect("QUIRE_TEST_POSTGRES_URL");
    let settings = PgClusterSettings {
        sql_cancel_grace: Duration::from_millis(500),
        ..PgClusterSettings::default()
    };
    let cluster = PgCluster::connect(&url, settings).await.unwrap();
    let tenant = TenantAccess {
        names: TenantNames::of(DatabaseId(uuid::Uuid::new_v4())),
        owner_password: quire_kernel::secret::random_url_token(),
        authenticator_password: quire_kernel::secret::random_url_token(),
    };
    cluster.create_roles(&tenant).await.unwrap();
    cluster.create_database(&tenant.names).await.unwrap();
    cluster.prepare_database(&tenant).await.unwrap();
    cluster
        .run_sql(&tenant, "create table t (x text)", 1)
        .await
        .unwrap();
    for sql in ["copy t from stdin", "copy t to stdout"] {
        match cluster.run_checked_sql(&tenant, sql, 1).await {
            Err(ClusterError::Refused(r)) => {
                assert_eq!(r.sqlstate, "0A000", "{sql}: {r:?}");
                assert!(r.message.contains("COPY"), "{sql}: {r:?}");
            }
            other => panic!("{sql}: {other:?}"),
        }
    }
    let (admin, conn) = tokio_postgres::connect(&url, NoTls).await.unwrap();
    tokio::spawn(conn);
    let deadline = Instant::now() + Duration::from_secs(5);
    let left = loop {
        let left: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = $1",
                &[&tenant.names.owner_role],
            )
            .await
            .unwrap()
            .get(0);
        if left == 0 || Instant::now() > deadline {
            break left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(left, 0, "the owner's backends are gone");
    // The session still works for the owner.
    let after = cluster.run_sql(&tenant, "select 1", 1).await.unwrap();
    assert_eq!(after.row_count, 1);
    cluster.drop_tenant(&tenant.names).await.unwrap();
}
