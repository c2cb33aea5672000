//! `quire-bench`: benchmark programs (not tests). Each starts the real `quire-server`
//! release binary, measures it and a reference in the same run, and prints both with their
//! ratio. It depends on no Quire crate: it speaks HTTP only.

#![allow(clippy::unwrap_used)] // benchmark programs: a panic is the report

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// The release server binary (`QUIRE_SERVER_BIN` overrides it).
#[must_use]
pub fn server_binary() -> PathBuf {
    if let Ok(p) = std::env::var("QUIRE_SERVER_BIN") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/quire-server")
}

/// A running `quire-server` on SQLite and local disk under one folder; killed when dropped.
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
    assert!(
        bin.exists(),
        "build the server first: cargo build --release -p quire-server ({})",
        bin.display()
    );
    let command = || {
        let mut cmd = Command::new(bin);
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
            .env("RUST_LOG", "warn");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    };
    let out = command()
        .args([
            "admin",
            "create-account",
            "--email",
            "bench@example.com",
            "--handle",
            "bench",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = serde_json::from_slice::<Value>(&out.stdout).unwrap()["masterKey"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut child = command()
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
