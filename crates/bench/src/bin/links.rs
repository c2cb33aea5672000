//! Link benchmark: requests per second and p99 latency of a short link's redirect, measured
//! with `wrk` (or `oha`, see `quire_bench::load`) on this machine, for
//!   (a) nginx answering `return 302` for the same path (the reference),
//!   (e) Quire redirecting a public URL link (`/s/{code}`, no policy),
//!   (f) Quire redirecting a budgeted URL link (`maxViews` 10^9) to a client that does not
//!       ask for HTML (views taken from blocks leased from the database, settled every
//!       second),
//! back to back in alternating order for several rounds, each after a warm-up. Prints every
//! round and the median ratios e/a and f/a with their min and max, and each p99 as a
//! multiple of nginx's. Quire runs on SQLite and local disk, or on PostgreSQL with
//! `QUIRE_BENCH_POSTGRES` (see `storage_from_env`).
//!
//! Run: `cargo build --release -p quire-server && cargo run --release -p quire-bench --bin
//! links` (`QUIRE_BENCH_ROUNDS`, default 3; `QUIRE_BENCH_SECONDS`, default 5;
//! `QUIRE_BENCH_WORKERS` for nginx and Quire alike, default 2; `QUIRE_BENCH_CONNECTIONS`,
//! default 64; `QUIRE_BENCH_LOAD`; `QUIRE_BENCH_PIN`; `QUIRE_SERVER_BIN`).

#![allow(clippy::print_stdout, clippy::unwrap_used)] // a program that reports on stdout

use std::time::Duration;

use quire_bench::load::Generator;
use quire_bench::measure::env_or;
use quire_bench::nginx::{Nginx, install_tools};
use quire_bench::rounds::{Plan, Target, compare};
use quire_bench::{server_binary, start_server, storage_from_env};
use serde_json::{Value, json};

/// Where both servers send their visitors.
const TARGET: &str = "https://example.com/landing?from=bench";
/// The `Host` of short links on the default layout: the bare pages domain.
const LINKS_HOST: &str = "Host: localhost";

async fn shorten(api: &str, key: &str, body: Value) {
    let resp = reqwest::Client::new()
        .post(format!("{api}/api/link/v1/links"))
        .header("authorization", format!("Bearer {key}"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status().as_u16(),
        201,
        "{}",
        resp.text().await.unwrap()
    );
}

#[tokio::main]
async fn main() {
    let rounds: usize = env_or("QUIRE_BENCH_ROUNDS", 3);
    let seconds: u64 = env_or("QUIRE_BENCH_SECONDS", 5);
    let workers: usize = env_or("QUIRE_BENCH_WORKERS", 2);
    let connections: usize = env_or("QUIRE_BENCH_CONNECTIONS", 64);
    let pin: bool = env_or("QUIRE_BENCH_PIN", true);
    let load = Generator::from_env();
    let bin = server_binary();
    install_tools();

    let work = tempfile::tempdir().unwrap();
    let nginx = Nginx::start(
        work.path(),
        "redirect",
        "nginx return 302",
        "",
        &format!("location /s/ {{ return 302 {TARGET}; }}"),
        workers,
        pin,
    );
    let quire_dir = work.path().join("quire");
    std::fs::create_dir_all(&quire_dir).unwrap();
    let (storage, mut env) = storage_from_env().await;
    env.push(("QUIRE_WORKERS", workers.to_string()));
    env.push(("QUIRE_PIN_WORKERS", pin.to_string()));
    let quire = start_server(&bin, &quire_dir, &env);
    shorten(
        &quire.api,
        &quire.key,
        json!({"url": TARGET, "alias": "open"}),
    )
    .await;
    shorten(
        &quire.api,
        &quire.key,
        json!({"url": TARGET, "alias": "budgeted", "maxViews": 1_000_000_000_u64}),
    )
    .await;

    let targets = [
        Target {
            label: nginx.label.as_str(),
            url: format!("http://127.0.0.1:{}/s/open", nginx.port),
            header: None,
            server: nginx.worker_pids(),
        },
        Target {
            label: "quire public link",
            url: format!("{}/s/open", quire.pages),
            header: Some(LINKS_HOST),
            server: vec![quire.child.id()],
        },
        Target {
            label: "quire maxViews link",
            url: format!("{}/s/budgeted", quire.pages),
            header: Some(LINKS_HOST),
            server: vec![quire.child.id()],
        },
    ];
    println!(
        "link benchmark: a 302 to a {}-byte URL, {}, {workers} worker(s) for nginx and Quire{}, {rounds} round(s), on {} core(s)",
        TARGET.len(),
        load.describe(connections, seconds),
        if pin { ", each bound to a CPU" } else { "" },
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get)
    );
    println!("server: {} ({storage})", bin.display());
    compare(
        &load,
        &targets,
        1,
        &["e/a (public link)", "f/a (maxViews link)"],
        Plan {
            rounds,
            seconds,
            connections,
        },
    );
    drop(quire);
    tokio::time::sleep(Duration::from_millis(100)).await;
}
