//! What each of a database's roles can and cannot reach.

use quire_databases::{Cluster, ClusterError};
use quire_pgcluster::TenantRole;
use serde_json::json;

use crate::{cluster, connect, created, try_connect};

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_owner_cannot_become_anyone_else_or_reach_the_cluster() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    let who = cluster
        .run_sql(&tenant, "reset role; reset session authorization; select current_user::text, session_user::text", 1)
        .await
        .unwrap();
    assert_eq!(
        who.rows,
        [[
            json!(tenant.names.owner_role),
            json!(tenant.names.owner_role)
        ]]
    );
    for (sql, sqlstate) in [
        ("set role postgres", "42501"),
        ("set role anon", "42501"),
        ("set role service_role", "42501"),
        ("set session authorization postgres", "42501"),
        ("select * from pg_authid", "42501"),
        ("create database q_not_mine", "42501"),
        ("create role someone", "42501"),
        ("alter role current_user createdb", "42501"),
        ("alter role current_user bypassrls", "42501"),
        ("set session_replication_role = replica", "42501"),
        ("drop schema quire cascade", "42501"),
        ("alter schema quire rename to mine", "42501"),
        ("create table quire.mine (x int)", "42501"),
        ("drop event trigger quire_announce_ddl", "42501"),
        ("alter event trigger quire_announce_ddl disable", "42501"),
        ("create extension dblink", "42501"),
        ("copy (select 1) to '/tmp/quire-owner-was-here'", "42501"),
        ("select pg_read_file('/etc/passwd')", "42501"),
    ] {
        match cluster.run_sql(&tenant, sql, 1).await {
            Err(ClusterError::Refused(r)) => {
                // A missing extension's files would say 58P01 first: either way, not made.
                assert!(
                    r.sqlstate == sqlstate || (sql.contains("dblink") && r.sqlstate == "0A000"),
                    "{sql}: {r:?}"
                );
            }
            other => panic!("{sql}: {other:?}"),
        }
    }
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_tenants_roles_cannot_connect_to_another_tenants_database() {
    let cluster = cluster().await;
    let a = created(&cluster).await;
    let b = created(&cluster).await;
    for role in [TenantRole::Owner, TenantRole::Authenticator] {
        let mut config = cluster.tenant_config(&a, role);
        config.dbname(&b.names.database);
        let e = try_connect(&config).await.err().unwrap();
        assert_eq!(e.code().map(|c| c.code()), Some("42501"), "{role:?}: {e}");
        // Their own database takes them.
        connect(&cluster.tenant_config(&a, role)).await;
    }
    cluster.drop_tenant(&a.names).await.unwrap();
    cluster.drop_tenant(&b.names).await.unwrap();
}

