//! A database's data API instance over its life: it hears DDL by itself (the event
//! trigger's `NOTIFY`, not a reload caused by the request), and it lets go of its
//! connections once idle for `QUIRE_DATA_API_IDLE_SECS`. The connection cap is shared out
//! among accounts (`QUIRE_DATA_API_MAX_CONNECTIONS`, `QUIRE_DATA_API_ACCOUNT_CONNECTIONS`):
//! an account at its share is refused with a 503 that says so while another's databases
//! start and answer; a tenant's `NOTIFY` storm costs about a schema load a second; the
//! metrics endpoint shows both.

use serde_json::{Value, json};
use tokio_postgres::NoTls;

use crate::databases::{
    DATABASES, cluster_url, create, enable_data_api, sql, tenant_names, with_cluster,
};
use crate::harness::{Backend, Server, eventually, on_both_backends};

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    ddl_reaches_a_running_instance_by_its_notification,
    an_idle_instance_lets_go_of_its_connections,
    an_account_at_its_share_waits_while_others_are_served_and_storms_are_coalesced
);

async fn get(srv: &Server, path: &str, anon: &str) -> (u16, Value) {
    let response = srv
        .http
        .get(format!("{}{path}", srv.base))
        .header("apikey", anon)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A database with the data API on and a table `first`; its id and anon key.
async fn database(srv: &Server, key: &str, slug: &str) -> (String, String) {
    let made = create(srv, key, json!({ "slug": slug })).await;
    let id = made["id"].as_str().unwrap().to_owned();
    sql(srv, key, &id, "create table first (id int primary key)")
        .await
        .assert_status(200);
    srv.post(&format!("{DATABASES}/{id}/data-api"), key, json!({}))
        .await
        .assert_status(202);
    let secret = srv.get(&format!("{DATABASES}/{id}/secret"), key).await;
    let anon = secret.assert_status(200)["anonKey"]
        .as_str()
        .unwrap()
        .to_owned();
    (id, anon)
}

async fn ddl_reaches_a_running_instance_by_its_notification(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[("QUIRE_METRICS_LISTEN", "127.0.0.1:0")]).await;
    let (id, anon) = database(&srv, &ann.key, "heard").await;
    let path = "/db/heard/rest/v1";
    assert_eq!(get(&srv, &format!("{path}/first"), &anon).await.0, 200);
    // A name the cache lacks loads the schema again, at most once a second: right after
    // the start's load, the miss loads nothing.
    assert_eq!(get(&srv, &format!("{path}/nowhere"), &anon).await.0, 404);
    sql(
        &srv,
        &ann.key,
        &id,
        "create table second (id int primary key)",
    )
    .await
    .assert_status(200);
    // The notification's load, within a second of the last; no request asked for it.
    let loads = "quire_data_api_schema_loads_total{cause=\"notification\"}";
    eventually("the DDL's notification loads the schema", || {
        let srv = &srv;
        async move { figure(&scrape(srv).await, loads) >= 1.0 }
    })
    .await;
    let (status, body) = get(&srv, &format!("{path}/second"), &anon).await;
    assert_eq!((status, body), (200, json!([])));
}

/// How many connections the database's authenticator holds.
async fn authenticator_connections(id: &str) -> i64 {
    let (_, _, authenticator) = tenant_names(id);
    let (client, conn) = tokio_postgres::connect(&cluster_url(), NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = $1",
            &[&authenticator],
        )
        .await
        .unwrap()
        .get(0)
}

async fn an_idle_instance_lets_go_of_its_connections(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[("QUIRE_DATA_API_IDLE_SECS", "1")]).await;
    let (id, anon) = database(&srv, &ann.key, "sleepy").await;
    assert_eq!(get(&srv, "/db/sleepy/rest/v1/first", &anon).await.0, 200);
    assert!(
        authenticator_connections(&id).await > 0,
        "the instance is up"
    );
    eventually("the idle instance closes its connections", || {
        let id = id.clone();
        async move { authenticator_connections(&id).await == 0 }
    })
    .await;
    // The next request starts it again.
    assert_eq!(get(&srv, "/db/sleepy/rest/v1/first", &anon).await.0, 200);
}

