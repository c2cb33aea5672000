//! Agent endpoint benchmark (j): `tools/call list_pages` on `/mcp` against
//! `GET /api/page/v1/pages` with the same key and the same `limit`, in the same run. An
//! account with 200 pages is listed 20 at a time by 32 connections for a few seconds per
//! measurement, the two targets alternating for several rounds; the load comes from this
//! process (the same HTTP client for both, so the client's cost is the same on both sides).
//! Prints each round's requests per second and the median ratio MCP/REST. Goal: >= 0.5.
//!
//! Run: `cargo build --release -p quire-server && cargo run --release -p quire-bench --bin agent`
//! (`QUIRE_BENCH_ROUNDS`, default 3; `QUIRE_BENCH_SECONDS` per measurement, default 5;
//! `QUIRE_BENCH_CONNECTIONS`, default 32; `QUIRE_BENCH_POSTGRES` for PostgreSQL;
//! `QUIRE_SERVER_BIN`.)

#![allow(clippy::print_stdout, clippy::unwrap_used)] // a program that reports on stdout

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quire_bench::measure::{env_or, median};
use quire_bench::{server_binary, start_server, storage_from_env};
use serde_json::{Value, json};

const PAGES: usize = 200;
const LIMIT: usize = 20;

/// One request of a target, checked: a wrong answer must not count as throughput.
#[derive(Clone)]
enum Target {
    Rest { url: String },
    Mcp { url: String, body: String },
}

impl Target {
    fn name(&self) -> &'static str {
        match self {
            Target::Rest { .. } => "GET /api/page/v1/pages",
            Target::Mcp { .. } => "tools/call list_pages",
        }
    }

    async fn once(&self, http: &reqwest::Client, key: &str) {
        let listed: Value = match self {
            Target::Rest { url } => {
                let r = http.get(url).bearer_auth(key).send().await.unwrap();
                assert_eq!(r.status(), 200);
                r.json().await.unwrap()
            }
            Target::Mcp { url, body } => {
                let r = http
                    .post(url)
                    .bearer_auth(key)
                    // The endpoint answers only its own host (DNS rebinding), the base URL's.
                    .header("host", "quire.bench")
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", "list_pages")
                    .body(body.clone())
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 200);
                let answer: Value = r.json().await.unwrap();
                assert_eq!(answer["result"]["isError"], false, "{answer}");
                answer["result"]["structuredContent"].clone()
            }
        };
        assert_eq!(listed["pages"].as_array().unwrap().len(), LIMIT);
    }
}

/// Requests per second of `target` over `seconds` with `connections` closed loops.
async fn measure(
    target: &Target,
    http: &reqwest::Client,
    key: &str,
    seconds: u64,
    connections: usize,
) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut loops = Vec::new();
    for _ in 0..connections {
        let (target, http, key, done) =
            (target.clone(), http.clone(), key.to_owned(), done.clone());
        loops.push(tokio::spawn(async move {
            while Instant::now() < until {
                target.once(&http, &key).await;
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for l in loops {
        l.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let rounds: usize = env_or("QUIRE_BENCH_ROUNDS", 3);
    let seconds: u64 = env_or("QUIRE_BENCH_SECONDS", 5);
    let connections: usize = env_or("QUIRE_BENCH_CONNECTIONS", 32);
    let (storage, env) = storage_from_env().await;
    let dir = tempfile::tempdir().unwrap();
    let server = start_server(&server_binary(), dir.path(), &env);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(connections)
        .build()
        .unwrap();

    for n in 0..PAGES {
        let body = json!({
            "title": format!("Quarterly report draft number {n} for the team"),
            "files": [{"path": "index.html", "content": format!("<h1>{n}</h1>")}]
        });
        let r = http
            .post(format!("{}/api/page/v1/pages", server.api))
            .bearer_auth(&server.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
    }

    let rest = Target::Rest {
        url: format!("{}/api/page/v1/pages?limit={LIMIT}", server.api),
    };
    let mcp = Target::Mcp {
        url: format!("{}/mcp", server.api),
        body: json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "list_pages", "arguments": {"limit": LIMIT},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}})
        .to_string(),
    };
    println!(
        "agent benchmark ({storage}): {PAGES} pages listed {LIMIT} at a time, {connections} connections, {seconds} s per measurement"
    );
    for target in [&rest, &mcp] {
        measure(target, &http, &server.key, 1, connections).await;
    }
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        // Alternate which goes first, so neither always meets a warmer machine.
        let order = if round % 2 == 1 {
            [&rest, &mcp]
        } else {
            [&mcp, &rest]
        };
        let mut rps = [0.0; 2];
        for target in order {
            let r = measure(target, &http, &server.key, seconds, connections).await;
            println!("round {round}: {:<24} {r:>8.0} requests/s", target.name());
            rps[usize::from(matches!(target, Target::Mcp { .. }))] = r;
        }
        ratios.push(rps[1] / rps[0]);
        println!("round {round}: MCP/REST {:.2}", rps[1] / rps[0]);
    }
    let (low, high) = ratios
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), r| (l.min(*r), h.max(*r)));
    println!(
        "MCP/REST median {:.2} ({low:.2}-{high:.2}); goal >= 0.5",
        median(ratios.clone())
    );
}
