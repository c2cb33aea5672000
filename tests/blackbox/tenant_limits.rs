//! What one tenant's owner SQL and data API can do to the cluster, and to the other
//! tenants: nothing lasting. On both metadata databases, with tenant databases on the test
//! PostgreSQL cluster and a short owner deadline (`QUIRE_DATABASES_SQL_TIMEOUT_SECS=1`: cut
//! at 2 s): `COPY … FROM STDIN` and `TO STDOUT` refused with a clear 400 (and as a tool
//! error) and no backend left however often it is sent; a loop that swallows its cancel
//! answered at the deadline and its backend gone soon after; meanwhile another tenant's SQL,
//! data API read and a new database answer as usual; an account's concurrent queries capped
//! (429 with `Retry-After`, a tool error naming the cap); no ERROR line for any of it. The
//! data API's requests likewise: a function that lifts its own timeouts and swallows its
//! cancel, called by clients that give up, leaves no backend a few seconds later, and one
//! whose client waits is answered at Quire's deadline; the keyless confirmation link wakes
//! no instance once its client is past the link's limit.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_postgres::NoTls;

use crate::databases::{DATABASES, cluster_url, create, enable_data_api, sql, tenant_names};
use crate::harness::{Backend, Server, TestDb, on_both_backends};
use crate::mcp::{call, tool_error};

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    one_tenants_sql_holds_nothing_of_the_cluster_and_nobody_waits_for_it,
    one_tenants_data_api_requests_leave_no_backend_behind
);

/// A loop that catches every cancel and lifts what the owner may lift, for at most a minute
/// (so that a failing run does not leave it behind for good).
const SWALLOWS_CANCELS: &str = "set client_connection_check_interval = 0; \
     set statement_timeout = 0; \
     do $$ declare stop timestamptz := clock_timestamp() + interval '60 s'; begin \
       loop exit when clock_timestamp() > stop; \
         begin perform pg_sleep(0.2); exception when query_canceled then null; end; \
       end loop; end $$";

/// The backends of `role` in the cluster; with `active`, those running something.
async fn backends(cluster: &tokio_postgres::Client, role: &str, active: bool) -> i64 {
    cluster
        .query_one(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE usename = $1 AND (NOT $2 OR state <> 'idle')",
            &[&role, &active],
        )
        .await
        .unwrap()
        .get(0)
}

