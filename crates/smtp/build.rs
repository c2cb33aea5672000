//! Tells the relay tests whether Debian's aiosmtpd is here (`/usr/bin/python3` imports
//! `aiosmtpd`: `python3-aiosmtpd`), so a test that needs it is reported by cargo as ignored,
//! with the reason, instead of passing without having run (docs/decisions/test-skips.md).
//! Under `CI=true` nothing is ever skipped: the test runs and fails on what is missing.

use std::path::Path;
use std::process::{Command, Stdio};

/// Where Debian installs the package; watched (or its nearest existing folder below
/// `/usr/lib`) so that installing or removing it probes again.
const PACKAGE: &str = "/usr/lib/python3/dist-packages/aiosmtpd";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_aiosmtpd)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CI");
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        return;
    }
    let stop = Path::new("/usr/lib");
    if let Some(watched) = Path::new(PACKAGE)
        .ancestors()
        .take_while(|p| *p != stop)
        .find(|p| p.exists())
    {
        println!("cargo::rerun-if-changed={}", watched.display());
    }
    let importable = Command::new("/usr/bin/python3")
        .args(["-c", "import aiosmtpd"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !importable {
        println!("cargo::rustc-cfg=no_aiosmtpd");
    }
}
