//! Data API benchmark (i): reads of one row by primary key per second, for
//!   (a) a bare tokio-postgres client: `SELECT * FROM items WHERE id = $1`, prepared, on a
//!       pool of 4 connections (the data API instance's size), each query holding its
//!       connection alone as a pooled request does, from as many concurrent callers as the
//!       load generator has connections (the reference);
//!   (t) the gateway's transaction without HTTP, from a bare client on a pool of the same
//!       size: the role, timeout, claims and read-only mode in one `set_config` statement
//!       and the statement Quire's planner writes for (i), under one `Sync` (Quire's wire
//!       client, as the gateway sends them); what PostgreSQL itself leaves the gateway on
//!       this machine;
//!   (x) with the `xitca` feature only: the same two statements with the same values, each
//!       prepared once per connection, under one `Sync` through xitca-postgres's unsync
//!       pipeline (`Pipeline::unsync`, whose last release is 0.2.1), on a pool of the same
//!       size: the one Rust client library found that sends several statements without a
//!       `Sync` after each, against Quire's wire client in the same run;
//!   (i) Quire's data gateway: `GET /db/bench/rest/v1/items?id=eq.N` with the anon key, from
//!       `wrk` (or `oha`): the key checked, the plan built, one transaction run as `anon`
//!       with its claims, the row turned into JSON by PostgreSQL.
//! Alternating order, several rounds, each after a warm-up; prints every round and the
//! medians of i/a (the goal), t/a (the transaction's own ceiling), i/t (the gateway's HTTP
//! and Rust side against that ceiling) and, with (x), x/t, with their min and max. Each
//! measure also prints the CPU time the machine spent per request (PostgreSQL, the kernel,
//! the client or `wrk`, Quire: `/proc/stat`) and in it the client's, Quire's and `wrk`'s,
//! and the run ends with the most (i) could reach against (a) if Quire's process took no
//! CPU at all: the cores' time over the rest of the machine's per request of (i). Each
//! round also says how much CPU Quire could spend per request at the goal's rate, the rest
//! unchanged (negative when the rest alone leaves none).
//!
//! Needs a PostgreSQL cluster for the tenant database: `QUIRE_BENCH_CLUSTER` (default
//! `postgres://postgres@127.0.0.1:5432/postgres`, a superuser). Quire's own metadata stays
//! on SQLite unless `QUIRE_BENCH_POSTGRES` says.
//!
//! Run: `cargo build --release -p quire-server && cargo run --release -p quire-bench --bin
//! data_api` (`QUIRE_BENCH_ROUNDS`, default 3; `QUIRE_BENCH_SECONDS`, default 5;
//! `QUIRE_BENCH_CONNECTIONS`, default 32; `QUIRE_BENCH_WORKERS`, default 2); with (x):
//! `cargo build --release -p quire-bench --features xitca --bin data_api`.

#![allow(clippy::print_stdout, clippy::unwrap_used)] // a program that reports on stdout

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quire_bench::load::Generator;
use quire_bench::measure::{
    children_ticks, cpu_ticks, env_or, machine_ticks, median, micros_per_request, spread,
};
use quire_bench::nginx::install_tools;
use quire_bench::{server_binary, start_server, storage_from_env};
use quire_data_runtime::{READ_SETUP, Step, Wire};
use quire_dataapi::{RestRequest, SchemaCache, plan};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_postgres::NoTls;

const POOL: usize = 4;
/// The goal for i/a.
const GOAL: f64 = 0.5;
const ROWS: i64 = 10_000;
const ID: i64 = 4_242;
/// The measures a round rotates through: (a), (t), (i), and (x) when built with it.
const MEASURES: usize = if cfg!(feature = "xitca") { 4 } else { 3 };

/// CPU ticks each party has spent so far.
#[derive(Debug, Clone, Copy)]
struct Spent {
    quire: u64,
    /// The load generator, once its run has ended.
    load: u64,
    /// This program: the bare clients of (a) and (t).
    client: u64,
    /// The whole machine, the kernel's own work included.
    machine: u64,
}

