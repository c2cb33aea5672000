//! Publish benchmark: one page of 1,000 generated files, 20 MiB of file data sent as base64,
//! through `POST /api/page/v1/pages`, against the reference of writing the same decoded files
//! to the same disk from this process; then the same files but the first added to a page of
//! one through `POST /api/page/v1/pages/{id}/files`, against writing those. Prints:
//! - both times and their ratio (median of rounds, with min and max);
//! - the time a bare HTTP/1.1 endpoint on a thread of this process takes to receive the same
//!   request: the floor for any server that is sent it on the same machine;
//! - the time another takes to do with it only the work the API requires (receive, find the
//!   files, decode, hash, write; see [`quire_bench::bare`]): the floor for any server that
//!   keeps the API; and the server's time over it;
//! - the time that work takes when done while the body arrives;
//! - the server's CPU time per request, and half of it: the least time that work could take
//!   on two cores; and the same with the CPU time this process spent sending it added;
//! - the server's peak resident memory, and how far it grew above the server's peak before
//!   the first publish, as a multiple of the request.
//!
//! Dirty pages are flushed before each measured phase; neither side calls fsync (the bundle
//! store does not either).
//!
//! Run: `cargo build --release -p quire-server && cargo run --release -p quire-bench --bin publish`
//! (`QUIRE_BENCH_ROUNDS` sets the rounds, default 5; `QUIRE_SERVER_BIN` the server binary;
//! `QUIRE_BENCH_POSTGRES` and `QUIRE_BENCH_S3_ENDPOINT` put the server on PostgreSQL and an
//! S3-compatible server, see `storage_from_env`.)

#![allow(clippy::print_stdout, clippy::unwrap_used)] // a program that reports on stdout

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine;
use quire_bench::measure::median;
use quire_bench::{bare, server_binary, start_server, storage_from_env};
use rand::RngExt;
use serde_json::json;

const FILES: usize = 1_000;
const TOTAL_BYTES: usize = 20 * 1024 * 1024;

fn peak_rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn generate() -> Vec<(String, Vec<u8>)> {
    let mut rng = rand::rng();
    let per_file = TOTAL_BYTES / FILES;
    (0..FILES)
        .map(|i| {
            let path = if i == 0 {
                "index.html".to_owned()
            } else {
                format!("assets/d{}/file{i}.bin", i % 20)
            };
            let mut bytes = vec![0u8; per_file];
            rng.fill(&mut bytes[..]);
            (path, bytes)
        })
        .collect()
}

/// The CPU time process `pid` has used so far, in milliseconds: its threads' user and system
/// time, those that have ended included, counted in clock ticks of 10 ms.
fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are the 14th and 15th fields, the 12th and 13th after the name.
    (ticks(11) + ticks(12)) * 10.0
}

/// Writes `files` under `dir` after flushing dirty pages, and times it.
fn write_reference(dir: &Path, files: &[(String, Vec<u8>)]) -> Duration {
    flush_page_cache();
    let started = Instant::now();
    for (path, bytes) in files {
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, bytes).unwrap();
    }
    started.elapsed()
}

/// Flushes dirty pages so neither measurement pays for the other's writeback.
fn flush_page_cache() {
    let _ = Command::new("sync").status();
}

fn files_json(files: &[(String, Vec<u8>)]) -> Vec<serde_json::Value> {
    let b64 = base64::engine::general_purpose::STANDARD;
    files
        .iter()
        .map(|(p, b)| json!({"path": p, "content": b64.encode(b), "encoding": "base64"}))
        .collect()
}

/// The page API, as the bench's account.
struct Client {
    http: reqwest::Client,
    api: String,
    key: String,
    /// The bare endpoints (see [`bare`]).
    bare: String,
}

impl Client {
    /// Posts `body` to `url` as the bench's account after flushing dirty pages; returns the
    /// time until the whole answer is in, its status and its text.
    async fn timed_send(&self, url: String, body: String) -> (Duration, u16, String) {
        flush_page_cache();
        let started = Instant::now();
        let resp = self
            .http
            .post(url)
            .header("authorization", format!("Bearer {}", self.key))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (started.elapsed(), status, text)
    }

    /// Sends `body` to the bare endpoint `floor` (`receive`, `publish` or
    /// `publish-streamed`) as `timed_post` sends it to the server.
    async fn timed_bare(&self, floor: &str, body: String) -> Duration {
        let url = format!("{}/{floor}", self.bare);
        let (took, status, _) = self.timed_send(url, body).await;
        assert_eq!(status, 204);
        took
    }

