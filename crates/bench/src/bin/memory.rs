//! Memory benchmark: what the server holds for what clients send it, read from its
//! `/proc/<pid>/status` (`VmRSS`), and how long health checks take meanwhile. Prints:
//! - the resident memory 300 connections add that each declare a page body of 69 MB with the
//!   account's key and send 1 KiB of it, once with the default bound on long bodies in flight
//!   and once with the bound lifted (so that memory following the bytes is measured on its
//!   own); goal: at most 64 MiB;
//! - the resident memory after each of three rounds of 10,000 connections without any
//!   credential that declare a 60 kB body and send it a byte a second, opened 250 every
//!   25 ms, until the server closes them (its body deadline) or 30 s pass, 2 s and 12 s after
//!   each round; goal: within 64 MiB of the server's idle memory after the rounds;
//! - `/healthz` and `/readyz` on a new connection every 100 ms throughout: the slowest and
//!   the median; goal: under 100 ms.
//!
//! Connections come from loopback addresses `127.0.x.y`, at most 200 from each (the server
//! lets an address hold 256); only 127.0.0.0/8 is spoken to. The benchmark raises its own
//! open-file limit to the hard limit.
//!
//! Run: `cargo build --release -p quire-server && cargo run --release -p quire-bench --bin memory`
//! (`QUIRE_BENCH_FLOOD`, connections per round, default 10000; `QUIRE_BENCH_ROUNDS`, default
//! 3; `QUIRE_SERVER_BIN` the server binary; extra `QUIRE_*` variables reach the server.)

#![allow(clippy::print_stdout, clippy::unwrap_used)] // a program that reports on stdout

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quire_bench::measure::{MIB, env_or, mib, rss};
use quire_bench::{Server, server_binary, start_server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::watch;

/// Connections opened from one source address.
const PER_ADDRESS: usize = 200;
/// Connections opened at once in a flood, and the pause between two such batches.
const BATCH: usize = 250;
const BATCH_PAUSE: Duration = Duration::from_millis(25);

fn signed_mib(after: u64, before: u64) -> String {
    let d = after as f64 - before as f64;
    format!("{:+.1} MiB", d / MIB)
}

fn api_addr(server: &Server) -> SocketAddr {
    server.api.trim_start_matches("http://").parse().unwrap()
}

/// The `n`th client address of a group: 127.`group`.x.y, `PER_ADDRESS` connections each.
fn source(group: u8, n: usize) -> IpAddr {
    let address = n / PER_ADDRESS;
    IpAddr::V4(Ipv4Addr::new(
        127,
        group,
        u8::try_from(address / 250).unwrap(),
        u8::try_from(address % 250 + 1).unwrap(),
    ))
}

async fn connect_from(from: IpAddr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from, 0))?;
    socket.connect(to).await
}

/// The status of the answer on `stream` if one has arrived by `wait`.
async fn status_within(stream: &mut TcpStream, wait: Duration) -> Option<u16> {
    let mut buf = [0u8; 512];
    let n = tokio::time::timeout(wait, stream.read(&mut buf))
        .await
        .ok()?
        .ok()?;
    let head = std::str::from_utf8(&buf[..n]).ok()?;
    head.split(' ').nth(1)?.parse().ok()
}

