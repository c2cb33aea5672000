//! `quire-bench`: benchmark programs (not tests). Each starts the real `quire-server`
//! release binary, measures it and a reference in the same run, and prints both with their
//! ratio. It speaks HTTP to the server; only `data_api` uses two Quire crates, the data
//! API's planner and wire client, to send the gateway's own transaction without HTTP.

#![allow(clippy::unwrap_used, clippy::print_stdout)] // benchmark programs: a panic is the report, stdout the result

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

pub mod bare;
pub mod load;
pub mod measure;
pub mod mixed;
pub mod nginx;
pub mod rounds;

/// The server's public origin: form posts (sign-in, consent) name it in `Origin`.
const BASE_URL: &str = "http://quire.bench";
/// The dashboard password of the account `bench`.
const PASSWORD: &str = "bench-password-1";

/// The release server binary (`QUIRE_SERVER_BIN` overrides it).
#[must_use]
pub fn server_binary() -> PathBuf {
    if let Ok(p) = std::env::var("QUIRE_SERVER_BIN") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/quire-server")
}

/// The program that starts the server in a session of its own, as a service manager does
/// and as nginx puts itself when it becomes a daemon. With the kernel's autogroup scheduling
/// on (Debian's default), each session is one scheduling group: a server left in the
/// benchmark's session shares a group with `wrk` and competes with it thread by thread, while
/// nginx, in a group of its own, gets half the machine against `wrk`'s half. `setsid` execs
/// the server in place (a spawned child leads no process group), so the child's pid is the
/// server's.
const SETSID: &str = "/usr/bin/setsid";

/// A running `quire-server` with its data under one folder (SQLite and local disk unless
/// its environment names others); killed when dropped.
#[derive(Debug)]
pub struct Server {
    pub child: Child,
    /// `http://host:port` of the API.
    pub api: String,
    /// `http://host:port` of the pages origin.
    pub pages: String,
    /// The master key of the account `bench`.
    pub key: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Creates the account `bench` in `dir`, then starts the server there on free ports with
/// the extra environment `env`.
///
/// # Panics
/// When the binary is missing or does not start: the benchmark cannot run.
#[must_use]
pub fn start_server(bin: &Path, dir: &Path, env: &[(&str, String)]) -> Server {
    let key = create_account(bin, dir, env);
    launch_server(bin, dir, env, key)
}

/// The server's command in `dir`: SQLite and local disk under `dir`, free ports, info logs,
/// then `env` over them.
fn server_command(program: &Path, dir: &Path, env: &[(&str, String)]) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir)
        .env(
            "QUIRE_DATABASE_URL",
            format!("sqlite://{}/quire.db", dir.display()),
        )
        .env(
            "QUIRE_STORAGE_URL",
            format!("file://{}/bundles", dir.display()),
        )
        .env("QUIRE_LISTEN", "127.0.0.1:0")
        .env("QUIRE_PAGES_LISTEN", "127.0.0.1:0")
        .env("QUIRE_BASE_URL", BASE_URL)
        // What a deployment logs: one line per API request (none per page view).
        .env("RUST_LOG", "info");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Creates the platform admin `bench` with `quire-server admin create-account` in `dir`
