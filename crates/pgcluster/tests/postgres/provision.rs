//! Creating, preparing and dropping a tenant; sizes; the shared roles; the admin role.

use std::time::Instant;

use quire_databases::Cluster;
use quire_pgcluster::{PgCluster, PgClusterSettings};

use crate::{admin, admin_url, cluster, created, exists, new_tenant};

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_tenant_is_created_with_its_roles_grants_and_timeouts_then_dropped() {
    let cluster = cluster().await;
    let admin = admin().await;
    let tenant = new_tenant();
    let names = &tenant.names;

    let started = Instant::now();
    cluster.create_roles(&tenant).await.unwrap();
    cluster.create_database(names).await.unwrap();
    cluster.prepare_database(&tenant).await.unwrap();
    let create = started.elapsed();
    assert_eq!(exists(&admin, names).await, (true, true, true));

    // The owner logs in, owns the database and is limited; the authenticator is NOINHERIT,
    // limited, and a member of the three shared roles; neither has any power beyond that.
    let roles = admin
        .query(
            "SELECT rolname::text, rolcanlogin, rolinherit, rolsuper, rolcreatedb, rolcreaterole, \
                    rolbypassrls, rolconnlimit \
             FROM pg_roles WHERE rolname IN ($1, $2) ORDER BY rolname DESC",
            &[&names.owner_role, &names.authenticator_role],
        )
        .await
        .unwrap();
    let attrs = |i: usize| {
        let r = &roles[i];
        (
            r.get::<_, String>(0),
            r.get::<_, bool>(1),
            r.get::<_, bool>(2),
            [r.get::<_, bool>(3), r.get(4), r.get(5), r.get(6)],
            r.get::<_, i32>(7),
        )
    };
    assert_eq!(
        attrs(0),
        (names.owner_role.clone(), true, true, [false; 4], 10)
    );
    assert_eq!(
        attrs(1),
        (
            names.authenticator_role.clone(),
            true,
            false,
            [false; 4],
            20
        )
    );
    let memberships: Vec<String> = admin
        .query(
            "SELECT g.rolname::text FROM pg_auth_members m \
             JOIN pg_roles g ON g.oid = m.roleid JOIN pg_roles u ON u.oid = m.member \
             WHERE u.rolname = $1 ORDER BY 1",
            &[&names.authenticator_role],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(memberships, ["anon", "authenticated", "service_role"]);

    let db = admin
        .query_one(
            "SELECT pg_get_userbyid(datdba)::text, datacl::text FROM pg_database WHERE datname = $1",
            &[&names.database],
        )
        .await
        .unwrap();
    assert_eq!(db.get::<_, String>(0), names.owner_role);
    let acl: String = db.get(1);
    // No entry for PUBLIC (`=…` with no role before it).
    assert!(!acl.contains("{=") && !acl.contains(",="), "{acl}");
    assert!(
        acl.contains(&format!("{}=Tc/", names.authenticator_role)),
        "{acl}"
    );

    let settings: Vec<(String, String)> = admin
        .query(
            "SELECT pg_get_userbyid(s.setrole)::text, array_to_string(s.setconfig, ',') \
             FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase \
             WHERE d.datname = $1 ORDER BY 1",
            &[&names.database],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let mut expected = vec![
        ("anon".to_owned(), "statement_timeout=3000ms".to_owned()),
        ("authenticated".into(), "statement_timeout=8000ms".into()),
        ("service_role".into(), "statement_timeout=8000ms".into()),
        (names.owner_role.clone(), "statement_timeout=15000ms".into()),
        (
            names.authenticator_role.clone(),
            "statement_timeout=8000ms".into(),
        ),
    ];
    expected.sort();
    assert_eq!(settings, expected);

    let started = Instant::now();
    cluster.drop_tenant(names).await.unwrap();
    let drop = started.elapsed();
    assert_eq!(exists(&admin, names).await, (false, false, false));
    // Again: nothing left is no error.
    cluster.drop_tenant(names).await.unwrap();
    println!("create: {create:?}, drop: {drop:?}");
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn drop_undoes_every_prefix_of_a_creation() {
    let cluster = cluster().await;
    let admin = admin().await;
    for steps in 0..=3 {
        let tenant = new_tenant();
        if steps >= 1 {
            cluster.create_roles(&tenant).await.unwrap();
        }
        if steps >= 2 {
            cluster.create_database(&tenant.names).await.unwrap();
        }
        if steps >= 3 {
            cluster.prepare_database(&tenant).await.unwrap();
            // With a session open on it, as the data API would have.
            let sql = cluster.run_sql(&tenant, "select 1", 1);
            sql.await.unwrap();
        }
        cluster.drop_tenant(&tenant.names).await.unwrap();
        assert_eq!(
            exists(&admin, &tenant.names).await,
            (false, false, false),
            "after {steps} steps"
        );
    }
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_session_open_on_the_database_does_not_stop_its_drop() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    let config = cluster.tenant_config(&tenant, quire_pgcluster::TenantRole::Authenticator);
    let held = crate::connect(&config).await;
    cluster.drop_tenant(&tenant.names).await.unwrap();
    assert!(held.simple_query("select 1").await.is_err());
    assert_eq!(
        exists(&admin().await, &tenant.names).await,
        (false, false, false)
    );
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn sizes_name_the_databases_that_exist() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    let missing = new_tenant();
    let sizes = cluster
        .sizes(&[tenant.names.clone(), missing.names.clone()])
        .await
        .unwrap();
    assert_eq!(sizes.len(), 1, "{sizes:?}");
    assert!(sizes[&tenant.names.database] > 1_000_000, "{sizes:?}");
    assert!(cluster.sizes(&[]).await.unwrap().is_empty());
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_shared_roles_exist_after_racing_connects() {
    let url = admin_url();
    let (a, b) = tokio::join!(
        PgCluster::connect(&url, PgClusterSettings::default()),
        PgCluster::connect(&url, PgClusterSettings::default())
    );
    assert!(a.unwrap().announces_ddl());
    b.unwrap();
    let roles: Vec<(String, bool, bool)> = admin()
        .await
        .query(
            "SELECT rolname::text, rolcanlogin, rolbypassrls FROM pg_roles \
             WHERE rolname IN ('anon', 'authenticated', 'service_role') ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert_eq!(
        roles,
        [
            ("anon".to_owned(), false, false),
            ("authenticated".to_owned(), false, false),
            ("service_role".to_owned(), false, true)
        ]
    );
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn an_admin_with_createdb_and_createrole_provisions_without_the_event_trigger() {
    let url = admin_url();
    let admin = admin().await;
    let name = format!("quire_test_admin_{}", uuid::Uuid::new_v4().simple());
    let password = quire_kernel::secret::random_url_token();
    admin
        .batch_execute(&format!(
            "CREATE ROLE {name} LOGIN CREATEDB CREATEROLE PASSWORD '{password}'"
        ))
        .await
        .unwrap();
    let cluster = PgCluster::connect(
        &crate::as_user(&url, &name, &password),
        PgClusterSettings::default(),
    )
    .await
    .unwrap();
    assert!(!cluster.announces_ddl());
    let tenant = created(&cluster).await;
    let out = cluster
        .run_sql(
            &tenant,
            "create table t (x int); insert into t values (1); select x from t",
            5,
        )
        .await
        .unwrap();
    assert_eq!(out.rows, [[serde_json::json!(1)]]);
    let quire_schema = cluster
        .run_sql(
            &tenant,
            "select count(*) from pg_namespace where nspname = 'quire'",
            1,
        )
        .await
        .unwrap();
    assert_eq!(quire_schema.rows, [[serde_json::json!(0)]]);
    assert_eq!(
        cluster
            .sizes(std::slice::from_ref(&tenant.names))
            .await
            .unwrap()
            .len(),
        1
    );
    cluster.announce_reload(&tenant).await.unwrap();
    cluster.drop_tenant(&tenant.names).await.unwrap();
    assert_eq!(exists(&admin, &tenant.names).await, (false, false, false));
    drop(cluster);
    admin
        .batch_execute(&format!("DROP ROLE {name}"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_url_asking_for_tls_is_refused_before_connecting() {
    let e = PgCluster::connect(
        "postgres://quire@db.invalid:5432/postgres?sslmode=require",
        PgClusterSettings::default(),
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("TLS"), "{e}");
    let e = PgCluster::connect("postgres://a@b:notaport/x", PgClusterSettings::default())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("QUIRE_DATABASES_URL"), "{e}");
}