fn tally(statuses: &[Option<u16>]) -> String {
    let mut counts = BTreeMap::new();
    for s in statuses {
        *counts
            .entry(s.map_or_else(|| "none".to_owned(), |s| s.to_string()))
            .or_insert(0) += 1;
    }
    counts
        .iter()
        .map(|(s, n)| format!("{n} x {s}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// 300 connections that declare `declared` bytes of a publish and send 1 KiB of it;
/// returns the server's memory before and while they are held, and what they were answered
/// by then.
async fn large_declared(server: &Server, pid: u32, declared: u64) -> (u64, u64, String) {
    let to = api_addr(server);
    let before = rss(pid);
    let head = format!(
        "POST /api/page/v1/pages HTTP/1.1\r\nHost: {to}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n",
        server.key
    );
    let mut first = br#"{"title":"held","files":[{"path":"index.html","content":""#.to_vec();
    first.resize(1024, b'A');
    let mut held = Vec::new();
    for n in 0..300 {
        let mut stream = connect_from(source(1, n), to).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&first).await.unwrap();
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let during = rss(pid);
    let mut statuses = Vec::new();
    for stream in &mut held {
        statuses.push(status_within(stream, Duration::from_millis(5)).await);
    }
    drop(held);
    (before, during, tally(&statuses))
}

/// Health checks on a new connection every 100 ms until `stop`: their times, in ms.
async fn probe_health(to: SocketAddr, mut stop: watch::Receiver<bool>) -> Vec<f64> {
    let mut times = Vec::new();
    for n in 0usize.. {
        let path = if n % 2 == 0 { "/healthz" } else { "/readyz" };
        let started = Instant::now();
        let answered = tokio::time::timeout(Duration::from_secs(20), async {
            let mut stream = TcpStream::connect(to).await.ok()?;
            let request = format!("GET {path} HTTP/1.1\r\nHost: {to}\r\nConnection: close\r\n\r\n");
            stream.write_all(request.as_bytes()).await.ok()?;
            status_within(&mut stream, Duration::from_secs(20)).await
        })
        .await
        .ok()
        .flatten();
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        times.push(if answered == Some(200) {
            ms
        } else {
            f64::INFINITY
        });
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            _ = stop.changed() => break,
        }
    }
    times
}

/// One slow body: headers, then a byte a second until the server answers or closes, or
/// 30 s pass. Returns the status it got, if any.
async fn slow_body(from: IpAddr, to: SocketAddr) -> Option<u16> {
    let mut stream = connect_from(from, to).await.ok()?;
    let head = format!(
        "POST /api/agent-login/device_authorization HTTP/1.1\r\nHost: {to}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 60000\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.ok()?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if stream.write_all(b"a").await.is_err() {
            return None;
        }
        if let Some(status) = status_within(&mut stream, Duration::from_secs(1)).await {
            return Some(status);
        }
    }
    None
}

/// One round of `count` slow bodies; returns the peak memory sampled and the statuses.
async fn flood(to: SocketAddr, pid: u32, count: usize) -> (u64, String) {
    let peak = Arc::new(AtomicU64::new(0));
    let sampling = {
        let peak = peak.clone();
        tokio::spawn(async move {
            loop {
                peak.fetch_max(rss(pid), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
    };
    let mut tasks = Vec::with_capacity(count);
    for n in 0..count {
        tasks.push(tokio::spawn(slow_body(source(10, n), to)));
        if (n + 1) % BATCH == 0 {
            tokio::time::sleep(BATCH_PAUSE).await;
        }
    }
    let mut statuses = Vec::with_capacity(count);
    for task in tasks {
        statuses.push(task.await.unwrap());
    }
    sampling.abort();
    let peak = peak.load(Ordering::Relaxed);
    (peak, tally(&statuses))
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[at]
}

fn start(dir: &std::path::Path, env: &[(&str, String)]) -> (Server, u32) {
    let server = start_server(&server_binary(), dir, env);
    let pid = server.child.id();
    (server, pid)
}

#[tokio::main]
async fn main() {
    let files = rlimit::increase_nofile_limit(u64::MAX).unwrap_or(1024);
    let count: usize = env_or("QUIRE_BENCH_FLOOD", 10_000);
    let rounds: usize = env_or("QUIRE_BENCH_ROUNDS", 3);
    println!("memory benchmark: open-file limit {files}");
    let declared = 69_000_000;

    for (label, env) in [
        ("default bound on bodies in flight", Vec::new()),
        (
            "bound lifted",
            vec![
                ("QUIRE_BODY_BYTES_IN_FLIGHT", (1u64 << 50).to_string()),
                (
                    "QUIRE_BODY_BYTES_IN_FLIGHT_PER_KEY",
                    (1u64 << 50).to_string(),
                ),
            ],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (server, pid) = start(dir.path(), &env);
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (before, during, answered) = large_declared(&server, pid, declared).await;
        println!(
            "300 x {declared} B declared, 1 KiB sent ({label}): RSS {} -> {} ({}; goal <= +64 MiB); answered within 3 s: {answered}",
            mib(before),
            mib(during),
            signed_mib(during, before),
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let (server, pid) = start(dir.path(), &[]);
    let to = api_addr(&server);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle = rss(pid);
    println!(
        "flood: {rounds} rounds of {count} slow bodies; idle RSS {}",
        mib(idle)
    );
    let (stop, stopped) = watch::channel(false);
    let prober = tokio::spawn(probe_health(to, stopped));
    for round in 1..=rounds {
        let started = Instant::now();
        let (peak, statuses) = flood(to, pid, count).await;
        let took = started.elapsed();
        tokio::time::sleep(Duration::from_secs(2)).await;
        let soon = rss(pid);
        tokio::time::sleep(Duration::from_secs(10)).await;
        let later = rss(pid);
        println!(
            "round {round}: {:.0} s, peak RSS {}; 2 s after {} ({} from idle), 12 s after {} ({}); answers: {statuses}",
            took.as_secs_f64(),
            mib(peak),
            mib(soon),
            signed_mib(soon, idle),
            mib(later),
            signed_mib(later, idle),
        );
    }
    let end = rss(pid);
    stop.send(true).unwrap();
    let mut times = prober.await.unwrap();
    times.sort_by(f64::total_cmp);
    println!(
        "after the rounds: RSS {} ({} from idle; goal within 64 MiB)",
        mib(end),
        signed_mib(end, idle),
    );
    println!(
        "health checks during the rounds: {} (half /readyz), median {:.1} ms, p99 {:.1} ms, slowest {:.1} ms (goal < 100 ms), {} over 100 ms",
        times.len(),
        quantile(&times, 0.5),
        quantile(&times, 0.99),
        times.last().copied().unwrap_or(f64::NAN),
        times.iter().filter(|&&t| t >= 100.0).count(),
    );
}
