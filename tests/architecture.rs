//! The hexagon's rules, checked on the real dependency graph: no domain or application crate
//! depends, even transitively, on a web framework, a database driver, an object store, an
//! HTTP client or an SMTP library (adapters and edges may); no domain crate holds a cache
//! or reaches up to the application layer (`quire-serving`, `quire-app`); each HTTP surface
//! is a room of its own (no surface depends on another, only the compositions mount several);
//! and the pages origin's path (`quire-wire`, `quire-pages-origin`) never reaches actix-web.
//! And the crate table of docs/architecture.md, checked against the manifests: every crate
//! has a row, and its "may depend on" column names exactly its Quire dependencies, every
//! piece of the technology these rules watch that it uses, and no crate it does not use.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
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
    cargo_metadata(&[])
}

/// `cargo metadata` of the workspace, with `extra` arguments.
fn cargo_metadata(extra: &[&str]) -> Value {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml"))
        .args(extra)
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

/// The workspace's own manifests, without the dependency graph: enough for what each crate
/// declares, and no resolution to wait for.
fn manifests() -> Value {
    cargo_metadata(&["--no-deps"])
}

/// Each workspace crate with its normal (non-dev, non-build) dependencies, optional ones
/// included: a feature's dependency is still one the crate may have.
fn declared_dependencies(manifests: &Value) -> HashMap<String, BTreeSet<String>> {
    manifests["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let normal = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_owned())
                .collect();
            (p["name"].as_str().unwrap().to_owned(), normal)
        })
        .collect()
}

const CRATE_TABLE_HEADER: &str = "| crate | what it is | may depend on |";

/// The rows of the crate table in docs/architecture.md: the crate, and the names in its last
/// column. That column is a comma-separated list of names, each perhaps followed by a note in
/// parentheses; Quire crates are written short (`kernel` for `quire-kernel`).
fn documented_rows(doc: &str) -> Vec<(String, Result<Vec<String>, String>)> {
    let mut lines = doc.lines().skip_while(|l| l.trim() != CRATE_TABLE_HEADER);
    assert!(
        lines.next().is_some(),
        "docs/architecture.md has no line `{CRATE_TABLE_HEADER}`"
    );
    lines
        .skip(1) // the `| --- |` line
        .take_while(|l| l.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let krate = cells[0].trim_matches('`').to_owned();
            (krate, column_names(cells[cells.len() - 1]))
        })
        .collect()
}

/// The names of a "may depend on" cell, or what in it is not a name.
fn column_names(cell: &str) -> Result<Vec<String>, String> {
    let mut outside_notes = String::new();
    let mut depth = 0_u32;
    for c in cell.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => outside_notes.push(c),
            _ => {}
        }
    }
    outside_notes
        .split(',')
        .map(|item| {
            let name = item.trim().trim_matches('`');
            let is_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
            if is_name {
                Ok(name.to_owned())
            } else {
                Err(format!(
                    "`{}` is not a crate name (notes go in parentheses after a name)",
                    item.trim()
                ))
            }
        })
        .collect()
}

/// What a row's names leave out or name wrongly. A name is the Quire crate when the crate
/// depends on `quire-<name>`, else the external crate of that name (the MCP endpoint's
/// `http` is the `http` crate, not `quire-http`); a name that is neither is stale.
fn row_problems(names: &[String], depends_on: &BTreeSet<String>) -> Vec<String> {
    let mut named = BTreeSet::new();
    let mut problems = Vec::new();
    for name in names {
        let quire = if name.starts_with("quire-") {
            name.clone()
        } else {
            format!("quire-{name}")
        };
        if depends_on.contains(&quire) {
            named.insert(quire);
        } else if depends_on.contains(name) {
            named.insert(name.clone());
        } else {
            problems.push(format!("names `{name}`, which it does not depend on"));
        }
    }
    let watched = FORBIDDEN.iter().chain(APPLICATION_ONLY).copied();
    let mut unnamed: Vec<&str> = depends_on
        .iter()
        .map(String::as_str)
        .filter(|d| d.starts_with("quire-") || watched.clone().any(|w| w == *d))
        .filter(|d| !named.contains(*d))
        .map(|d| d.strip_prefix("quire-").unwrap_or(d))
        .collect();
    unnamed.sort_unstable();
    if !unnamed.is_empty() {
        problems.push(format!(
            "does not name {}, which it depends on",
            unnamed.join(", ")
        ));
    }
    problems
}

/// The table says what each crate may depend on; the manifests say what it does. The column
/// names every Quire dependency and every watched technology (the adapters' and the
/// application layer's, above), so a new edge shows up in review; other external crates
/// are named where they say what the crate is built on, and must then be real.
#[test]
fn the_crate_table_names_what_each_crate_depends_on() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/architecture.md"
    ))
    .unwrap();
    let declared = declared_dependencies(&manifests());
    let mut problems = Vec::new();
    let mut rows = HashSet::new();
    for (krate, names) in documented_rows(&doc) {
        if !rows.insert(krate.clone()) {
            problems.push(format!("{krate}: a second row"));
        }
        let Some(depends_on) = declared.get(&krate) else {
            problems.push(format!("{krate}: a row, but no such workspace crate"));
            continue;
        };
        match names {
            Ok(names) => problems.extend(
                row_problems(&names, depends_on)
                    .into_iter()
                    .map(|p| format!("{krate}: {p}")),
            ),
            Err(bad) => problems.push(format!("{krate}: {bad}")),
        }
    }
    let mut missing: Vec<&String> = declared.keys().filter(|k| !rows.contains(*k)).collect();
    missing.sort();
    problems.extend(missing.into_iter().map(|k| format!("{k}: no row")));
    assert!(
        problems.is_empty(),
        "docs/architecture.md's crate table is out of step with the manifests:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn a_row_is_held_to_the_manifest_both_ways() {
    let depends_on: BTreeSet<String> = ["quire-kernel", "quire-http", "http", "tokio", "url"]
        .map(str::to_owned)
        .into();
    let names = column_names("kernel (ids), http, url, tokio (timers)").unwrap();
    assert_eq!(row_problems(&names, &depends_on), Vec::<String>::new());
    // A Quire crate or a watched technology left out, and a stale name, are each named.
    let names = column_names("kernel, url, reqwest").unwrap();
    assert_eq!(
        row_problems(&names, &depends_on),
        [
            "names `reqwest`, which it does not depend on",
            "does not name http, tokio, which it depends on",
        ]
    );
    // Only names: a phrase is refused rather than read as one.
    assert!(column_names("kernel, the domain crates").is_err());
}
