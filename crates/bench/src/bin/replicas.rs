//! Two-replica benchmark: two `quire-server` replicas on one PostgreSQL database (and one
//! bundle store: the S3-compatible server, or a folder both share) behind nginx running the
//! documented proxy configuration, `deploy/nginx.conf`, measured with a mixed read load from
//! `wrk` (six views of a public page on its owner's origin, `bench.pages.example.com`, to one
//! `GET /api/page/v1/pages/{id}` and one `GET /api/page/v1/pages?limit=20` with a key, on
//! each connection in turn; `QUIRE_BENCH_MIX=6:1:1` sets the three counts):
//!   (a) requests per second through nginx with one replica (the same file with one server
//!       line less in each upstream: the same nginx and the same proxy hop) against two, and
//!       the ratio two/one;
//!   (b) p50, p99, p99.9, the slowest answer and every error of a window of that load during
//!       which one of the two replicas is SIGKILLed and, after a pause, started again on the
//!       same ports, against a window of the same length with nothing killed.
//! Rounds alternate the order of (a)'s two; (b)'s undisturbed window comes first, the killed
//! one second, then a warm-up with the restarted replica. Prints every round, then the
//! medians with their min and max.
//!
//! Each replica runs `QUIRE_WORKERS=1` (one pages worker, one API worker), unpinned: one
//! replica then has one core's worth of workers and two have two, which on a 2-core machine
//! is the most the second replica can add. `QUIRE_PIN_WORKERS` would bind each replica's
//! first worker to the same first CPU, so both replicas would share one core. nginx (2
//! workers), `wrk` and PostgreSQL share the same cores, so the ratio stays well under 2;
//! each run prints the cores the replicas, nginx and the whole machine used.
//!
//! Run: `cargo build --release -p quire-server && cargo run --release -p quire-bench --bin
//! replicas`. PostgreSQL from `QUIRE_BENCH_POSTGRES`, else `QUIRE_TEST_POSTGRES_URL`, else
//! `postgres://postgres@127.0.0.1:5432/postgres` (a fresh database each run); bundles on
//! `QUIRE_BENCH_S3_ENDPOINT` (else `QUIRE_TEST_S3_ENDPOINT`; a fresh bucket), else a folder.
//! `QUIRE_BENCH_ROUNDS` (3), `QUIRE_BENCH_SECONDS` per throughput run (5),
//! `QUIRE_BENCH_WINDOW` seconds of each latency window (10), `QUIRE_BENCH_KILL_AT` seconds
//! into the window (3), `QUIRE_BENCH_DOWN_MS` between the kill and the restart (1000),
//! `QUIRE_BENCH_CONNECTIONS` (64), `QUIRE_BENCH_NGINX_WORKERS` (2), `QUIRE_BENCH_TLS`
//! (`true`: TLS at nginx with a self-signed certificate; default plain HTTP),
//! `QUIRE_BENCH_NGINX_CONF`, `QUIRE_SERVER_BIN`.

#![allow(clippy::print_stdout, clippy::unwrap_used)] // a program that reports on stdout

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use quire_bench::measure::{cpu_ticks, env_or, machine_ticks, median, spread};
use quire_bench::mixed::{self, Report, Request};
use quire_bench::nginx::{Nginx, deploy_config, deploy_template, free_port, install_tools};
use quire_bench::{Server, create_account, launch_server, server_binary, storage};
use serde_json::{Value, json};

const API_HOST: &str = "quire.example.com";
const PAGES_HOST: &str = "bench.pages.example.com";

/// The replicas, each started again on its own ports when killed.
struct Replicas {
    bin: PathBuf,
    dir: PathBuf,
    env: Vec<(&'static str, String)>,
    key: String,
    servers: Vec<Server>,
}

impl Replicas {
    /// (API port, pages port) of each.
    fn ports(&self) -> Vec<(u16, u16)> {
        let port = |url: &str| url.rsplit(':').next().unwrap().parse().unwrap();
        self.servers
            .iter()
            .map(|s| (port(&s.api), port(&s.pages)))
            .collect()
    }

