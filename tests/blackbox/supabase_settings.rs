//! Supabase's Python client (`supabase` 2.34.1, as `supabase_interop.rs` runs it) against a
//! database whose owner turned on what PostgREST leaves off by default: aggregates (grouped
//! and embedded), EXPLAIN (text and JSON), `Prefer: tx=rollback`, a cap on rows and a
//! second schema by profile (`supabase_clients/rest_settings.py`).

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::databases::{DATABASES, create, enable_data_api, sql, with_cluster};
use crate::harness::{Backend, on_both_backends};

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    #[cfg_attr(
        no_supabase_python,
        ignore = "needs supabase-py: python3 -m venv target/supabase-python && target/supabase-python/bin/pip install supabase==2.34.1"
    )]
    supabase_py_uses_what_the_owner_turned_on
);

const SCHEMA: &str = "
create table customers (name text primary key);
create table orders (
    id int primary key,
    customer text not null references customers,
    amount int not null
);
insert into customers values ('ada'), ('bo'), ('cy');
insert into orders values (1, 'ada', 10), (2, 'ada', 20), (3, 'bo', 5), (4, 'bo', 5);
create schema reports;
grant usage on schema reports to anon, authenticated, service_role;
create view reports.totals as
    select customer, sum(amount)::int as total from orders where customer = 'ada' group by 1;
grant select on reports.totals to service_role;
";

async fn supabase_py_uses_what_the_owner_turned_on(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let made = create(&srv, &ann.key, json!({ "slug": "shop" })).await;
    let id = made["id"].as_str().unwrap();
    sql(&srv, &ann.key, id, SCHEMA).await.assert_status(200);
    srv.patch(
        &format!("{DATABASES}/{id}/data-api"),
        &ann.key,
        json!({
            "exposedSchemas": ["public", "reports"],
            "maxRows": 3,
            "aggregates": true,
            "explain": true,
            "txRollback": true
        }),
    )
    .await
    .assert_status(200);
    let secret = enable_data_api(&srv, &ann.key, id).await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/blackbox/supabase_clients/rest_settings.py");
    let python =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/supabase-python/bin/python");
    let out = Command::new(python)
        .arg(script)
        .args([
            secret["url"].as_str().unwrap(),
            secret["serviceRoleKey"].as_str().unwrap(),
        ])
        .output()
        .expect("supabase-py runs");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        srv.logs()
    );
    let seen: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(seen["max rows"], json!([[1, 2, 3], 4]), "{seen}");
    // The rolled-back order is not in the database either.
    let rows = sql(&srv, &ann.key, id, "select count(*) from orders").await;
    assert_eq!(rows.assert_status(200)["rows"], json!([[4]]));
}
