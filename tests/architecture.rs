//! The hexagon's rules, checked on the real dependency graph: no domain or application crate
//! depends, even transitively, on a web framework, a database driver, an object store, an
//! HTTP client or an SMTP library (adapters and edges may); and no domain crate holds a cache
//! or reaches up to the application layer (`quire-serving`, `quire-app`).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{HashMap, HashSet, VecDeque};
use std::process::Command;

use serde_json::Value;

const DOMAIN_CRATES: &[&str] = &[
    "quire-kernel",
    "quire-projects",
    "quire-keys",
    "quire-accounts",
    "quire-pages",
    "quire-links",
    "quire-device-auth",
    "quire-oauth",
    "quire-mail",
    "quire-signup",
];
/// Above the domain, below the edge: the pages origin's application layer and the access
/// token verifier (caches of their own), and the composition root. They too stay free of
/// adapter technology.
const APPLICATION_CRATES: &[&str] = &[
    "quire-serving",
    "quire-bearer",
    "quire-read-cache",
    "quire-app",
];
/// What only the application layer may hold: caches and compression are about speed, not
/// about what the domain decides.
const APPLICATION_ONLY: &[&str] = &["moka", "flate2"];
const FORBIDDEN: &[&str] = &[
    "actix-web",
    "diesel",
    "diesel-async",
    "object_store",
    "reqwest",
    "mail-send",
    "tokio-postgres",
    "libsqlite3-sys",
    "tokio",
    "actix-rt",
];

fn metadata() -> Value {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml"))
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("metadata JSON")
}

/// Names of every package reachable from `root` through normal (non-dev, non-build) edges.
fn normal_closure(meta: &Value, root: &str) -> HashSet<String> {
    let names: HashMap<&str, &str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let nodes: HashMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let start = names
        .iter()
        .find(|(_, n)| **n == root)
        .map(|(id, _)| *id)
        .unwrap_or_else(|| panic!("{root} not in the workspace"));
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([start]);
    while let Some(id) = queue.pop_front() {
        if !seen.insert(id) {
            continue;
        }
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let normal = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].is_null());
            if normal {
                queue.push_back(dep["pkg"].as_str().unwrap());
            }
        }
    }
    seen.into_iter().map(|id| names[id].to_owned()).collect()
}

#[test]
fn domain_and_application_crates_depend_on_no_adapter_technology() {
    let meta = metadata();
    for krate in DOMAIN_CRATES.iter().chain(APPLICATION_CRATES) {
        let closure = normal_closure(&meta, krate);
        let bad: Vec<&&str> = FORBIDDEN.iter().filter(|f| closure.contains(**f)).collect();
        assert!(bad.is_empty(), "{krate} depends on {bad:?}");
    }
    // The check can fail: the store adapter does reach diesel, the mail adapter mail-send.
    assert!(normal_closure(&meta, "quire-store").contains("diesel"));
    assert!(normal_closure(&meta, "quire-smtp").contains("mail-send"));
}

#[test]
fn the_domain_holds_no_caches_and_never_reaches_up_to_the_application_layer() {
    let meta = metadata();
    for krate in DOMAIN_CRATES {
        let closure = normal_closure(&meta, krate);
        let bad: Vec<&&str> = APPLICATION_CRATES
            .iter()
            .chain(APPLICATION_ONLY)
            .filter(|f| closure.contains(**f))
            .collect();
        assert!(bad.is_empty(), "{krate} depends on {bad:?}");
    }
    // The check can fail: the pages origin's layer does cache.
    assert!(normal_closure(&meta, "quire-serving").contains("moka"));
}
