//! Tells the tests whether PostgreSQL is configured, so a test that needs it is reported by
//! cargo as ignored, with the reason, instead of passing without having run
//! (docs/decisions/test-skips.md). Under `CI=true` nothing is ever skipped: the test runs and
//! fails on what is missing.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_postgres)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=QUIRE_TEST_POSTGRES_URL");
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    if !ci && std::env::var_os("QUIRE_TEST_POSTGRES_URL").is_none() {
        println!("cargo::rustc-cfg=no_postgres");
    }
}