    /// SIGKILLs replica `i`, waits `down`, starts it again on the same ports; returns the
    /// time from the kill to its listening and to its `/readyz` answering 200.
    async fn kill_and_restart(&mut self, i: usize, down: Duration) -> (Duration, Duration) {
        let killed = Instant::now();
        self.servers[i].child.kill().unwrap();
        self.servers[i].child.wait().unwrap();
        tokio::time::sleep(down).await;
        let mut env = self.env.clone();
        let strip = |url: &str| url.trim_start_matches("http://").to_owned();
        env.push(("QUIRE_LISTEN", strip(&self.servers[i].api)));
        env.push(("QUIRE_PAGES_LISTEN", strip(&self.servers[i].pages)));
        self.servers[i] = launch_server(&self.bin, &self.dir, &env, self.key.clone());
        let listening = killed.elapsed();
        let http = reqwest::Client::new();
        let ready = format!("{}/readyz", self.servers[i].api);
        while !http
            .get(&ready)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        (listening, killed.elapsed())
    }
}

async fn publish(api: &str, key: &str, body: Value) -> Value {
    let resp = reqwest::Client::new()
        .post(format!("{api}/api/page/v1/pages"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 201);
    resp.json().await.unwrap()
}

/// About 5 KB of HTML, as the serving benchmark's page.
fn index_html() -> String {
    let mut html = String::from("<!doctype html><html><head><title>Bench</title></head><body>\n");
    while html.len() < 4_900 {
        html.push_str("<p>Quire serves static pages under an access policy and a budget.</p>\n");
    }
    html + "</body></html>\n"
}

/// A self-signed certificate for both names, in `dir`: (certificate, key).
fn self_signed(dir: &Path) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.join("bench.pem"), dir.join("bench.key"));
    let ok = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=quire.example.com", "-addext"])
        .arg(format!(
            "subjectAltName=DNS:{API_HOST},DNS:*.pages.example.com"
        ))
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(ok.status.success(), "openssl could not make a certificate");
    (cert, key)
}

/// Runs `wrk` against `base` (through `nginx`) and says how many cores each replica,
/// nginx's workers and the machine used.
fn measured(
    nginx: &Nginx,
    script: &Path,
    seconds: u64,
    connections: usize,
    r: &Replicas,
) -> Report {
    let replicas: Vec<u32> = r.servers.iter().map(|s| s.child.id()).collect();
    let workers = nginx.worker_pids();
    let ticks = |pids: &[u32]| pids.iter().map(|&p| cpu_ticks(p)).collect::<Vec<u64>>();
    let (before, nginx_before) = (ticks(&replicas), ticks(&workers));
    let (busy, all) = machine_ticks();
    let started = Instant::now();
    let report = mixed::run(&base(nginx), script, seconds, connections);
    let wall = started.elapsed().as_secs_f64() * 100.0; // ticks at 100 Hz
    let (busy2, all2) = machine_ticks();
    let cores = |pids: &[u32], before: Vec<u64>| -> Vec<f64> {
        pids.iter()
            .zip(before)
            .map(|(&p, b)| cpu_ticks(p).saturating_sub(b) as f64 / wall)
            .collect()
    };
    let replica_cores: Vec<String> = cores(&replicas, before)
        .iter()
        .map(|c| format!("{c:.2}"))
        .collect();
    println!(
        "      cores used: replicas {}, nginx {:.2}, the whole machine {:.2}",
        replica_cores.join(" + "),
        cores(&workers, nginx_before).iter().sum::<f64>(),
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get) as f64
            * (busy2 - busy) as f64
            / (all2 - all).max(1) as f64
    );
    report
}

