//! Object benchmark, on this machine, against references in the same run:
//!   (g) downloading a 100 MiB public object from its owner's origin, 4 clients at once
//!       (`wrk`, each request the whole object): bytes per second against nginx sending the
//!       same file with `sendfile on` (goal: at least 0.9);
//!   (h) uploading a 100 MiB object (`PUT /api/object/v1/objects`, raw body, from memory
//!       over loopback): time against writing the same bytes to a file in the same
//!       directory and syncing it to disk, as the server does before an object is ready
//!       (goal: at most 1.3), and the server's peak resident memory during the upload above
//!       its memory before it (sampled from `/proc` every 2 ms; goal: at most 64 MiB).
//!
//! Rounds alternate the order of Quire and its reference; every round is printed, then the
//! medians and the median ratios with their min and max. Quire runs on SQLite and local
//! disk, or on what `QUIRE_BENCH_POSTGRES` and `QUIRE_BENCH_S3_ENDPOINT` name (see
//! `storage_from_env`; the references stay on local disk).
//!
//! Run: `cargo build --release -p quire-server && cargo run --release -p quire-bench --bin
//! objects` (`QUIRE_BENCH_ROUNDS`, default 3; `QUIRE_BENCH_SECONDS` per download
//! measurement, default 10; `QUIRE_BENCH_WORKERS` for nginx and Quire alike, default 2;
//! `QUIRE_BENCH_OBJECT_MIB`, default 100; `QUIRE_BENCH_PIN`; `QUIRE_SERVER_BIN`).

#![allow(clippy::print_stdout, clippy::unwrap_used)] // a program that reports on stdout

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use quire_bench::load::Generator;
use quire_bench::measure::{MIB, env_or, median, mib, rss, spread};
use quire_bench::nginx::{Nginx, install_tools};
use quire_bench::rounds::{Plan, Target, compare};
use quire_bench::{Server, server_binary, start_server, storage_from_env};
use serde_json::Value;

/// The `Host` of the benchmark account's objects on the default layout.
const OWNER_HOST: &str = "Host: bench.localhost";
/// Clients downloading at once in (g).
const CLIENTS: usize = 4;

/// `size` bytes that do not repeat within a MiB (nothing on the way compresses them).
fn content(size: usize) -> Bytes {
    let block: Vec<u8> = (0..1 << 20).map(|_| rand::random::<u8>()).collect();
    let mut bytes = Vec::with_capacity(size);
    while bytes.len() < size {
        let take = (size - bytes.len()).min(block.len());
        bytes.extend_from_slice(&block[..take]);
    }
    bytes.into()
}

/// Uploads `bytes` as a public object at `slug`; returns the object and the seconds taken.
async fn upload(server: &Server, slug: &str, bytes: Bytes) -> (Value, f64) {
    let started = Instant::now();
    let resp = reqwest::Client::new()
        .put(format!("{}/api/object/v1/objects", server.api))
        .query(&[
            ("filename", "bench.bin"),
            ("slug", slug),
            ("access", "public"),
        ])
        .header("authorization", format!("Bearer {}", server.key))
        .header("content-type", "application/octet-stream")
        .body(bytes)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let object: Value = resp.json().await.unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(status, 201, "{object}");
    (object, seconds)
}

async fn delete(server: &Server, object: &Value) {
    let resp = reqwest::Client::new()
        .delete(format!(
            "{}/api/object/v1/objects/{}",
            server.api,
            object["id"].as_str().unwrap()
        ))
        .header("authorization", format!("Bearer {}", server.key))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 204);
}

/// Seconds to write `bytes` to a new file in `dir` and sync it, as a durable write does.
fn write_to_disk(dir: &Path, bytes: &[u8]) -> f64 {
    let path = dir.join("reference.bin");
    let started = Instant::now();
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(bytes).unwrap();
    file.sync_all().unwrap();
    let seconds = started.elapsed().as_secs_f64();
    std::fs::remove_file(path).unwrap();
    seconds
}

/// The highest resident memory of `pid` while `work` runs, sampled every 2 ms.
async fn peak_rss_during<F: Future>(pid: u32, work: F) -> (F::Output, u64) {
    let peak = Arc::new(AtomicU64::new(rss(pid)));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let out = work.await;
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    (out, peak.load(Ordering::Relaxed))
}

fn summary(name: &str, values: &[f64], unit: &str) -> String {
    let (low, high) = spread(values);
    format!(
        "{name}: {:.2}{unit} ({low:.2}-{high:.2})",
        median(values.to_vec())
    )
}