/// Waits up to `wait` until `role` has `count` backends (active ones with `active`).
async fn until_backends(
    cluster: &tokio_postgres::Client,
    role: &str,
    active: bool,
    count: i64,
    wait: Duration,
) -> Duration {
    let started = Instant::now();
    loop {
        let now = backends(cluster, role, active).await;
        if now == count {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < wait,
            "{role} has {now} backends, not {count}, after {wait:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Bob's everyday: his owner SQL, his data API read and a new database, all answering.
async fn others_answer(srv: &Server, bob_key: &str, bob_db: &str, anon: &str, slug: &str) {
    let counted = sql(srv, bob_key, bob_db, "select count(*) as n from items").await;
    assert_eq!(counted.assert_status(200)["rows"], json!([[2]]));
    let read = srv
        .http
        .get(format!(
            "{}/db/bobshop/rest/v1/items?select=name&order=id",
            srv.base
        ))
        .header("apikey", anon)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
    let rows: Value = read.json().await.unwrap();
    assert_eq!(rows, json!([{"name": "pen"}, {"name": "ink"}]));
    create(srv, bob_key, json!({ "slug": slug })).await;
}

async fn one_tenants_sql_holds_nothing_of_the_cluster_and_nobody_waits_for_it(b: Backend) {
    let db = TestDb::create(b)
        .await
        .expect("PostgreSQL is configured (the test is ignored otherwise)");
    let ann = db.create_account("ann", &[]);
    let bob = db.create_account("bob", &[]);
    let url = cluster_url();
    let srv = db.start_with(&[
        ("QUIRE_DATABASES_URL", url.as_str()),
        ("QUIRE_DATABASES_SQL_TIMEOUT_SECS", "1"),
        ("QUIRE_DATABASES_SQL_PER_ACCOUNT", "2"),
    ]);
    let (cluster, conn) = tokio_postgres::connect(&url, NoTls).await.unwrap();
    tokio::spawn(conn);

    let made = create(&srv, &ann.key, json!({ "slug": "annshop" })).await;
    let a = made["id"].as_str().unwrap().to_owned();
    let (_, ann_owner, _) = tenant_names(&a);
    let made = create(&srv, &bob.key, json!({ "slug": "bobshop" })).await;
    let bob_db = made["id"].as_str().unwrap().to_owned();
    sql(
        &srv,
        &bob.key,
        &bob_db,
        "create table items (id int primary key, name text);
         insert into items values (1, 'pen'), (2, 'ink');",
    )
    .await
    .assert_status(200);
    let secret = enable_data_api(&srv, &bob.key, &bob_db).await;
    let anon = secret["anonKey"].as_str().unwrap().to_owned();
    sql(&srv, &ann.key, &a, "create table t (x text)")
        .await
        .assert_status(200);

    // COPY to or from the client: a clear 400, as often as it is sent, nothing left.
    for (copy, position) in [
        ("copy t from stdin", 1),
        ("create temp table u (x int); copy u from stdin", 30),
        ("copy t to stdout", 1),
    ] {
        for _ in 0..15 {
            let refused = sql(&srv, &ann.key, &a, copy).await;
            refused.assert_error(400, "sql_error");
            assert_eq!(refused.body["sqlstate"], "0A000", "{}", refused.text);
            assert_eq!(refused.body["position"], position, "{}", refused.text);
            let message = refused.body["message"].as_str().unwrap();
            assert!(message.contains("COPY … FROM STDIN"), "{message}");
            let hint = refused.body["hint"].as_str().unwrap();
            assert!(hint.contains("INSERT"), "{hint}");
        }
    }
    let tool = tool_error(
        &call(
            &srv,
            &ann.key,
            "run_sql",
            json!({"database": "annshop", "sql": "copy t from stdin"}),
        )
        .await,
    );
    assert!(
        tool.starts_with("sql_error:") && tool.contains("0A000"),
        "{tool}"
    );
    until_backends(&cluster, &ann_owner, false, 0, Duration::from_secs(5)).await;
    others_answer(&srv, &bob.key, &bob_db, &anon, "bobnext").await;

    // A loop that swallows its cancel: answered at the deadline, its backend gone soon
    // after; Bob is served meanwhile.
    let started = Instant::now();
    let (looped, ()) = tokio::join!(sql(&srv, &ann.key, &a, SWALLOWS_CANCELS), async {
        until_backends(&cluster, &ann_owner, true, 1, Duration::from_secs(5)).await;
        others_answer(&srv, &bob.key, &bob_db, &anon, "bobthird").await;
    });
    let answered = started.elapsed();
    looped.assert_error(400, "sql_error");
    assert_eq!(looped.body["sqlstate"], "57014", "{}", looped.text);
    assert!(
        looped.body["message"]
            .as_str()
            .unwrap()
            .contains("longer than Quire allows (2 s)"),
        "{}",
        looped.text
    );
    assert!(
        answered < Duration::from_secs(5),
        "answered after {answered:?}"
    );
    let gone = until_backends(&cluster, &ann_owner, false, 0, Duration::from_secs(5)).await;
    eprintln!("the loop answered after {answered:?}; its backend was gone {gone:?} later");

    // Two queries at once for Ann, not three; Bob's own are his.
    let slow = "set statement_timeout = 0; select 1 as slept from pg_sleep(1.5)";
    let (first, second, ()) = tokio::join!(
        sql(&srv, &ann.key, &a, slow),
        sql(&srv, &ann.key, &a, slow),
        async {
            until_backends(&cluster, &ann_owner, true, 2, Duration::from_secs(5)).await;
            let third = sql(&srv, &ann.key, &a, "select 1").await;
            third.assert_error(429, "rate_limited");
            assert_eq!(
                third
                    .headers
                    .get("retry-after")
                    .map(|v| v.to_str().unwrap()),
                Some("1")
            );
            let message = third.body["message"].as_str().unwrap();
            assert!(message.contains("2 SQL queries at once"), "{message}");
            let tool = tool_error(
                &call(
                    &srv,
                    &ann.key,
                    "run_sql",
                    json!({"database": "annshop", "sql": "select 1"}),
                )
                .await,
            );
            assert!(
                tool.starts_with("rate_limited:") && tool.contains("2 SQL queries at once"),
                "{tool}"
            );
            let bobs = sql(&srv, &bob.key, &bob_db, "select 1 as one").await;
            assert_eq!(bobs.assert_status(200)["rows"], json!([[1]]));
        }
    );
    assert_eq!(first.assert_status(200)["rows"], json!([[1]]));
    assert_eq!(second.assert_status(200)["rows"], json!([[1]]));
    let after = sql(&srv, &ann.key, &a, "select 1 as one").await;
    assert_eq!(after.assert_status(200)["rows"], json!([[1]]));
    until_backends(&cluster, &ann_owner, false, 0, Duration::from_secs(5)).await;

    // None of it was the server's failure.
    let logs = srv.logs();
    let errors: Vec<&str> = logs
        .lines()
        .filter(|line| line.contains(r#""level":"ERROR""#))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// A function anyone may call that lifts what a function may lift for itself and swallows
/// every cancel, for at most a minute (so that a failing run does not leave it for good).
const SPIN: &str = "create function spin() returns int language plpgsql \
       set statement_timeout = 0 set client_connection_check_interval = 0 as $$ \
     declare stop timestamptz := clock_timestamp() + interval '60 s'; begin \
       loop exit when clock_timestamp() > stop; \
         begin perform pg_sleep(0.2); exception when query_canceled then null; end; \
       end loop; return 1; end $$; \
     grant execute on function spin() to anon";

async fn one_tenants_data_api_requests_leave_no_backend_behind(b: Backend) {
    let db = TestDb::create(b)
        .await
        .expect("PostgreSQL is configured (the test is ignored otherwise)");
    let ann = db.create_account("ann", &[]);
    let bob = db.create_account("bob", &[]);
    let url = cluster_url();
    // Requests as `anon` (3 s) are cut at 4 s (a margin as long as the owner's timeout).
    let srv = db.start_with(&[
        ("QUIRE_DATABASES_URL", url.as_str()),
        ("QUIRE_DATABASES_SQL_TIMEOUT_SECS", "1"),
    ]);
    let (cluster, conn) = tokio_postgres::connect(&url, NoTls).await.unwrap();
    tokio::spawn(conn);

    let made = create(&srv, &ann.key, json!({ "slug": "annspin" })).await;
    let a = made["id"].as_str().unwrap().to_owned();
    let (_, _, ann_auth) = tenant_names(&a);
    sql(&srv, &ann.key, &a, SPIN).await.assert_status(200);
    let ann_secret = enable_data_api(&srv, &ann.key, &a).await;
    let ann_anon = ann_secret["anonKey"].as_str().unwrap().to_owned();
    let made = create(&srv, &bob.key, json!({ "slug": "bobshop" })).await;
    let bob_db = made["id"].as_str().unwrap().to_owned();
    sql(
        &srv,
        &bob.key,
        &bob_db,
        "create table items (id int primary key, name text);
         insert into items values (1, 'pen'), (2, 'ink');",
    )
    .await
    .assert_status(200);
    let bob_anon = enable_data_api(&srv, &bob.key, &bob_db).await["anonKey"]
        .as_str()
        .unwrap()
        .to_owned();
    let bob_reads = || async {
        let read = srv
            .http
            .get(format!(
                "{}/db/bobshop/rest/v1/items?select=name&order=id",
                srv.base
            ))
            .header("apikey", &bob_anon)
            .send()
            .await
            .unwrap();
        assert_eq!(read.status(), 200);
        let rows: Value = read.json().await.unwrap();
        assert_eq!(rows, json!([{"name": "pen"}, {"name": "ink"}]));
    };
    let spin = format!("{}/db/annspin/rest/v1/rpc/spin", srv.base);

    // Clients that give up after a second, several at once and again: when they have gone,
    // their backends go too, and Bob is served meanwhile.
    let impatient = crate::harness::client()
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    for _ in 0..2 {
        let calls = (0..4).map(|_| {
            impatient
                .post(&spin)
                .header("apikey", &ann_anon)
                .json(&json!({}))
                .send()
        });
        for gave_up in futures_util::future::join_all(calls).await {
            assert!(gave_up.is_err_and(|e| e.is_timeout()));
        }
    }
    bob_reads().await;
    let gone = until_backends(&cluster, &ann_auth, true, 0, Duration::from_secs(10)).await;
    eprintln!("the abandoned requests' backends were gone {gone:?} after their clients");

    // A client that waits is answered at Quire's deadline, and the backend ends after it.
    let started = Instant::now();
    let cut = srv
        .http
        .post(&spin)
        .header("apikey", &ann_anon)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let answered = started.elapsed();
    assert_eq!(cut.status(), 500);
    let body: Value = cut.json().await.unwrap();
    assert_eq!(body["code"], "57014", "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("longer than Quire allows (4 s)"),
        "{message}"
    );
    assert!(
        answered < Duration::from_secs(6),
        "answered after {answered:?}"
    );
    let gone = until_backends(&cluster, &ann_auth, true, 0, Duration::from_secs(10)).await;
    eprintln!("answered after {answered:?}; its backend was gone {gone:?} later");
    bob_reads().await;

    // The confirmation link is open without a key: past its limit (30 in five minutes
    // from one address), it is refused before Ann's instance is woken.
    let link = format!(
        "{}/db/annspin/auth/v1/verify?type=signup&token={}",
        srv.base,
        "A".repeat(43)
    );
    for _ in 0..30 {
        let opened = srv.http.get(&link).send().await.unwrap();
        assert_eq!(opened.status(), 403);
    }
    // Turned off and on: this replica's instance stops, its connections close.
    srv.delete(&format!("{DATABASES}/{a}/data-api"), &ann.key, None)
        .await
        .assert_status(204);
    enable_data_api(&srv, &ann.key, &a).await;
    until_backends(&cluster, &ann_auth, false, 0, Duration::from_secs(5)).await;
    let refused = srv.http.get(&link).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    assert!(refused.text().await.unwrap().contains("Too many links"));
    assert_eq!(
        backends(&cluster, &ann_auth, false).await,
        0,
        "no instance woke"
    );

    // None of it was the server's failure.
    let logs = srv.logs();
    let errors: Vec<&str> = logs
        .lines()
        .filter(|line| line.contains(r#""level":"ERROR""#))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}
