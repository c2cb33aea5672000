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
//!       with its claims, the row turned into JSON by PostgreSQL;
//!   (d) Quire's `GET /api/page/v1/pages/{id}` with a key (`serve` (d)), on the same server
//!       process from the same load generator: the cheapest authenticated API read on the
//!       same HTTP stack, the reference for Quire's own CPU per request.
//! Alternating order, several rounds, each after a warm-up; prints every round and the
//! medians of i/a, t/a (the transaction's own ceiling), i/t (the gateway's HTTP and Rust
//! side against that ceiling), i/d in Quire's CPU per request (the goal: at most
//! [`CPU_GOAL`]) and, with (x), x/t, with their min and max. Each
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

mod clients;
mod page;
#[cfg(feature = "xitca")]
mod xitca;

use std::time::Duration;

use quire_bench::load::Generator;
use quire_bench::measure::{
    children_ticks, cpu_ticks, env_or, machine_ticks, median, micros_per_request, spread,
};
use quire_bench::nginx::install_tools;
use quire_bench::{server_binary, start_server, storage_from_env};
use serde_json::{Value, json};

use crate::clients::{POOL, bare, planned_read, transaction};

/// The goal i/a once was: the allowance each round prints is at this rate.
const GOAL: f64 = 0.5;
/// The goal for Quire's CPU per request of (i) over its CPU per request of (d).
const CPU_GOAL: f64 = 1.5;
const ROWS: i64 = 10_000;
/// The row every measure reads.
const ID: i64 = 4_242;
/// The measures a round rotates through: (a), (t), (i), (d), and (x) when built with it.
const MEASURES: usize = if cfg!(feature = "xitca") { 5 } else { 4 };

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
    let page_url = page::published(&quire.api, &quire.key).await;
    let page_header = format!("Authorization: Bearer {}", quire.key);

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
    let _ = load.run(&page_url, 2, connections, Some(&page_header));
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
    let (mut cpu_ratio, mut cpu_read, mut cpu_page) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // Each round starts with the next measure, so none always runs first.
        let (mut q, mut p) = (None, None);
        let mut rates = [0.0; MEASURES];
        let mut cost = [PerRequest::default(); MEASURES];
        for turn in 0..MEASURES {
            let which = (round + turn) % MEASURES;
            let before = Spent::now(pid);
            let rate = match which {
                0 => bare(&config, connections, seconds).await,
                1 => transaction(&config, &read, connections, seconds).await,
                #[cfg(feature = "xitca")]
                4 => xitca::transaction(&cluster, &dbname, &read, connections, seconds).await,
                3 => {
                    let measured = load.run(&page_url, seconds, connections, Some(&page_header));
                    p = Some(measured);
                    measured.rps
                }
                _ => {
                    let measured = load.run(&url, seconds, connections, Some(&header));
                    q = Some(measured);
                    measured.rps
                }
            };
            cost[which] = Spent::now(pid).per_request(before, rate * seconds as f64);
            rates[which] = rate;
        }
        let (q, p) = (q.unwrap(), p.unwrap());
        let (a, t) = (rates[0], rates[1]);
        goal.push(q.rps / a);
        ceiling.push(t / a);
        own.push(q.rps / t);
        let (ca, ct, ci, cd) = (cost[0], cost[1], cost[2], cost[3]);
        cpu_ratio.push(ci.quire / cd.quire);
        cpu_read.push(ci.quire);
        cpu_page.push(cd.quire);
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
        println!(
            "  Quire's CPU us per request: (i) data API read {:.1} | (d) page API read {:.1} ({:.0} req/s, p99 {:.2} ms) | i/d {:.2} (goal <= {CPU_GOAL})",
            ci.quire,
            cd.quire,
            p.rps,
            p.p99_ms,
            ci.quire / cd.quire,
        );
        if let (Some(&x), Some(cx)) = (rates.get(4), cost.get(4)) {
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
        (
            "i/d (Quire's CPU per read):   ",
            &cpu_ratio,
            &format!("; goal <= {CPU_GOAL}"),
        ),
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
    let (least, most) = spread(&cpu_page);
    println!(
        "Quire's CPU per request of (d), the page API read: {:.1} us (min {least:.1}, max {most:.1}); of (i): {:.1} us",
        median(cpu_page),
        median(cpu_read),
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