// Shares of the connection cap, and reloads a storm cannot multiply.

/// Makes `hold()`, which waits for the advisory lock 7 of its database.
const HOLD: &str = "create function hold() returns int language sql \
    as 'select pg_advisory_xact_lock(7); select 1'";

/// Database `slug` of `key`'s account with the data API on, a table `first` and `hold()`;
/// its id and secret (`anonKey`, `serviceRoleKey`).
async fn holding_database(srv: &Server, key: &str, slug: &str) -> (String, Value) {
    let made = create(srv, key, json!({ "slug": slug })).await;
    let id = made["id"].as_str().unwrap().to_owned();
    sql(srv, key, &id, "create table first (id int primary key)")
        .await
        .assert_status(200);
    sql(srv, key, &id, HOLD).await.assert_status(200);
    // Its requests wait for the test, not for service_role's 8 s.
    let (database, _, _) = tenant_names(&id);
    superuser(&id)
        .await
        .batch_execute(&format!(
            "alter role service_role in database {database} set statement_timeout = '120s'"
        ))
        .await
        .unwrap();
    (id.clone(), enable_data_api(srv, key, &id).await)
}

/// A superuser's connection to database `id` in the cluster.
async fn superuser(id: &str) -> tokio_postgres::Client {
    let (database, _, _) = tenant_names(id);
    let mut config: tokio_postgres::Config = cluster_url().parse().unwrap();
    config.dbname(&database);
    let (client, conn) = config.connect(NoTls).await.unwrap();
    tokio::spawn(conn);
    client
}

