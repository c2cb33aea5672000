//! `LocalCluster`: a private cluster made, started, used and stopped in a temporary folder.
//! Needs PostgreSQL's `initdb` and `postgres` (PATH or /usr/lib/postgresql/*/bin); without
//! them the tests are reported as ignored (the `no_pg_binaries` cfg of `build.rs`,
//! docs/decisions/test-skips.md), and under `CI=true` they run and fail.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::path::Path;
use std::time::Instant;

use quire_databases::{Cluster, TenantAccess, TenantNames};
use quire_kernel::DatabaseId;
use quire_pgcluster::{LocalCluster, PgCluster, PgClusterSettings, TenantRole, find_binaries};
use serde_json::json;

fn process_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[tokio::test]
#[cfg_attr(
    no_pg_binaries,
    ignore = "needs PostgreSQL's initdb and postgres on PATH or in /usr/lib/postgresql/*/bin"
)]
async fn a_local_cluster_starts_serves_a_tenant_and_stops() {
    assert!(find_binaries(None).is_some(), "no initdb and postgres here");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");

    let started = Instant::now();
    let local = LocalCluster::start(&data).await.unwrap();
    let first_start = started.elapsed();
    let pid = local.pid().unwrap();
    assert!(process_alive(pid));
    assert!(local.url().starts_with("postgresql://quire:"));
    // The password is kept for the next start, readable by Quire's user alone.
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join("postgres.password"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // A fresh cluster: two processes making the shared roles at once.
    let (a, b) = tokio::join!(
        PgCluster::connect(local.url(), PgClusterSettings::default()),
        PgCluster::connect(local.url(), PgClusterSettings::default())
    );
    let cluster = a.unwrap();
    drop(b.unwrap());
    assert!(cluster.announces_ddl());

    let tenant = TenantAccess {
        names: TenantNames::of(DatabaseId(uuid::Uuid::new_v4())),
        owner_password: quire_kernel::secret::random_url_token(),
        authenticator_password: quire_kernel::secret::random_url_token(),
    };
    let created = Instant::now();
    cluster.create_roles(&tenant).await.unwrap();
    cluster.create_database(&tenant.names).await.unwrap();
    cluster.prepare_database(&tenant).await.unwrap();
    let create = created.elapsed();
    let out = cluster
        .run_sql(
            &tenant,
            "create table t (x int); insert into t values (7); select x, x > 5 as big from t",
            10,
        )
        .await
        .unwrap();
    assert_eq!(out.rows, [[json!(7), json!(true)]]);
    // Passwords are checked (scram-sha-256), even on the private socket.
    let wrong = TenantAccess {
        owner_password: "wrong".into(),
        ..tenant.clone()
    };
    let refused = cluster
        .tenant_config(&wrong, TenantRole::Owner)
        .connect(tokio_postgres::NoTls)
        .await
        .err()
        .unwrap();
    assert_eq!(refused.code().map(|c| c.code()), Some("28P01"));
    // Every role may change its own password; Quire puts the stored one back.
    cluster
        .run_sql(&tenant, "alter role current_user password 'mine now'", 1)
        .await
        .unwrap();
    let out = cluster
        .run_sql(&tenant, "select count(*) from t", 1)
        .await
        .unwrap();
    assert_eq!(out.rows, [[json!(1)]]);
    drop(cluster);

    let stopping = Instant::now();
    local.stop().await.unwrap();
    let stop = stopping.elapsed();
    assert!(!process_alive(pid), "postgres {pid} still runs");

    // Started again on the same folder: no initdb, same password, the data still there.
    let started = Instant::now();
    let local = LocalCluster::start(&data).await.unwrap();
    let second_start = started.elapsed();
    let pid = local.pid().unwrap();
    let cluster = PgCluster::connect(local.url(), PgClusterSettings::default())
        .await
        .unwrap();
    let out = cluster
        .run_sql(&tenant, "select x from t", 10)
        .await
        .unwrap();
    assert_eq!(out.rows, [[json!(7)]]);
    cluster.drop_tenant(&tenant.names).await.unwrap();
    drop(cluster);
    // Dropping it stops it too.
    drop(local);
    assert!(!process_alive(pid), "postgres {pid} still runs after drop");
    println!(
        "first start (initdb + start): {first_start:?}, create: {create:?}, stop: {stop:?}, \
         second start: {second_start:?}"
    );
}

#[tokio::test]
#[cfg_attr(
    no_pg_binaries,
    ignore = "needs PostgreSQL's initdb and postgres on PATH or in /usr/lib/postgresql/*/bin"
)]
async fn a_second_server_on_the_same_folder_fails_with_the_logs_words() {
    assert!(find_binaries(None).is_some(), "no initdb and postgres here");
    let dir = tempfile::tempdir().unwrap();
    let first = LocalCluster::start(dir.path()).await.unwrap();
    let e = LocalCluster::start(dir.path()).await.unwrap_err();
    println!("{e}");
    assert!(e.to_string().contains("lock file"), "{e}");
    assert!(first.pid().is_some_and(process_alive));
    first.stop().await.unwrap();
}
