//! Tells the tests whether PostgreSQL is configured (`QUIRE_TEST_POSTGRES_URL`) and whether
//! its `initdb` and `postgres` programs are here (on `PATH` or in Debian's
//! `/usr/lib/postgresql/*/bin`, where `find_binaries` looks), so a test that needs one is
//! reported by cargo as ignored, with the reason, instead of passing without having run
//! (docs/decisions/test-skips.md). Under `CI=true` nothing is ever skipped: the test runs and
//! fails on what is missing.

use std::path::Path;

const DEBIAN: &str = "/usr/lib/postgresql";

fn has_both(dir: &Path) -> bool {
    dir.join("initdb").is_file() && dir.join("postgres").is_file()
}

/// Whether the private cluster's programs are here. Debian's folder is watched when it
/// exists (a version installed next to another); one installed where there was none is
/// noticed at the next change of `PATH` or of this script.
fn binaries() -> bool {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| has_both(&dir)));
    let debian = Path::new(DEBIAN);
    if debian.is_dir() {
        println!("cargo::rerun-if-changed={DEBIAN}");
    }
    on_path
        || std::fs::read_dir(debian).is_ok_and(|versions| {
            versions
                .filter_map(Result::ok)
                .any(|version| has_both(&version.path().join("bin")))
        })
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_postgres)");
    println!("cargo::rustc-check-cfg=cfg(no_pg_binaries)");
    println!("cargo::rerun-if-changed=build.rs");
    for var in ["CI", "QUIRE_TEST_POSTGRES_URL", "PATH"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        return;
    }
    if std::env::var_os("QUIRE_TEST_POSTGRES_URL").is_none() {
        println!("cargo::rustc-cfg=no_postgres");
    }
    if !binaries() {
        println!("cargo::rustc-cfg=no_pg_binaries");
    }
}