/// How many requests of these databases wait for an advisory lock.
async fn waiting_for_locks(ids: &[&str]) -> i64 {
    let names: Vec<String> = ids.iter().map(|id| tenant_names(id).0).collect();
    let (client, conn) = tokio_postgres::connect(&cluster_url(), NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
        .query_one(
            "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database \
             WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = ANY($1)",
            &[&names],
        )
        .await
        .unwrap()
        .get(0)
}

/// `GET /metrics`'s text.
async fn scrape(srv: &Server) -> String {
    let addr = srv.metrics.as_deref().expect("the metrics listener");
    let r = srv
        .http
        .get(format!("http://{addr}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.text().await.unwrap()
}

/// The value of the sample `series` (name and labels as the exporter writes them), 0 when
/// absent.
fn figure(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

async fn an_account_at_its_share_waits_while_others_are_served_and_storms_are_coalesced(
    b: Backend,
) {
    let (db, srv, ann) = with_cluster(
        b,
        &[
            ("QUIRE_DATA_API_MAX_CONNECTIONS", "8"),
            ("QUIRE_DATA_API_ACCOUNT_CONNECTIONS", "6"),
            ("QUIRE_METRICS_LISTEN", "127.0.0.1:0"),
        ],
    )
    .await;
    let bob = db.create_account("bob", &[]);
    let mut ann_dbs = Vec::new();
    for slug in ["ann_one", "ann_two", "ann_three"] {
        ann_dbs.push((slug, holding_database(&srv, &ann.key, slug).await));
    }
    let (_, spare) = holding_database(&srv, &ann.key, "ann_spare").await;
    let (_, bobs) = holding_database(&srv, &bob.key, "bob_shop").await;
    let key = |secret: &Value| secret["serviceRoleKey"].as_str().unwrap().to_owned();

    // Ann wakes three databases one after another: her share of six holds them, idle
    // connections making room.
    for (slug, (_, secret)) in &ann_dbs {
        let path = format!("/db/{slug}/rest/v1/first");
        assert_eq!(get(&srv, &path, &key(secret)).await, (200, json!([])));
    }
    // Then each runs a request that waits: her six connections are three listeners and
    // three requests.
    let mut locks = Vec::new();
    let mut requests = Vec::new();
    for (slug, (id, secret)) in &ann_dbs {
        let lock = superuser(id).await;
        lock.execute("select pg_advisory_lock(7)", &[])
            .await
            .unwrap();
        locks.push(lock);
        let request = srv
            .http
            .post(format!("{}/db/{slug}/rest/v1/rpc/hold", srv.base))
            .header("apikey", key(secret))
            .header("content-type", "application/json")
            .body("{}")
            .send();
        requests.push(tokio::spawn(async move { request.await.unwrap().status() }));
    }
    let ids: Vec<&str> = ann_dbs.iter().map(|(_, (id, _))| id.as_str()).collect();
    eventually("Ann's three requests wait for their locks", || {
        let ids = ids.clone();
        async move { waiting_for_locks(&ids).await == 3 }
    })
    .await;

    // Her fourth database is refused, saying why; Bob's starts and answers.
    let refused = srv
        .http
        .get(format!("{}/db/ann_spare/rest/v1/first", srv.base))
        .header("apikey", key(&spare))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "1");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(
        body,
        json!({
            "message": "too many data API connections for this account",
            "code": "503",
            "hint": "retry in a second; this account's other databases are using its share of connections",
            "details": null,
        })
    );
    assert_eq!(
        get(&srv, "/db/bob_shop/rest/v1/first", &key(&bobs)).await,
        (200, json!([]))
    );
    let text = scrape(&srv).await;
    assert_eq!(
        figure(&text, "quire_data_api_connections{state=\"max\"}"),
        8.0
    );
    assert_eq!(
        figure(&text, "quire_data_api_connections{state=\"account_max\"}"),
        6.0
    );
    assert!(figure(&text, "quire_data_api_connections{state=\"in_use\"}") >= 3.0);
    assert!(figure(&text, "quire_data_api_connections{state=\"open\"}") <= 8.0);
    assert_eq!(figure(&text, "quire_data_api_instances"), 4.0, "{text}");
    assert!(figure(&text, "quire_data_api_refusals_total{reason=\"share\"}") >= 1.0);
    assert!(figure(&text, "quire_data_api_evictions_total{kind=\"connection\"}") >= 1.0);

    // Her requests end, and her fourth database starts in the room they leave.
    drop(locks);
    for request in requests {
        assert_eq!(request.await.unwrap(), 200);
    }
    eventually("Ann's fourth database answers", || {
        let (srv, key) = (&srv, key(&spare));
        async move { get(srv, "/db/ann_spare/rest/v1/first", &key).await.0 == 200 }
    })
    .await;

    // Ann notifies `pgrst` five thousand times, each committed; Bob's data API answers
    // throughout, and her instance loads its schema about once a second. It was used last,
    // so no room is made from it meanwhile.
    let (slug, (id, secret)) = &ann_dbs[0];
    let path = format!("/db/{slug}/rest/v1/first");
    eventually("Ann's first database answers again", || {
        let (srv, path, key) = (&srv, &path, key(secret));
        async move { get(srv, path, &key).await.0 == 200 }
    })
    .await;
    let before = scrape(&srv).await;
    let heard = "quire_data_api_notifications_total{payload=\"reload\"}";
    let loads = "quire_data_api_schema_loads_total{cause=\"notification\"}";
    let storm_started = std::time::Instant::now();
    let storm = tokio::spawn({
        let (request, key, id) = (srv.http.clone(), ann.key.clone(), id.clone());
        let url = format!("{}{DATABASES}/{id}/query", srv.base);
        async move {
            let sql = "do $$ begin for i in 1..5000 loop \
                perform pg_notify('pgrst', 'reload schema'); commit; end loop; end $$";
            request
                .post(url)
                .bearer_auth(key)
                .json(&json!({ "sql": sql }))
                .send()
                .await
                .unwrap()
                .status()
        }
    });
    while !storm.is_finished() {
        assert_eq!(
            get(&srv, "/db/bob_shop/rest/v1/first", &key(&bobs)).await.0,
            200
        );
    }
    assert_eq!(storm.await.unwrap(), 200);
    eventually("every notification is heard", || {
        let srv = &srv;
        let wanted = figure(&before, heard) + 5000.0;
        async move { figure(&scrape(srv).await, heard) >= wanted }
    })
    .await;
    let seconds = storm_started.elapsed().as_secs_f64().ceil();
    let reloads = figure(&scrape(&srv).await, loads) - figure(&before, loads);
    assert!(
        reloads <= seconds + 2.0,
        "{reloads} reloads for 5000 notifications in {seconds} s"
    );
    assert_eq!(get(&srv, &path, &key(secret)).await, (200, json!([])));
}
