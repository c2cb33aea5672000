//! Tells the tests whether an S3-compatible server is configured (`QUIRE_TEST_S3_ENDPOINT`),
//! so a test that needs one is reported by cargo as ignored, with the reason, instead of
//! passing without having run (docs/decisions/test-skips.md). Under `CI=true` nothing is ever
//! skipped: the test runs and fails on what is missing.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_s3)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=QUIRE_TEST_S3_ENDPOINT");
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    if !ci && std::env::var_os("QUIRE_TEST_S3_ENDPOINT").is_none() {
        println!("cargo::rustc-cfg=no_s3");
    }
}