/// Where `wrk` sends the load: nginx's listener (`https` when it speaks TLS).
fn base(nginx: &Nginx) -> String {
    let scheme = if env_or("QUIRE_BENCH_TLS", false) {
        "https"
    } else {
        "http"
    };
    format!("{scheme}://127.0.0.1:{}", nginx.port)
}

fn line(label: &str, r: &Report) -> String {
    format!(
        "{label:<26} {:>8.0} req/s  p50 {:>6.2} ms  p99 {:>7.2} ms  p99.9 {:>7.2} ms  max {:>7.1} ms  errors: {}",
        r.rps,
        r.p50_ms,
        r.p99_ms,
        r.p999_ms,
        r.max_ms,
        r.describe_errors()
    )
}

/// Lines nginx logged since `from` bytes into its error log, by kind.
fn nginx_errors(nginx: &Nginx, from: u64) -> (u64, String) {
    let text = std::fs::read_to_string(nginx.error_log()).unwrap_or_default();
    let new = text.get(usize::try_from(from).unwrap_or(0)..).unwrap_or("");
    let kinds = [
        ("refused", "Connection refused"),
        ("reset", "reset by peer"),
        ("closed early", "prematurely closed"),
        ("no live upstream", "no live upstreams"),
        ("marked down", "temporarily disabled"),
    ];
    let mut counts = vec![0_u64; kinds.len() + 1];
    for l in new.lines() {
        let kind = kinds.iter().position(|(_, k)| l.contains(k));
        counts[kind.unwrap_or(kinds.len())] += 1;
    }
    let mut parts: Vec<String> = kinds
        .iter()
        .zip(&counts)
        .filter(|(_, n)| **n > 0)
        .map(|((name, _), n)| format!("{name} {n}"))
        .collect();
    if counts[kinds.len()] > 0 {
        parts.push(format!("other {}", counts[kinds.len()]));
    }
    (counts.iter().sum(), parts.join(", "))
}

fn log_len(nginx: &Nginx) -> u64 {
    std::fs::metadata(nginx.error_log()).map_or(0, |m| m.len())
}

fn summary(label: &str, v: &[f64], unit: &str) {
    let (min, max) = spread(v);
    println!(
        "{label:<34} median {:>9.2}{unit} (min {min:.2}, max {max:.2})",
        median(v.to_vec())
    );
}