impl Spent {
    fn now(quire: u32) -> Self {
        Self {
            quire: cpu_ticks(quire),
            load: children_ticks(),
            client: cpu_ticks(std::process::id()),
            machine: machine_ticks().0,
        }
    }

    /// Microseconds of CPU per request of each party since `before`, over `requests`.
    fn per_request(self, before: Self, requests: f64) -> PerRequest {
        let us = |now: u64, then: u64| micros_per_request(now.saturating_sub(then), requests);
        PerRequest {
            quire: us(self.quire, before.quire),
            load: us(self.load, before.load),
            client: us(self.client, before.client),
            machine: us(self.machine, before.machine),
        }
    }
}

/// CPU microseconds per request of each party in one measure.
#[derive(Debug, Clone, Copy, Default)]
struct PerRequest {
    quire: f64,
    load: f64,
    client: f64,
    machine: f64,
}

async fn call(api: &str, key: &str, method: reqwest::Method, path: &str, body: Value) -> Value {
    let resp = reqwest::Client::new()
        .request(method, format!("{api}{path}"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    assert!(status.is_success(), "{path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// Calls per second of `call` over `seconds`, from `callers` concurrent callers sharing the
/// connections `pool`, each call holding a connection alone as a pooled request does.
async fn pooled<C, F, Fut>(pool: Vec<C>, callers: usize, seconds: u64, call: F) -> f64
where
    C: Send + 'static,
    F: Fn(C) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = C> + Send,
{
    let (give, take) = mpsc::channel(pool.len());
    for conn in pool {
        give.send(conn).await.unwrap();
    }
    let take = Arc::new(tokio::sync::Mutex::new(take));
    let done = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for _ in 0..callers {
        let (give, take, done, call) = (give.clone(), take.clone(), done.clone(), call.clone());
        tasks.push(tokio::spawn(async move {
            while Instant::now() < until {
                let conn = take.lock().await.recv().await.unwrap();
                give.send(call(conn).await).await.unwrap();
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / seconds as f64
}

/// Queries per second of the bare client over `seconds`, from `callers` concurrent callers
/// sharing `POOL` connections.
async fn bare(config: &tokio_postgres::Config, callers: usize, seconds: u64) -> f64 {
    let mut pool = Vec::new();
    for _ in 0..POOL {
        let (client, conn) = config.connect(NoTls).await.unwrap();
        tokio::spawn(conn);
        let statement = client
            .prepare("SELECT * FROM items WHERE id = $1")
            .await
            .unwrap();
        pool.push((client, statement));
    }
    pooled(pool, callers, seconds, |(client, statement)| async move {
        let row = client.query_one(&statement, &[&ID]).await.unwrap();
        assert_eq!(row.get::<_, i64>(0), ID);
        (client, statement)
    })
    .await
}

/// The statement Quire's planner writes for `GET items?id=eq.{ID}`, planned over the
/// database's schema as the gateway plans it.
async fn planned_read(config: &tokio_postgres::Config) -> (String, Vec<Option<String>>) {
    let (client, conn) = config.connect(NoTls).await.unwrap();
    tokio::spawn(conn);
    let sql = format!(
        "SELECT cache::text FROM ({}) AS loaded(cache)",
        SchemaCache::LOAD_SQL.trim().trim_end_matches(';')
    );
    let text: String = client.query_one(&sql, &[]).await.unwrap().get(0);
    let cache = SchemaCache::from_json(&text).unwrap();
    let query = format!("id=eq.{ID}");
    let request = RestRequest {
        method: "GET",
        path: "items",
        query: &query,
        prefer: None,
        accept: None,
        range: None,
        content_type: None,
        body: &[],
    };
    let planned = plan(&request, &cache).unwrap();
    (planned.sql, planned.params)
}

/// Transactions per second of the gateway's shape from a bare client, over `POOL`
/// connections shared by `callers`: Quire's own wire client, the same two statements under
/// one `Sync` as a read through the gateway, without HTTP.
async fn transaction(
    config: &tokio_postgres::Config,
    read: &(String, Vec<Option<String>>),
    callers: usize,
    seconds: u64,
) -> f64 {
    let mut pool = Vec::new();
    for _ in 0..POOL {
        pool.push(Wire::connect(config).await.unwrap());
    }
    let claims = json!({ "role": "anon" }).to_string();
    let shared = Arc::new((claims, read.clone()));
    pooled(pool, callers, seconds, move |mut wire: Wire| {
        let shared = shared.clone();
        async move {
            let (claims, (sql, values)) = &*shared;
            let setup = [Some("anon"), None, Some(claims.as_str())];
            // As the gateway does, once per request.
            let params: Vec<Option<&str>> = values.iter().map(Option::as_deref).collect();
            let steps = [
                Step {
                    sql: READ_SETUP,
                    params: &setup,
                },
                Step {
                    sql,
                    params: &params,
                },
            ];
            let answer = wire.pipeline(&steps).await.unwrap();
            assert!(answer.refused.is_none(), "{:?}", answer.refused);
            let body = answer.rows[1][0][2].as_deref().unwrap_or_default();
            assert!(body.contains("\"id\":4242"), "{body}");
            wire
        }
    })
    .await
}

/// (x): the gateway's read through xitca-postgres, the only client library found that sends
/// several statements under one `Sync` (its unsync pipeline, removed after 0.2.1).
#[cfg(feature = "xitca")]
mod xitca {
    use std::sync::Arc;

    use quire_data_runtime::READ_SETUP;
    use serde_json::json;
    use xitca_postgres::iter::AsyncLendingIterator;
    use xitca_postgres::pipeline::Pipeline;
    use xitca_postgres::types::Type;
    use xitca_postgres::{Config, Execute, ExecuteMut, Postgres, Statement};

    use super::{POOL, pooled};

    /// Transactions per second of the gateway's read sent through xitca-postgres, over
    /// `POOL` connections to `cluster`'s database `dbname` shared by `callers`: the settings
    /// and the planned statement, each prepared once per connection with its parameters
    /// declared `text` as the wire client declares them, bound and executed in one write
    /// under one `Sync`, the answer read to its `ReadyForQuery`.
    pub async fn transaction(
        cluster: &str,
        dbname: &str,
        read: &(String, Vec<Option<String>>),
        callers: usize,
        seconds: u64,
    ) -> f64 {
        let (sql, values) = read;
        // Without its `tls` feature it cannot even ask whether the server offers TLS, and its
        // `SslMode` is not public: the URL says it.
        let joint = if cluster.contains('?') { '&' } else { '?' };
        let url = format!("{cluster}{joint}sslmode=disable");
        let mut pool = Vec::new();
        for _ in 0..POOL {
            let mut config = Config::try_from(url.as_str()).unwrap();
            config.dbname(dbname);
            let (client, driver) = Postgres::new(config).connect().await.unwrap();
            tokio::spawn(driver.into_future());
            let setup = Statement::named(READ_SETUP, &[Type::TEXT, Type::TEXT, Type::TEXT])
                .execute(&client)
                .await
                .unwrap()
                .leak();
            let types = vec![Type::TEXT; values.len()];
            let statement = Statement::named(sql, &types)
                .execute(&client)
                .await
                .unwrap()
                .leak();
            pool.push((client, setup, statement));
        }
        let claims = json!({ "role": "anon" }).to_string();
        let shared = Arc::new((claims, values.clone()));
        pooled(pool, callers, seconds, move |(client, setup, statement)| {
            let shared = shared.clone();
            async move {
                let (claims, values) = &*shared;
                {
                    let mut pipe = Pipeline::unsync_with_capacity(2);
                    setup
                        .bind([Some("anon"), None, Some(claims.as_str())])
                        .query_mut(&mut pipe)
                        .unwrap();
                    statement
                        .bind(values.iter().map(Option::as_deref))
                        .query_mut(&mut pipe)
                        .unwrap();
                    let mut answer = pipe.query(&client).unwrap();
                    let mut settings = answer.try_next().await.unwrap().unwrap();
                    while settings.try_next().await.unwrap().is_some() {}
                    let mut rows = answer.try_next().await.unwrap().unwrap();
                    let row = rows.try_next().await.unwrap().unwrap();
                    let body: Option<&str> = row.get(2);
                    let body = body.unwrap_or_default();
                    assert!(body.contains("\"id\":4242"), "{body}");
                    while answer.try_next().await.unwrap().is_some() {}
                }
                (client, setup, statement)
            }
        })
        .await
    }
}

#[tokio::main]
async fn main() {
    let rounds: usize = env_or("QUIRE_BENCH_ROUNDS", 3);
    let seconds: u64 = env_or("QUIRE_BENCH_SECONDS", 5);
    let workers: usize = env_or("QUIRE_BENCH_WORKERS", 2);
    let connections: usize = env_or("QUIRE_BENCH_CONNECTIONS", 32);
    let cluster = std::env::var("QUIRE_BENCH_CLUSTER")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let load = Generator::from_env();
    let bin = server_binary();
    install_tools();

    let work = tempfile::tempdir().unwrap();
    let (storage, mut env) = storage_from_env().await;
    env.push(("QUIRE_WORKERS", workers.to_string()));
    env.push(("QUIRE_DATABASES_URL", cluster.clone()));
    let quire = start_server(&bin, work.path(), &env);
    let made = call(
        &quire.api,
        &quire.key,
        reqwest::Method::POST,
        "/api/database/v1/databases",
        json!({ "slug": "bench" }),
    )
    .await;
    let id = made["id"].as_str().unwrap().to_owned();
    let base = format!("/api/database/v1/databases/{id}");
    call(
        &quire.api,
        &quire.key,
        reqwest::Method::POST,
        &format!("{base}/query"),
        json!({ "sql": format!(
            "create table items (id bigint primary key, name text not null, price numeric);
             insert into items select n, 'item ' || n, n / 100.0 from generate_series(1, {ROWS}) n;
             analyze items"
        ) }),
    )
    .await;
    call(
        &quire.api,
        &quire.key,
        reqwest::Method::POST,
        &format!("{base}/data-api"),
        json!({}),
    )
    .await;
    let secret = call(
        &quire.api,
        &quire.key,
        reqwest::Method::GET,
        &format!("{base}/secret"),
        Value::Null,
    )
    .await;
    let anon = secret["anonKey"].as_str().unwrap().to_owned();
    let url = format!("{}/db/bench/rest/v1/items?id=eq.{ID}", quire.api);
    let header = format!("apikey: {anon}");

    // The reference connects as the database's owner: the same database, table and row.
    let dbname = format!("q_{}", id.replace('-', ""));
    let mut config: tokio_postgres::Config = cluster.parse().unwrap();
    config.dbname(&dbname);

    println!(
        "data API benchmark: one row by primary key ({ROWS} rows), {}, a pool of {POOL} on both sides, Quire with {workers} worker(s), {rounds} round(s), on {} core(s)",
        load.describe(connections, seconds),
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get)
    );
    println!(
        "server: {} ({storage}; tenant cluster {})",
        bin.display(),
        cluster.split('@').next_back().unwrap_or("")
    );
    let read = planned_read(&config).await;
    let _ = load.run(&url, 2, connections, Some(&header));
    let _ = bare(&config, connections, 2).await;
    let _ = transaction(&config, &read, connections, 2).await;
    #[cfg(feature = "xitca")]
    let _ = xitca::transaction(&cluster, &dbname, &read, connections, 2).await;
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let pid = quire.child.id();
    let (mut goal, mut ceiling, mut own, mut bound) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut allowances, mut spent) = (Vec::new(), Vec::new());
    let mut versus = Vec::new();
    for round in 0..rounds {
        // Each round starts with the next measure, so none always runs first.
        let mut q = None;
        let mut rates = [0.0; MEASURES];
        let mut cost = [PerRequest::default(); MEASURES];
        for turn in 0..MEASURES {
            let which = (round + turn) % MEASURES;
            let before = Spent::now(pid);
            let rate = match which {
                0 => bare(&config, connections, seconds).await,
                1 => transaction(&config, &read, connections, seconds).await,
                #[cfg(feature = "xitca")]
                3 => xitca::transaction(&cluster, &dbname, &read, connections, seconds).await,
                _ => {
                    let measured = load.run(&url, seconds, connections, Some(&header));
                    q = Some(measured);
                    measured.rps
                }
            };
            cost[which] = Spent::now(pid).per_request(before, rate * seconds as f64);
            rates[which] = rate;
        }
        let q = q.unwrap();
        let (a, t) = (rates[0], rates[1]);
        goal.push(q.rps / a);
        ceiling.push(t / a);
        own.push(q.rps / t);
        let (ca, ct, ci) = (cost[0], cost[1], cost[2]);
        let free = cores as f64 * 1e6 / (ci.machine - ci.quire);
        bound.push(free / a);
        // The cores' time per request at the goal's rate, less what the rest spent.
        let allowed = cores as f64 * 1e6 / (GOAL * a) - (ci.machine - ci.quire);
        allowances.push(allowed);
        spent.push(ci.quire);
        println!(
            "round {}: (a) bare tokio-postgres {a:>7.0} q/s | (t) its transaction {t:>7.0}/s | (i) Quire data API {:>7.0} req/s, p99 {:.2} ms | i/a {:.2} t/a {:.2} i/t {:.2}",
            round + 1,
            q.rps,
            q.p99_ms,
            q.rps / a,
            t / a,
            q.rps / t,
        );
        if let (Some(&x), Some(cx)) = (rates.get(3), cost.get(3)) {
            versus.push(x / t);
            println!(
                "  (x) xitca-postgres, the same transaction under one Sync {x:>7.0}/s | x/t {:.2} x/a {:.2} | CPU us per request: (x) {:.0}, client {:.0}",
                x / t,
                x / a,
                cx.machine,
                cx.client,
            );
        }
        println!(
            "  CPU us per request, the machine's and (in it) each program's: (a) {:.0}, client {:.0} | (t) {:.0}, client {:.0} | (i) {:.0}, Quire {:.0}, {} {:.0}; were Quire's free, (i) could reach {free:.0} req/s, {:.2} of (a); at the goal, Quire could spend {allowed:.0} us",
            ca.machine,
            ca.client,
            ct.machine,
            ct.client,
            ci.machine,
            ci.quire,
            load.name(),
            ci.load,
            free / a,
        );
    }
    for (label, ratios, goal) in [
        (
            "i/a (data API read by key):  ",
            &goal,
            &format!("; goal >= {GOAL}"),
        ),
        ("t/a (its transaction, bare): ", &ceiling, &String::new()),
        ("i/t (the gateway's own part):", &own, &String::new()),
        ("i/a if Quire took no CPU:    ", &bound, &String::new()),
        ("x/t (xitca-postgres, wire):  ", &versus, &String::new()),
    ] {
        if ratios.is_empty() {
            continue;
        }
        let (min, max) = spread(ratios);
        println!(
            "{label} median {:.2} (min {min:.2}, max {max:.2}){goal}",
            median(ratios.clone())
        );
    }
    let (min, max) = spread(&allowances);
    let (least, most) = spread(&spent);
    println!(
        "Quire's CPU per request of (i): at the goal it could spend a median {:.0} us (min {min:.0}, max {max:.0}); it spent {:.0} us (min {least:.0}, max {most:.0})",
        median(allowances),
        median(spent.clone()),
    );
    call(
        &quire.api,
        &quire.key,
        reqwest::Method::DELETE,
        &base,
        Value::Null,
    )
    .await;
    drop(quire);
    tokio::time::sleep(Duration::from_millis(100)).await;
}
