//! Serving benchmark: requests per second and p99 latency, measured with `wrk` (or `oha`,
//! see `quire_bench::load`) on this machine, for
//!   (a) nginx serving the same `index.html` from disk (its best of `sendfile on` and
//!       `sendfile off` in each round: the reference),
//!   (b) Quire serving a public page,
//!   (c) Quire serving a page with a large `maxViews` (views from blocks leased from the
//!       database, settled every second),
//!   (d) Quire's `GET /api/page/v1/pages/{id}` with a key,
//!   (e) the same with an OAuth access token,
//! back to back in alternating order for several rounds, each after a warm-up. Prints every
//! round and the median ratios b/a to e/a with their min and max, and each target's p99 as a
//! multiple of the lower of nginx's two p99s in the same round. Quire runs on SQLite and
//! local disk, or on PostgreSQL with `QUIRE_BENCH_POSTGRES` (see `storage_from_env`), and
//! logs at info as a deployment does.
//!
//! Installs `wrk` and `nginx-light` with apt when they are missing (as root or through
//! passwordless sudo). Run:
//! `cargo build --release -p quire-server && cargo run --release -p quire-bench --bin serve`
//! (`QUIRE_BENCH_ROUNDS`, default 3; `QUIRE_BENCH_SECONDS` per measurement, default 5;
//! `QUIRE_BENCH_WORKERS` for nginx and Quire alike, default 2; `QUIRE_BENCH_CONNECTIONS`,
//! default 64; `QUIRE_BENCH_TARGETS`, the letters of Quire's targets to run, default `bcde`;
//! `QUIRE_BENCH_LOAD`, `wrk` or `oha`, default `wrk`; `QUIRE_BENCH_PIN`, `false` to leave
//! both servers' workers to the scheduler instead of binding each to a CPU of its own
//! (nginx's `worker_cpu_affinity auto`, Quire's `QUIRE_PIN_WORKERS`); `QUIRE_SERVER_BIN`
//! the server binary.)

#![allow(clippy::print_stdout, clippy::unwrap_used)] // a program that reports on stdout

use std::time::Duration;

use quire_bench::load::Generator;
use quire_bench::measure::env_or;
use quire_bench::nginx::{Nginx, install_tools};
use quire_bench::rounds::{Plan, Target, compare};
use quire_bench::{bearer_token, server_binary, start_server, storage_from_env};
use serde_json::{Value, json};

/// The page both servers send: about 5 KB of HTML, like the baseline measurements.
fn index_html() -> String {
    let mut html = String::from(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bench</title></head><body>\n",
    );
    while html.len() < 4_900 {
        html.push_str("<p>Quire serves static pages under an access policy, an expiry and a view budget.</p>\n");
    }
    html.push_str("</body></html>\n");
    html
}

async fn publish(api: &str, key: &str, body: Value) -> Value {
    let resp = reqwest::Client::new()
        .post(format!("{api}/api/page/v1/pages"))
        .header("authorization", format!("Bearer {key}"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 201);
    resp.json().await.unwrap()
}

/// The `Host` of the benchmark account's pages on the default layout.
const OWNER_HOST: &str = "Host: bench.localhost";

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
    let html = index_html();
    let docroot = work.path().join("www");
    std::fs::create_dir_all(&docroot).unwrap();
    std::fs::write(docroot.join("index.html"), &html).unwrap();
    let nginx = [
        Nginx::serving(work.path(), &docroot, true, workers, pin),
        Nginx::serving(work.path(), &docroot, false, workers, pin),
    ];

    let quire_dir = work.path().join("quire");
    std::fs::create_dir_all(&quire_dir).unwrap();
    let (storage, mut env) = storage_from_env().await;
    env.push(("QUIRE_WORKERS", workers.to_string()));
    env.push(("QUIRE_PIN_WORKERS", pin.to_string()));
    let quire = start_server(&bin, &quire_dir, &env);
    let key = quire.key.clone();
    let files = json!([{"path": "index.html", "content": html}]);
    publish(
        &quire.api,
        &key,
        json!({"title": "Public", "slug": "public", "access": "public", "files": files}),
    )
    .await;
    publish(
        &quire.api,
        &key,
        json!({"title": "Budget", "slug": "budget", "access": "public",
               "maxViews": 1_000_000_000_u64, "files": files}),
    )
    .await;
    let api_page = publish(
        &quire.api,
        &key,
        json!({"title": "Api", "slug": "api", "access": "public", "files": files}),
    )
    .await;
    let api_url = format!(
        "{}/api/page/v1/pages/{}",
        quire.api,
        api_page["id"].as_str().unwrap()
    );
    let auth = format!("Authorization: Bearer {key}");
    let bearer = format!("Authorization: Bearer {}", bearer_token(&quire).await);

    let chosen: String = env_or("QUIRE_BENCH_TARGETS", "bcde".to_owned());
    let quire_pid = vec![quire.child.id()];
    let mut targets: Vec<(&str, String, Option<&str>, Vec<u32>)> = vec![
        (
            nginx[0].label.as_str(),
            format!("http://127.0.0.1:{}/index.html", nginx[0].port),
            None,
            nginx[0].worker_pids(),
        ),
        (
            nginx[1].label.as_str(),
            format!("http://127.0.0.1:{}/index.html", nginx[1].port),
            None,
            nginx[1].worker_pids(),
        ),
        // The owner's own origin, `bench.localhost`, named in `Host` (the load generators
        // resolve names with the system resolver, which may not know `*.localhost`).
        (
            "quire public page",
            format!("{}/public/", quire.pages),
            Some(OWNER_HOST),
            quire_pid.clone(),
        ),
        (
            "quire maxViews page",
            format!("{}/budget/", quire.pages),
            Some(OWNER_HOST),
            quire_pid.clone(),
        ),
        (
            "quire GET page API",
            api_url.clone(),
            Some(auth.as_str()),
            quire_pid.clone(),
        ),
        (
            "quire same, OAuth token",
            api_url,
            Some(bearer.as_str()),
            quire_pid,
        ),
    ];
    let mut ratio_names = vec![
        "b/a (public page)",
        "c/a (maxViews page)",
        "d/a (page API, key)",
        "e/a (page API, OAuth)",
    ];
    // The two nginx runs always; of Quire's, those `QUIRE_BENCH_TARGETS` names.
    for (i, letter) in ['e', 'd', 'c', 'b'].into_iter().enumerate() {
        if !chosen.contains(letter) {
            targets.remove(5 - i);
            ratio_names.remove(3 - i);
        }
    }
    println!(
        "serving benchmark: {} bytes of HTML, {}, {workers} worker(s) for nginx and Quire{}, {rounds} round(s), on {} core(s)",
        html.len(),
        load.describe(connections, seconds),
        if pin { ", each bound to a CPU" } else { "" },
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get)
    );
    println!("server: {} ({storage})", bin.display());
    let targets: Vec<Target<'_>> = targets
        .into_iter()
        .map(|(label, url, header, server)| Target {
            label,
            url,
            header,
            server,
        })
        .collect();
    compare(
        &load,
        &targets,
        2,
        &ratio_names,
        Plan {
            rounds,
            seconds,
            connections,
        },
    );
    drop(quire);
    tokio::time::sleep(Duration::from_millis(100)).await;
}