#[tokio::main]
async fn main() {
    let rounds: usize = env_or("QUIRE_BENCH_ROUNDS", 3);
    let seconds: u64 = env_or("QUIRE_BENCH_SECONDS", 5);
    let window: u64 = env_or("QUIRE_BENCH_WINDOW", 10);
    let kill_at: f64 = env_or("QUIRE_BENCH_KILL_AT", 3.0);
    let down = Duration::from_millis(env_or("QUIRE_BENCH_DOWN_MS", 1000));
    let connections: usize = env_or("QUIRE_BENCH_CONNECTIONS", 64);
    let nginx_workers: usize = env_or("QUIRE_BENCH_NGINX_WORKERS", 2);
    let tls: bool = env_or("QUIRE_BENCH_TLS", false);
    install_tools();

    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("quire");
    std::fs::create_dir_all(&dir).unwrap();
    let postgres = std::env::var("QUIRE_BENCH_POSTGRES")
        .or_else(|_| std::env::var("QUIRE_TEST_POSTGRES_URL"))
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let s3 = std::env::var("QUIRE_BENCH_S3_ENDPOINT")
        .or_else(|_| std::env::var("QUIRE_TEST_S3_ENDPOINT"))
        .ok();
    let (storage, mut env) = storage(Some(postgres), s3).await;
    let scheme = if tls { "https" } else { "http" };
    env.extend([
        ("QUIRE_WORKERS", "1".to_owned()),
        ("QUIRE_PIN_WORKERS", "false".to_owned()),
        ("QUIRE_TRUSTED_PROXIES", "127.0.0.1".to_owned()),
        ("QUIRE_BASE_URL", format!("{scheme}://{API_HOST}")),
        (
            "QUIRE_PAGES_URL",
            format!("{scheme}://{{handle}}.pages.example.com"),
        ),
    ]);
    let bin = server_binary();
    let key = create_account(&bin, &dir, &env);
    let servers = (0..2)
        .map(|_| launch_server(&bin, &dir, &env, key.clone()))
        .collect();
    let mut replicas = Replicas {
        bin: bin.clone(),
        dir,
        env,
        key: key.clone(),
        servers,
    };

    let files = json!([{"path": "index.html", "content": index_html()}]);
    let api = replicas.servers[0].api.clone();
    let page = publish(
        &api,
        &key,
        json!({"title": "Public", "slug": "public",
        "access": "public", "files": files}),
    )
    .await;
    for n in 1..5 {
        publish(
            &api,
            &key,
            json!({"title": format!("Other {n}"), "access": "public",
            "files": [{"path": "index.html", "content": "<p>other</p>"}]}),
        )
        .await;
    }
    let id = page["id"].as_str().unwrap();
    let auth = ("Authorization".to_owned(), format!("Bearer {key}"));
    let host = |h: &str| ("Host".to_owned(), h.to_owned());
    let view = Request {
        label: "public page".into(),
        path: "/public/".into(),
        headers: vec![host(PAGES_HOST)],
    };
    let mix: Vec<usize> = env_or("QUIRE_BENCH_MIX", "6:1:1".to_owned())
        .split(':')
        .map(|n| n.parse().unwrap())
        .collect();
    let mut cycle = vec![view.clone(); mix[0]];
    for (n, label, path) in [
        (mix[1], "page API", format!("/api/page/v1/pages/{id}")),
        (mix[2], "list API", "/api/page/v1/pages?limit=20".to_owned()),
    ] {
        let request = Request {
            label: label.into(),
            path,
            headers: vec![host(API_HOST), auth.clone()],
        };
        cycle.extend(std::iter::repeat_n(request, n));
    }

    let (conf_path, template) = deploy_template();
    let certificate = tls.then(|| self_signed(work.path()));
    let tls_files = certificate
        .as_ref()
        .map(|(c, k)| (c.as_path(), k.as_path()));
    let ports = replicas.ports();
    let proxies: Vec<Nginx> = [1, 2]
        .iter()
        .map(|&n| {
            let port = free_port();
            let conf = deploy_config(&template, &ports[..n], port, free_port(), tls_files);
            let name = format!("{n}-replica");
            let http = format!("access_log off;\n{conf}");
            Nginx::launch(work.path(), &name, &name, nginx_workers, false, port, &http)
        })
        .collect();

    // Every request of the cycle answers 200 through each proxy, and the page from each
    // replica directly.
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let mut checks: Vec<(String, &Request)> = Vec::new();
    for proxy in &proxies {
        checks.extend(cycle.iter().map(|r| (base(proxy), r)));
    }
    checks.extend(replicas.servers.iter().map(|s| (s.pages.clone(), &view)));
    for (origin, r) in checks {
        let mut req = http.get(format!("{origin}{}", r.path));
        for (k, v) in &r.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let status = req.send().await.unwrap().status();
        assert!(
            status.is_success(),
            "{origin}{} ({}): {status}",
            r.path,
            r.label
        );
    }

    let scripts = work.path().join("mix.lua");
    let counted = work.path().join("mix-statuses.lua");
    mixed::write_script(&scripts, &cycle, false);
    mixed::write_script(&counted, &cycle, true);
    println!(
        "replicas benchmark: wrk -t2 -c{connections}, {seconds} s per throughput run, {window} s \
         windows, {rounds} round(s), on {} core(s)",
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get)
    );
    println!("server: {} ({storage})", bin.display());
    println!(
        "each replica QUIRE_WORKERS=1, unpinned: one replica has one core's worth of workers, \
         two have two, on a machine whose cores nginx, wrk and PostgreSQL share"
    );
    println!(
        "nginx: {} with its addresses on loopback, {}, {nginx_workers} workers, access_log off; \
         one replica: the same file with one server line less in each upstream",
        conf_path.display(),
        if tls {
            "TLS with a self-signed certificate"
        } else {
            "TLS dropped (plain listen, no certificate lines)"
        }
    );
    println!(
        "load: each connection cycles through {} x GET /public/ (Host {PAGES_HOST}, {} bytes), \
         {} x GET /api/page/v1/pages/{{id}} and {} x GET /api/page/v1/pages?limit=20 (5 pages) \
         with a key",
        mix[0],
        index_html().len(),
        mix[1],
        mix[2]
    );
    println!(
        "kill: replica 2 SIGKILLed {kill_at} s into a window, started again on its ports {} ms \
         later",
        down.as_millis()
    );

    let one = base(&proxies[0]);
    let two = base(&proxies[1]);
    let _warm = mixed::run(&one, &scripts, 2, connections);
    let _warm = mixed::run(&two, &scripts, 2, connections);
    let (mut ones, mut twos, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut calm_p99, mut kill_p99, mut p99_ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut kill_max, mut kill_errors, mut readies) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        println!("round {round}:");
        let mut got = [Report::default(), Report::default()];
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            got[i] = measured(&proxies[i], &scripts, seconds, connections, &replicas);
            let label = ["one replica", "two replicas"][i];
            println!("  {}", line(label, &got[i]));
        }
        let ratio = got[1].rps / got[0].rps;
        println!("  two/one {ratio:.2}");
        ones.push(got[0].rps);
        twos.push(got[1].rps);
        ratios.push(ratio);

        let calm = measured(&proxies[1], &counted, window, connections, &replicas);
        println!("  {}", line("undisturbed window", &calm));
        let from = log_len(&proxies[1]);
        let wrk = mixed::spawn(&two, &counted, window, connections);
        tokio::time::sleep(Duration::from_secs_f64(kill_at)).await;
        let (listening, ready) = replicas.kill_and_restart(1, down).await;
        let killed = mixed::finish(wrk);
        let (logged, kinds) = nginx_errors(&proxies[1], from);
        println!("  {}", line("window with a kill", &killed));
        println!(
            "      restarted replica listening {:.0} ms and ready {:.0} ms after the kill; \
             statuses {}; nginx logged {logged} line(s){}",
            listening.as_secs_f64() * 1000.0,
            ready.as_secs_f64() * 1000.0,
            killed.statuses,
            if kinds.is_empty() {
                String::new()
            } else {
                format!(" ({kinds})")
            }
        );
        println!(
            "  p99 with a kill / undisturbed {:.2}",
            killed.p99_ms / calm.p99_ms
        );
        calm_p99.push(calm.p99_ms);
        kill_p99.push(killed.p99_ms);
        p99_ratios.push(killed.p99_ms / calm.p99_ms);
        kill_max.push(killed.max_ms);
        kill_errors.push(killed.errors() as f64);
        readies.push(ready.as_secs_f64() * 1000.0);
        // The restarted replica's caches fill before the next round measures it.
        let _warm = mixed::run(&two, &scripts, 2, connections);
    }
    println!();
    summary("one replica", &ones, " req/s");
    summary("two replicas", &twos, " req/s");
    summary("ratio two/one", &ratios, "");
    summary("p99, undisturbed window", &calm_p99, " ms");
    summary("p99, window with a kill", &kill_p99, " ms");
    summary("p99 with a kill / undisturbed", &p99_ratios, "");
    summary("slowest answer, window with a kill", &kill_max, " ms");
    summary("errors, window with a kill", &kill_errors, "");
    summary("kill to ready", &readies, " ms");
    drop(proxies);
    drop(replicas);
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(storage);
}