    /// Posts `body` to `/api/page/v1/{path}`, whose answer must have status `expect`.
    async fn timed_post(
        &self,
        path: &str,
        body: String,
        expect: u16,
    ) -> (Duration, serde_json::Value) {
        let url = format!("{}/api/page/v1/{path}", self.api);
        let (took, status, text) = self.timed_send(url, body).await;
        assert_eq!(status, expect, "{text}");
        (took, serde_json::from_str(&text).unwrap())
    }

    /// One round: `body` posted to `path` (answered `expect`), the bare writes of `files`
    /// under `dir`, and the same body sent to each bare endpoint.
    async fn round(
        &self,
        path: &str,
        body: String,
        expect: u16,
        dir: &Path,
        files: &[(String, Vec<u8>)],
    ) -> Round {
        let cpu_before = cpu_ms(std::process::id());
        let (served, _) = self.timed_post(path, body.clone(), expect).await;
        let client_cpu_ms = cpu_ms(std::process::id()) - cpu_before;
        let reference = write_reference(dir, files);
        let received = self.timed_bare("receive", body.clone()).await;
        let bare_published = self.timed_bare("publish", body.clone()).await;
        let bare_streamed = self.timed_bare("publish-streamed", body).await;
        Round {
            served,
            reference,
            received,
            bare_published,
            bare_streamed,
            client_cpu_ms,
        }
    }
}

/// The rounds of one kind of request against the bare writes of the same files.
#[derive(Default)]
struct Phase {
    ratios: Vec<f64>,
    served_ms: Vec<f64>,
    reference_ms: Vec<f64>,
    received_ms: Vec<f64>,
    bare_published_ms: Vec<f64>,
    bare_streamed_ms: Vec<f64>,
    /// Each round's server time over its bare publish's.
    over_bare: Vec<f64>,
    client_cpu_ms: f64,
}

/// One round's five times, and the CPU time this process spent sending the request (with
/// starting `sync` before it, a fraction of a millisecond).
struct Round {
    served: Duration,
    reference: Duration,
    received: Duration,
    bare_published: Duration,
    bare_streamed: Duration,
    client_cpu_ms: f64,
}