#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn the_authenticator_reaches_tables_only_through_the_shared_roles_and_their_grants() {
    let cluster = cluster().await;
    let tenant = created(&cluster).await;
    cluster
        .run_sql(
            &tenant,
            "create table open_t (x int); insert into open_t values (1), (2);
             create table closed_t (x int); revoke all on closed_t from anon, authenticated;
             create table private_t (owner text, x int); insert into private_t values ('a', 1), ('b', 2);
             alter table private_t enable row level security;
             create policy mine on private_t to authenticated
               using (owner = current_setting('request.jwt.claim.sub', true));",
            1,
        )
        .await
        .unwrap();
    let auth = connect(&cluster.tenant_config(&tenant, TenantRole::Authenticator)).await;
    let count = |sql: &'static str| {
        let auth = &auth;
        async move {
            match auth.simple_query(sql).await {
                Ok(messages) => Ok(messages
                    .iter()
                    .find_map(|m| match m {
                        tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
                        _ => None,
                    })
                    .unwrap_or_default()),
                Err(e) => Err(e.code().map(|c| c.code().to_owned()).unwrap_or_default()),
            }
        }
    };
    // NOINHERIT: on its own it holds nothing of its roles.
    assert_eq!(
        count("select count(*) from open_t").await,
        Err("42501".into())
    );
    assert_eq!(count("show statement_timeout").await, Ok("8s".into()));
    // As anon (what the data API does per request): the default grants, no more.
    assert_eq!(
        count("begin; set local role anon; select count(*) from open_t").await,
        Ok("2".into())
    );
    auth.batch_execute("rollback").await.unwrap();
    assert_eq!(
        count("begin; set local role anon; select count(*) from closed_t").await,
        Err("42501".into())
    );
    auth.batch_execute("rollback").await.unwrap();
    // Row-level security holds for authenticated, not for service_role.
    assert_eq!(
        count("begin; set local role authenticated; set local request.jwt.claim.sub = 'a'; select count(*) from private_t").await,
        Ok("1".into())
    );
    auth.batch_execute("rollback").await.unwrap();
    assert_eq!(
        count("begin; set local role service_role; select count(*) from private_t").await,
        Ok("2".into())
    );
    auth.batch_execute("rollback").await.unwrap();
    // Back from anon, it is the authenticator again, never the owner.
    assert_eq!(
        count("set role anon; reset role; select current_user::text").await,
        Ok(tenant.names.authenticator_role.clone())
    );
    assert_eq!(
        count(Box::leak(
            format!("set role {}", tenant.names.owner_role).into_boxed_str()
        ))
        .await,
        Err("42501".into())
    );
    drop(auth);
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

/// PostgreSQL keeps no shared catalog per database: another tenant's database and role
/// names stay visible (docs/decisions/database-service.md says so and how an operator
/// separates them); what its sessions run and the server's files do not.
#[tokio::test]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
async fn a_tenant_sees_anothers_names_but_not_its_statements() {
    let cluster = cluster().await;
    let a = created(&cluster).await;
    let b = created(&cluster).await;
    // B's owner has a session whose last statement names something of B's.
    let theirs = connect(&cluster.tenant_config(&b, TenantRole::Owner)).await;
    theirs
        .batch_execute("select 'b-private-marker'")
        .await
        .unwrap();
    let rows = |sql: String| {
        let (cluster, a) = (&cluster, &a);
        async move {
            cluster
                .run_sql(a, &sql, 1)
                .await
                .map(|out| out.rows)
                .map_err(|e| match e {
                    ClusterError::Refused(r) => r.sqlstate,
                    other => panic!("{sql}: {other:?}"),
                })
        }
    };
    let b_owner = &b.names.owner_role;
    let seen = rows(format!(
        "select query, datname::text from pg_stat_activity where usename = '{b_owner}'"
    ))
    .await
    .unwrap();
    assert!(!seen.is_empty(), "B's session is listed, with its user");
    for row in &seen {
        assert_eq!(row[0], json!("<insufficient privilege>"), "{seen:?}");
    }
    let marker = rows(
        "select count(*) from pg_stat_activity where query like '%b-private' || '-marker%'".into(),
    )
    .await;
    assert_eq!(marker, Ok(vec![vec![json!(0)]]));
    // Settings only a superuser reads are hidden from the view and refused to SHOW.
    assert_eq!(
        rows("show data_directory".into()).await,
        Err("42501".to_owned())
    );
    assert_eq!(
        rows("select setting from pg_settings where name = 'data_directory'".into()).await,
        Ok(vec![])
    );
    // Not hidden: the names in the shared catalogs (revoking CONNECT does not hide them).
    let names = rows(format!(
        "select (select count(*) from pg_database where datname = '{}'), \
                (select count(*) from pg_roles where rolname = '{b_owner}')",
        b.names.database
    ))
    .await;
    assert_eq!(names, Ok(vec![vec![json!(1), json!(1)]]));
    drop(theirs);
    cluster.drop_tenant(&a.names).await.unwrap();
    cluster.drop_tenant(&b.names).await.unwrap();
}