#[tokio::main]
async fn main() {
    let rounds: usize = env_or("QUIRE_BENCH_ROUNDS", 3);
    let seconds: u64 = env_or("QUIRE_BENCH_SECONDS", 10);
    let workers: usize = env_or("QUIRE_BENCH_WORKERS", 2);
    let size_mib: usize = env_or("QUIRE_BENCH_OBJECT_MIB", 100);
    let pin: bool = env_or("QUIRE_BENCH_PIN", true);
    let load = Generator::from_env();
    let bin = server_binary();
    install_tools();

    let work = tempfile::tempdir().unwrap();
    let size = size_mib << 20;
    let bytes = content(size);
    let root = work.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("bench.bin"), &bytes).unwrap();
    let nginx = Nginx::serving(work.path(), &root, true, workers, pin);
    let quire_dir = work.path().join("quire");
    std::fs::create_dir_all(&quire_dir).unwrap();
    let (storage, mut env) = storage_from_env().await;
    env.push(("QUIRE_WORKERS", workers.to_string()));
    env.push(("QUIRE_PIN_WORKERS", pin.to_string()));
    env.push(("QUIRE_MAX_OBJECT_BYTES", (2 * size).to_string()));
    let quire = start_server(&bin, &quire_dir, &env);
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!(
        "object benchmark: a {size_mib} MiB object, {workers} worker(s) for nginx and Quire{}, {rounds} round(s), on {cores} core(s)",
        if pin { ", each bound to a CPU" } else { "" },
    );
    println!("server: {} ({storage})", bin.display());

    // (h) first, on a server that has sent nothing yet.
    let pid = quire.child.id();
    let mut times = (Vec::new(), Vec::new());
    let mut ratios = Vec::new();
    let mut above_idle = Vec::new();
    let _warm_up = write_to_disk(&quire_dir, &bytes);
    for round in 0..rounds {
        let idle = rss(pid);
        let reference_first = round % 2 == 0;
        let mut reference = 0.0;
        if reference_first {
            reference = write_to_disk(&quire_dir, &bytes);
        }
        let ((object, quire_seconds), peak) =
            peak_rss_during(pid, upload(&quire, "upload", bytes.clone())).await;
        if !reference_first {
            reference = write_to_disk(&quire_dir, &bytes);
        }
        delete(&quire, &object).await;
        let ratio = quire_seconds / reference;
        println!(
            "(h) round {}: write and sync {:.3} s, Quire upload {:.3} s ({:.0} MiB/s), ratio {ratio:.2}; RSS {} before, peak {} (+{})",
            round + 1,
            reference,
            quire_seconds,
            size as f64 / MIB / quire_seconds,
            mib(idle),
            mib(peak),
            mib(peak.saturating_sub(idle)),
        );
        times.0.push(reference);
        times.1.push(quire_seconds);
        ratios.push(ratio);
        above_idle.push(peak.saturating_sub(idle) as f64 / MIB);
    }
    println!("{}", summary("(h) write and sync", &times.0, " s"));
    println!("{}", summary("(h) Quire upload", &times.1, " s"));
    println!(
        "{}",
        summary("(h) upload/write ratio (goal <= 1.3)", &ratios, "")
    );
    println!(
        "{}",
        summary(
            "(h) peak RSS above idle (goal <= 64 MiB)",
            &above_idle,
            " MiB"
        )
    );

    // (g): each request is the whole object, so the requests' rate is the bytes' rate.
    let (object, _) = upload(&quire, "download", bytes.clone()).await;
    let url = object["url"].as_str().unwrap();
    let path = url.rsplit_once('/').unwrap().1;
    let targets = [
        Target {
            label: nginx.label.as_str(),
            url: format!("http://127.0.0.1:{}/bench.bin", nginx.port),
            header: None,
            server: nginx.worker_pids(),
        },
        Target {
            label: "quire public object",
            url: format!("{}/{path}", quire.pages),
            header: Some(OWNER_HOST),
            server: vec![quire.child.id()],
        },
    ];
    println!(
        "(g) downloads, {}; each request {size_mib} MiB, so MiB/s = requests/s x {size_mib}",
        load.describe(CLIENTS, seconds)
    );
    compare(
        &load,
        &targets,
        1,
        &["g/a (download throughput, goal >= 0.9)"],
        Plan {
            rounds,
            seconds,
            connections: CLIENTS,
        },
    );
    drop(quire);
    tokio::time::sleep(Duration::from_millis(100)).await;
}
