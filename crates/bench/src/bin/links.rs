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

use quire_bench::load::{Generator, Measure};
use quire_bench::measure::{env_or, median, spread};
use quire_bench::nginx::{Nginx, install_tools};
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

    let targets: [(&str, String, Option<&str>); 3] = [
        (
            nginx.label.as_str(),
            format!("http://127.0.0.1:{}/s/open", nginx.port),
            None,
        ),
        (
            "quire public link",
            format!("{}/s/open", quire.pages),
            Some(LINKS_HOST),
        ),
        (
            "quire maxViews link",
            format!("{}/s/budgeted", quire.pages),
            Some(LINKS_HOST),
        ),
    ];
    let ratio_names = ["e/a (public link)", "f/a (maxViews link)"];
    println!(
        "link benchmark: a 302 to a {}-byte URL, {}, {workers} worker(s) for nginx and Quire{}, {rounds} round(s), on {} core(s)",
        TARGET.len(),
        load.describe(connections, seconds),
        if pin { ", each bound to a CPU" } else { "" },
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get)
    );
    println!("server: {} ({storage})", bin.display());
    for (_, url, header) in &targets {
        let _warm_up = load.run(url, 2, connections, *header);
    }
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); 2];
    let mut p99_ratios: Vec<Vec<f64>> = vec![Vec::new(); 2];
    let mut table: Vec<Vec<Measure>> = vec![Vec::new(); 3];
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..targets.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        let mut got = vec![
            Measure {
                rps: 0.0,
                p99_ms: 0.0
            };
            targets.len()
        ];
        for i in order {
            let (_, url, header) = &targets[i];
            got[i] = load.run(url, seconds, connections, *header);
        }
        println!("round {round}:");
        for (i, (label, _, _)) in targets.iter().enumerate() {
            println!(
                "  {label:<20} {:>10.0} req/s   p99 {:>7.2} ms   {:>5.2}x nginx   p99 {:>5.2}x nginx's",
                got[i].rps,
                got[i].p99_ms,
                got[i].rps / got[0].rps,
                got[i].p99_ms / got[0].p99_ms
            );
            table[i].push(got[i]);
        }
        for slot in 0..2 {
            ratios[slot].push(got[slot + 1].rps / got[0].rps);
            p99_ratios[slot].push(got[slot + 1].p99_ms / got[0].p99_ms);
        }
    }
    println!();
    println!(
        "{:<20} {:>12} {:>12}",
        "target", "median req/s", "median p99"
    );
    for (i, (label, _, _)) in targets.iter().enumerate() {
        println!(
            "{label:<20} {:>12.0} {:>9.2} ms",
            median(table[i].iter().map(|m| m.rps).collect()),
            median(table[i].iter().map(|m| m.p99_ms).collect())
        );
    }
    println!();
    for (slot, name) in ratio_names.iter().enumerate() {
        let (min, max) = spread(&ratios[slot]);
        println!(
            "ratio {name:<20} median {:.2} (min {min:.2}, max {max:.2})",
            median(ratios[slot].clone())
        );
    }
    for (slot, name) in ratio_names.iter().enumerate() {
        let (min, max) = spread(&p99_ratios[slot]);
        println!(
            "p99 {name:<22} median {:.2} (min {min:.2}, max {max:.2}) of nginx's p99",
            median(p99_ratios[slot].clone())
        );
    }
    drop(quire);
    tokio::time::sleep(Duration::from_millis(100)).await;
}
