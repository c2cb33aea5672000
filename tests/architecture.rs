//! The hexagon's rules, checked on the real dependency graph: no domain or application crate
//! depends, even transitively, on a web framework, a database driver, an object store, an
//! HTTP client or an SMTP library (adapters and edges may); no domain crate holds a cache
//! or reaches up to the application layer (`quire-serving`, `quire-app`); each HTTP surface
//! is a room of its own (no surface depends on another, only the compositions mount several);
//! and the pages origin's path (`quire-wire`, `quire-pages-origin`) never reaches actix-web.

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
    "quire-objects",
    "quire-device-auth",
    "quire-oauth",
    "quire-mail",
    "quire-signup",
    "quire-dataapi",
    "quire-databases",
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
/// What only the layers above the domain may hold: caches and compression are about speed,
/// and metrics about how the service runs, not about what the domain decides.
const APPLICATION_ONLY: &[&str] = &["moka", "flate2", "metrics"];
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

/// The HTTP surfaces: each is mounted by a composition, never by another surface.
const SURFACE_CRATES: &[&str] = &[
    "quire-api",
    "quire-pages-api",
    "quire-links-api",
    "quire-objects-api",
    "quire-databases-api",
    "quire-data-gateway",
    "quire-dashboard",
    "quire-mcp",
    "quire-pages-origin",
];
/// What mounts the surfaces: the API origin's composition, and the server that runs both
/// listeners.
const COMPOSITIONS: &[&str] = &["quire-http", "quire-server"];

#[test]
fn no_surface_reaches_another_and_the_shared_kit_reaches_none() {
    let meta = metadata();
    for krate in SURFACE_CRATES.iter().chain(&["quire-edge", "quire-wire"]) {
        let closure = normal_closure(&meta, krate);
        let bad: Vec<&&str> = SURFACE_CRATES
            .iter()
            .chain(COMPOSITIONS)
            .filter(|other| *other != krate && closure.contains(**other))
            .collect();
        assert!(bad.is_empty(), "{krate} depends on {bad:?}");
    }
    // The check can fail: the composition does mount the API and the dashboard.
    let http = normal_closure(&meta, "quire-http");
    assert!(http.contains("quire-api") && http.contains("quire-dashboard"));
}

#[test]
fn the_pages_origin_path_never_reaches_actix_and_the_wire_knows_no_quire_crate() {
    let meta = metadata();
    for krate in ["quire-wire", "quire-pages-origin"] {
        let closure = normal_closure(&meta, krate);
        let actix: Vec<&String> = closure.iter().filter(|d| d.starts_with("actix")).collect();
        assert!(actix.is_empty(), "{krate} depends on {actix:?}");
    }
    let wire = normal_closure(&meta, "quire-wire");
    let quire: Vec<&String> = wire
        .iter()
        .filter(|d| d.starts_with("quire-") && *d != "quire-wire")
        .collect();
    assert!(quire.is_empty(), "quire-wire depends on {quire:?}");
    // The check can fail: the API's kit does reach actix.
    assert!(normal_closure(&meta, "quire-edge").contains("actix-web"));
}