impl Phase {
    fn record(&mut self, round: usize, times: &Round, request_mib: f64) {
        if round == 0 {
            println!(
                "{:>5} {:>10} {:>8} {:>6} {:>11} {:>12} {:>15} {:>12}",
                "round",
                "server ms",
                "disk ms",
                "ratio",
                "receive ms",
                "bare pub ms",
                "streamed pub ms",
                "request MiB"
            );
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let ratio = times.served.as_secs_f64() / times.reference.as_secs_f64();
        println!(
            "{round:>5} {:>10.1} {:>8.1} {ratio:>6.2} {:>11.1} {:>12.1} {:>15.1} {request_mib:>12.1}",
            ms(times.served),
            ms(times.reference),
            ms(times.received),
            ms(times.bare_published),
            ms(times.bare_streamed)
        );
        self.ratios.push(ratio);
        self.served_ms.push(ms(times.served));
        self.reference_ms.push(ms(times.reference));
        self.received_ms.push(ms(times.received));
        self.bare_published_ms.push(ms(times.bare_published));
        self.bare_streamed_ms.push(ms(times.bare_streamed));
        self.over_bare
            .push(times.served.as_secs_f64() / times.bare_published.as_secs_f64());
        self.client_cpu_ms += times.client_cpu_ms;
    }

    /// Prints the server's CPU time per request of the phase: `spent_ms` over `requests`.
    /// Halved, it is the least time a request could take with all of it on both cores. Then
    /// the same with the CPU time the client spent sending each request added, since it
    /// runs on the same cores.
    fn cpu(&self, what: &str, spent_ms: f64, requests: usize) {
        let per = spent_ms / requests as f64;
        let reference = median(self.reference_ms.clone());
        println!(
            "server CPU: {per:.1} ms per {what} request ({spent_ms:.0} ms over {requests}); on 2 \
             cores at best {:.1} ms, {:.2}x disk",
            per / 2.0,
            per / 2.0 / reference
        );
        let client = self.client_cpu_ms / self.ratios.len() as f64;
        println!(
            "client CPU: {client:.1} ms per {what} request; server and client on 2 cores at \
             best {:.1} ms, {:.2}x disk",
            (per + client) / 2.0,
            (per + client) / 2.0 / reference
        );
    }

    fn summary(self, what: &str) {
        let min = self.ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.ratios.iter().copied().fold(0.0, f64::max);
        let (reference, received) = (median(self.reference_ms), median(self.received_ms));
        println!(
            "median: {what} {:.1} ms, disk {reference:.1} ms, ratio {what}/disk {:.2} (min {min:.2}, max {max:.2})",
            median(self.served_ms),
            median(self.ratios)
        );
        println!(
            "median: receiving the same request on a bare endpoint {received:.1} ms, {:.2}x disk",
            received / reference
        );
        let bare = median(self.bare_published_ms);
        println!(
            "median: the bare publish of it (receive, find, decode, SHA-256, write on all \
             cores) {bare:.1} ms, {:.2}x disk; {what}/bare publish {:.2} (min {:.2}, max {:.2})",
            bare / reference,
            median(self.over_bare.clone()),
            self.over_bare.iter().copied().fold(f64::INFINITY, f64::min),
            self.over_bare.iter().copied().fold(0.0, f64::max)
        );
        let streamed = median(self.bare_streamed_ms);
        println!(
            "median: the same work done while the body arrives {streamed:.1} ms, {:.2}x disk",
            streamed / reference
        );
    }
}

/// The server's peak resident memory so far, and its growth above `baseline_kib` as a
/// multiple of a request of `request_mib`.
fn print_memory(pid: u32, baseline_kib: u64, request_mib: f64, after: &str) {
    let (rss, hwm) = peak_rss_kib(pid);
    let growth_mib = hwm.saturating_sub(baseline_kib) as f64 / 1024.0;
    println!(
        "server memory after the {after}: peak RSS {:.1} MiB (before the first publish {:.1} MiB, \
         now {:.1} MiB); peak growth {growth_mib:.1} MiB, {:.2}x the {request_mib:.1} MiB request",
        hwm as f64 / 1024.0,
        baseline_kib as f64 / 1024.0,
        rss as f64 / 1024.0,
        growth_mib / request_mib
    );
}

#[tokio::main]
async fn main() {
    let rounds: usize = std::env::var("QUIRE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let bin = server_binary();
    let work = tempfile::tempdir().unwrap();
    let (storage, env) = storage_from_env().await;
    let server = start_server(&bin, work.path(), &env);
    let (addr, key) = (server.api.clone(), server.key.clone());
    let pid = server.child.id();

    let files = generate();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(300))
        .build()
        .unwrap();
    let (_, baseline_hwm) = peak_rss_kib(pid);
    println!(
        "publish benchmark: {FILES} files, {} MiB of file data (base64 in the request), {rounds} rounds",
        TOTAL_BYTES / 1024 / 1024
    );
    println!(
        "server: {} ({storage}; the reference writes to local disk)",
        bin.display()
    );
    let client = Client {
        http,
        api: addr,
        key,
        bare: bare::start(&work.path().join("bare")),
    };
    let mut request_mib = 0.0;
    let mut publish = Phase::default();
    let cpu_before = cpu_ms(pid);
    for round in 0..rounds {
        let body = json!({
            "title": format!("Bench {round}"),
            "files": files_json(&files),
        })
        .to_string();
        request_mib = body.len() as f64 / 1024.0 / 1024.0;
        let dir = work.path().join(format!("reference{round}"));
        let times = client.round("pages", body, 201, &dir, &files).await;
        publish.record(round, &times, request_mib);
    }
    publish.cpu("publish", cpu_ms(pid) - cpu_before, rounds);
    publish.summary("publish");
    print_memory(pid, baseline_hwm, request_mib, "publishes");

    // Add-files: the same bundle but its first file, added to a page that holds only that one.
    println!(
        "add-files: {} files to a page of 1, {rounds} rounds",
        FILES - 1
    );
    let mut add = Phase::default();
    let cpu_before = cpu_ms(pid);
    for round in 0..rounds {
        let first = json!({"title": format!("Grown {round}"), "files": files_json(&files[..1])});
        let (_, created) = client.timed_post("pages", first.to_string(), 201).await;
        let id = created["id"].as_str().unwrap().to_owned();
        let body = json!({"files": files_json(&files[1..])}).to_string();
        let mib = body.len() as f64 / 1024.0 / 1024.0;
        let dir = work.path().join(format!("added{round}"));
        let path = format!("pages/{id}/files");
        let times = client.round(&path, body, 200, &dir, &files[1..]).await;
        add.record(round, &times, mib);
    }
    // Each round also publishes the page of one file that the files are added to.
    add.cpu("add-files", cpu_ms(pid) - cpu_before, rounds);
    add.summary("add-files");
    print_memory(pid, baseline_hwm, request_mib, "publishes and add-files");
    drop(server);
}