/// (with the server's environment `env`, which runs the migrations) and returns its master
/// key.
///
/// # Panics
/// When the binary is missing or the account cannot be made.
#[must_use]
pub fn create_account(bin: &Path, dir: &Path, env: &[(&str, String)]) -> String {
    assert!(
        bin.exists(),
        "build the server first: cargo build --release -p quire-server ({})",
        bin.display()
    );
    let out = server_command(bin, dir, env)
        .args([
            "admin",
            "create-account",
            "--email",
            "bench@example.com",
            "--handle",
            "bench",
            "--password",
            PASSWORD,
            "--platform-admin",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["masterKey"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Starts the server in `dir` with the extra environment `env` (through `setsid`, see
/// [`SETSID`]) and returns once it listens; `key` is the account's master key, for the
/// caller. Several may run in one `dir`: they share its key file and its data.
///
/// # Panics
/// When the server does not start.
#[must_use]
pub fn launch_server(bin: &Path, dir: &Path, env: &[(&str, String)], key: String) -> Server {
    let mut child = server_command(Path::new(SETSID), dir, env)
        .arg(bin)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let listening: Value = serde_json::from_str(&line).unwrap();
    let address = |name: &str| {
        format!(
            "http://{}",
            listening["listening"][name].as_str().unwrap_or_default()
        )
    };
    Server {
        api: address("api"),
        pages: address("pages"),
        key,
        child,
    }
}

/// Where a benchmark's server keeps its data, from the environment: SQLite and local disk
/// unless `QUIRE_BENCH_POSTGRES` names a PostgreSQL server (an admin URL such as
/// `postgres://postgres@127.0.0.1:5432/postgres`; a fresh database is made on it) or
/// `QUIRE_BENCH_S3_ENDPOINT` an S3-compatible server (a fresh bucket is made on it).
/// Returns the storage (its label for the report; dropping it drops the database) and the
/// server's extra environment.
///
/// # Panics
/// When the database or the bucket cannot be made.
pub async fn storage_from_env() -> (Storage, Vec<(&'static str, String)>) {
    storage(
        std::env::var("QUIRE_BENCH_POSTGRES").ok(),
        std::env::var("QUIRE_BENCH_S3_ENDPOINT").ok(),
    )
    .await
}

/// A fresh database on the PostgreSQL server of the admin URL `postgres` (else SQLite) and a
/// fresh bucket on the S3-compatible server `s3` (else local disk), as [`storage_from_env`].
///
/// # Panics
/// When the database or the bucket cannot be made.
pub async fn storage(
    postgres: Option<String>,
    s3: Option<String>,
) -> (Storage, Vec<(&'static str, String)>) {
    let mut env = Vec::new();
    let suffix = format!("{}_{}", std::process::id(), rand::random::<u32>());
    let mut made_database = None;
    let database = match postgres {
        Some(admin) => {
            let name = format!("quire_bench_{suffix}");
            let made = Command::new("psql")
                .args([admin.as_str(), "-qc", &format!("CREATE DATABASE {name}")])
                .status()
                .unwrap();
            assert!(made.success(), "psql could not create {name}");
            let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
            env.push(("QUIRE_DATABASE_URL", format!("{base}/{name}")));
            made_database = Some((admin, name));
            "PostgreSQL"
        }
        None => "SQLite",
    };
    let bundles = match s3 {
        Some(endpoint) => {
            let bucket = format!("quire-bench-{}", suffix.replace('_', "-"));
            let made = reqwest::Client::new()
                .put(format!("{endpoint}/{bucket}"))
                .send()
                .await
                .unwrap();
            assert!(
                made.status().is_success(),
                "bucket {bucket}: {}",
                made.status()
            );
            env.extend([
                ("QUIRE_STORAGE_URL", format!("s3://{bucket}/quire")),
                ("AWS_ENDPOINT_URL", endpoint),
                ("AWS_ACCESS_KEY_ID", "bench".into()),
                ("AWS_SECRET_ACCESS_KEY", "bench".into()),
                ("AWS_REGION", "us-east-1".into()),
            ]);
            "S3-compatible server"
        }
        None => "local disk",
    };
    let storage = Storage {
        label: format!("{database} + {bundles}"),
        database: made_database,
    };
    (storage, env)
}

/// Where a benchmark's server keeps its data; a PostgreSQL database made for the run is
/// dropped with it (drop the server first).
#[derive(Debug)]
pub struct Storage {
    label: String,
    /// (admin URL, database name)
    database: Option<(String, String)>,
}

impl std::fmt::Display for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label)
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Some((admin, name)) = &self.database {
            let _ = Command::new("psql")
                .args([
                    admin.as_str(),
                    "-qc",
                    &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                ])
                .status();
        }
    }
}

/// An OAuth access token of `bench` (scope `page`) for a client registered on the spot:
/// the authorization code flow with PKCE, consent given in the dashboard as a browser would.
///
/// # Panics
/// When a step of the flow does not answer as the spec says.
pub async fn bearer_token(server: &Server) -> String {
    use base64::Engine;
    use sha2::{Digest, Sha256};
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let redirect = "http://127.0.0.1/callback";
    let registered: Value = http
        .post(format!("{}/api/platform/v1/oauth-clients", server.api))
        .bearer_auth(&server.key)
        .json(
            &serde_json::json!({"name": "Bench", "client_type": "confidential",
                                  "redirect_uris": [redirect]}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = registered["client"]["client_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let secret = registered["client"]["client_secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let verifier = b64(&rand::random::<[u8; 32]>());
    let challenge = b64(&Sha256::digest(verifier.as_bytes()));

    let signed_in = http
        .post(format!("{}/login", server.api))
        .header("origin", BASE_URL)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            serde_urlencoded::to_string([
                ("login", "bench"),
                ("password", PASSWORD),
                ("next", "/"),
            ])
            .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let cookie = signed_in
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|c| c.to_str().ok()?.split(';').next().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("; ");
    let consent = http
        .get(format!("{}/oauth/authorize", server.api))
        .query(&[
            ("response_type", "code"),
            ("client_id", &id),
            ("redirect_uri", redirect),
            ("scope", "page"),
            ("state", "bench"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ])
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let marker = "name=\"request\" value=\"";
    let at = consent.find(marker).unwrap() + marker.len();
    let request = &consent[at..at + consent[at..].find('"').unwrap()];
    let approved = http
        .post(format!("{}/api/oauth/decision", server.api))
        .header("origin", BASE_URL)
        .header("cookie", &cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string([("request", request), ("decision", "approve")]).unwrap())
        .send()
        .await
        .unwrap();
    let back = approved.headers()["location"].to_str().unwrap();
    let code = back
        .split(['?', '&'])
        .find_map(|pair| pair.strip_prefix("code="))
        .unwrap()
        .to_owned();
    let token: Value = http
        .post(format!("{}/api/oauth/token", server.api))
        .basic_auth(&id, Some(&secret))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            serde_urlencoded::to_string([
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", redirect),
                ("code_verifier", &verifier),
            ])
            .unwrap(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    token["access_token"].as_str().unwrap().to_owned()
}
