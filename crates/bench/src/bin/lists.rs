//! List benchmark (k): what whole lists of a large account cost the server in memory. An
//! account with 20,000 pages (published through the API, 8 at a time) is listed whole with
//! `GET /api/page/v1/pages` five times in a row; the server's resident memory (`VmRSS`) is
//! read before, during (every 20 ms, the peak), 2 s after and 12 s after, and compared with
//! the size of one answer. Goal: growth at most 2x one answer's size. It also reads the same
//! list by pages of 1,000 (`limit`, `cursor`) and checks it is the whole list, in order.
//!
//! Run: `cargo build --release -p quire-server && cargo run --release -p quire-bench --bin lists`
//! (`QUIRE_BENCH_PAGES`, pages to publish, default 20000; `QUIRE_BENCH_LISTS`, whole lists
//! in a row, default 5; `QUIRE_BENCH_POSTGRES` for PostgreSQL; `QUIRE_SERVER_BIN`.)

#![allow(clippy::print_stdout, clippy::unwrap_used)] // a program that reports on stdout

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quire_bench::measure::{MIB, env_or, mib, rss};
use quire_bench::{server_binary, start_server, storage_from_env};
use serde_json::{Value, json};

const PUBLISHERS: usize = 8;

fn growth(after: u64, before: u64) -> f64 {
    (after as f64 - before as f64) / MIB
}

/// Publishes `count` small pages, `PUBLISHERS` at a time; a title of some length, a
/// password policy and a view budget, so each listed page carries what a real one does.
async fn publish(http: &reqwest::Client, api: &str, key: &str, count: usize) {
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..PUBLISHERS {
        let (http, next) = (http.clone(), next.clone());
        let (url, key) = (format!("{api}/api/page/v1/pages"), key.to_owned());
        tasks.push(tokio::spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= count as u64 {
                    return;
                }
                let body = json!({
                    "title": format!("Quarterly report draft number {n} for the team"),
                    "access": "public",
                    "maxViews": 1000,
                    "files": [{"path": "index.html", "content": format!("<h1>{n}</h1>")}]
                });
                let r = http.post(&url).bearer_auth(&key).json(&body).send().await;
                let r = r.unwrap();
                assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

/// Reads RSS every 20 ms until `done`; returns the highest.
async fn peak(pid: u32, done: Arc<AtomicBool>) -> u64 {
    let mut high = rss(pid);
    while !done.load(Ordering::Relaxed) {
        high = high.max(rss(pid));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    high.max(rss(pid))
}

#[tokio::main]
async fn main() {
    let pages: usize = env_or("QUIRE_BENCH_PAGES", 20_000);
    let lists: usize = env_or("QUIRE_BENCH_LISTS", 5);
    let (storage, env) = storage_from_env().await;
    let dir = tempfile::tempdir().unwrap();
    let server = start_server(&server_binary(), dir.path(), &env);
    let pid = server.child.id();
    let http = reqwest::Client::new();
    let url = format!("{}/api/page/v1/pages", server.api);

    let started = Instant::now();
    publish(&http, &server.api, &server.key, pages).await;
    println!(
        "lists benchmark ({storage}): {pages} pages published in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    tokio::time::sleep(Duration::from_secs(12)).await;
    let idle = rss(pid);

    let done = Arc::new(AtomicBool::new(false));
    let watcher = tokio::spawn(peak(pid, done.clone()));
    let mut size = 0;
    let mut took = Vec::new();
    for _ in 0..lists {
        let started = Instant::now();
        let r = http
            .get(&url)
            .bearer_auth(&server.key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body = r.bytes().await.unwrap();
        took.push(started.elapsed().as_secs_f64() * 1000.0);
        let listed: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(listed["pages"].as_array().unwrap().len(), pages);
        size = body.len() as u64;
    }
    done.store(true, Ordering::Relaxed);
    let high = watcher.await.unwrap();
    let right_after = rss(pid);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let soon = rss(pid);
    tokio::time::sleep(Duration::from_secs(10)).await;
    let later = rss(pid);
    let answer = size as f64 / MIB;
    println!(
        "one whole list: {} ({pages} pages); {lists} lists took {} ms",
        mib(size),
        took.iter()
            .map(|t| format!("{t:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "RSS idle {}; peak {} ({:+.1} MiB, {:.2}x one answer); right after {} ({:+.1} MiB); 2 s after {} ({:+.1} MiB); 12 s after {} ({:+.1} MiB, {:.2}x one answer; goal <= 2x)",
        mib(idle),
        mib(high),
        growth(high, idle),
        growth(high, idle) / answer,
        mib(right_after),
        growth(right_after, idle),
        mib(soon),
        growth(soon, idle),
        mib(later),
        growth(later, idle),
        growth(later, idle) / answer,
    );

    // The same list by pages of 1,000: every page once, in the whole list's order.
    let whole: Value = http
        .get(&url)
        .bearer_auth(&server.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let started = Instant::now();
    let mut paged = Vec::new();
    let mut next = format!("{url}?limit=1000");
    let mut reads = 0;
    loop {
        let page: Value = http
            .get(&next)
            .bearer_auth(&server.key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        reads += 1;
        paged.extend(page["pages"].as_array().unwrap().iter().cloned());
        match page["nextCursor"].as_str() {
            Some(cursor) => next = format!("{url}?limit=1000&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(&Value::Array(paged), &whole["pages"]);
    println!(
        "paged by 1,000: {reads} reads in {:.0} ms, the whole list in order",
        started.elapsed().as_secs_f64() * 1000.0
    );
}
