//! Schemathesis (from PyPI; CI installs it) against the real server on each database: every
//! phase (coverage, fuzzing, stateful) and every check, for a bounded time, from a fixed
//! seed so that a run can be repeated. Any failure of any kind fails the test, with
//! Schemathesis's report. The few operations whose contract refuses well-formed requests
//! for reasons a schema cannot state are listed, with the reasons, in `schemathesis.toml`
//! beside this file.
//!
//! A test binary of its own, so that cargo runs it after the black-box suite rather than
//! beside it: its load would skew that suite's timing-sensitive tests (slow bodies).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

#[path = "../blackbox/harness.rs"]
#[allow(dead_code)] // the suite's harness; this binary uses a part of it
mod harness;

use std::process::Command;

use crate::harness::{Backend, TestDb, on_both_backends};

const CONFIG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/schemathesis/schemathesis.toml"
);

/// Seconds of generated requests per database (`QUIRE_SCHEMATHESIS_SECS` overrides).
const DEFAULT_SECS: &str = "60";
/// `QUIRE_SCHEMATHESIS_SEED` overrides, to explore further.
const DEFAULT_SEED: &str = "20261122";

fn installed() -> bool {
    Command::new("schemathesis")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

async fn schemathesis_finds_no_failure(b: Backend) {
    assert!(
        installed(),
        "schemathesis is not installed (pip install schemathesis)"
    );
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    // With the database service on (its cluster is the test PostgreSQL, when there is
    // one), so that its routes answer as they do in use rather than 503 throughout.
    let cluster = std::env::var("QUIRE_TEST_POSTGRES_URL").unwrap_or_default();
    let srv = if cluster.is_empty() {
        db.start()
    } else {
        db.start_with(&[("QUIRE_DATABASES_URL", &cluster)])
    };
    let secs = std::env::var("QUIRE_SCHEMATHESIS_SECS").unwrap_or_else(|_| DEFAULT_SECS.into());
    let seed = std::env::var("QUIRE_SCHEMATHESIS_SEED").unwrap_or_else(|_| DEFAULT_SEED.into());
    let schema = format!("{}/api/openapi.json", srv.base);
    let auth = format!("Authorization: Bearer {}", ann.key);
    let workdir = db.dir.path().to_owned();
    let out = tokio::task::spawn_blocking(move || {
        // `timeout` bounds a run whose own budget fails to stop it.
        let hard_limit = secs.parse::<u64>().unwrap_or(60) * 3 + 60;
        Command::new("timeout")
            .arg(hard_limit.to_string())
            .args(["schemathesis", "--no-color", "--config-file", CONFIG, "run"])
            .arg(&schema)
            .args(["-H", &auth, "--workers", "1"])
            .args(["--max-time", &secs, "--seed", &seed])
            .args(["--suppress-health-check", "all"])
            .current_dir(workdir)
            .output()
            .expect("run schemathesis")
    })
    .await
    .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let summary: String = report
        .lines()
        .rev()
        .take(20)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    eprintln!("{summary}");
    assert!(
        out.status.success(),
        "schemathesis found failures ({:?}):\n{report}\n{}\nserver log:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        srv.logs()
    );
    assert!(report.contains(" passed"), "nothing ran:\n{report}");
}

on_both_backends!(
    #[cfg_attr(
        no_schemathesis,
        ignore = "needs Schemathesis: pip install schemathesis"
    )]
    schemathesis_finds_no_failure
);
