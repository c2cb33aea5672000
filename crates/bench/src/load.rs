//! The load generators the serving benchmark drives: `wrk` (C, one epoll loop per thread;
//! the default) and `oha` (Rust, tokio and hyper). Both keep a fixed number of connections
//! busy for a fixed time, a new request as soon as the last answer is in (`wrk` on two
//! threads, `oha` on one per core: two on the benchmark machines); they differ in what each
//! costs per request on the cores they share with the servers, which moves the tail of the
//! latencies they measure.

use std::process::Command;

/// One measurement: requests per second and the 99th percentile latency.
#[derive(Debug, Clone, Copy)]
pub struct Measure {
    pub rps: f64,
    pub p99_ms: f64,
}

/// Which program makes the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generator {
    Wrk,
    Oha,
}

impl Generator {
    /// `QUIRE_BENCH_LOAD`: `wrk` (the default) or `oha`.
    ///
    /// # Panics
    /// On any other value, or when `oha` is asked for and not on the path (it is not
    /// packaged: `cargo install oha --locked`).
    #[must_use]
    pub fn from_env() -> Self {
        match std::env::var("QUIRE_BENCH_LOAD").as_deref() {
            Err(_) | Ok("wrk") => Self::Wrk,
            Ok("oha") => {
                let found = Command::new("oha").arg("--version").output();
                assert!(
                    found.is_ok_and(|o| o.status.success()),
                    "QUIRE_BENCH_LOAD=oha needs oha on the path: cargo install oha --locked"
                );
                Self::Oha
            }
            Ok(other) => panic!("QUIRE_BENCH_LOAD must be wrk or oha, not {other:?}"),
        }
    }

    /// The program's name, for the report.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Wrk => "wrk",
            Self::Oha => "oha",
        }
    }

    /// The command line, for the report.
    #[must_use]
    pub fn describe(self, connections: usize, seconds: u64) -> String {
        match self {
            Self::Wrk => format!("wrk -t2 -c{connections} -d{seconds}s"),
            Self::Oha => format!("oha -c {connections} -z {seconds}s"),
        }
    }

    /// One run against `url` with the extra request header `header`.
    ///
    /// # Panics
    /// Unless every answer was a 2xx: a benchmark of errors measures nothing.
    #[must_use]
    pub fn run(self, url: &str, seconds: u64, connections: usize, header: Option<&str>) -> Measure {
        match self {
            Self::Wrk => wrk(url, seconds, connections, header),
            Self::Oha => oha(url, seconds, connections, header),
        }
    }
}

fn wrk(url: &str, seconds: u64, connections: usize, header: Option<&str>) -> Measure {
    let mut cmd = Command::new("wrk");
    cmd.args([
        "-t2",
        &format!("-c{connections}"),
        &format!("-d{seconds}s"),
        "--latency",
    ]);
    if let Some(h) = header {
        cmd.args(["-H", h]);
    }
    let out = cmd.arg(url).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("Non-2xx"),
        "{url} answered errors under load:\n{text}"
    );
    let rps = text
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no Requests/sec from wrk:\n{text}"));
    let p99_ms = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("99%"))
        .and_then(|v| millis(v.trim()))
        .unwrap_or(f64::NAN);
    Measure { rps, p99_ms }
}

fn millis(field: &str) -> Option<f64> {
    let (number, unit) = field.split_at(field.find(|c: char| c.is_ascii_alphabetic())?);
    let n: f64 = number.parse().ok()?;
    Some(match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        _ => return None,
    })
}

fn oha(url: &str, seconds: u64, connections: usize, header: Option<&str>) -> Measure {
    let mut cmd = Command::new("oha");
    cmd.args([
        "--no-tui",
        "--output-format",
        "json",
        "-c",
        &connections.to_string(),
        "-z",
        &format!("{seconds}s"),
    ]);
    if let Some(h) = header {
        cmd.args(["-H", h]);
    }
    let out = cmd.arg(url).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "no JSON report from oha:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let statuses = report["statusCodeDistribution"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert!(
        !statuses.is_empty() && statuses.keys().all(|code| code.starts_with('2')),
        "{url} answered errors under load: {statuses:?}"
    );
    // Requests still in flight when the time is up are cut off; nothing else may fail.
    let errors = report["errorDistribution"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert!(
        errors.keys().all(|e| e.contains("deadline")),
        "{url} failed under load: {errors:?}"
    );
    let number = |value: &serde_json::Value| {
        value
            .as_f64()
            .unwrap_or_else(|| panic!("oha's report lacks a figure:\n{report}"))
    };
    Measure {
        rps: number(&report["summary"]["requestsPerSec"]),
        p99_ms: number(&report["latencyPercentiles"]["p99"]) * 1000.0,
    }
}

#[cfg(test)]
mod tests {
    use super::millis;

    /// wrk prints each percentile with its own unit; a misread unit would scale a p99 by 1,000.
    #[test]
    fn wrk_latencies_are_read_in_milliseconds_whatever_their_unit() {
        assert_eq!(millis("850.00us"), Some(0.85));
        assert_eq!(millis("7.62ms"), Some(7.62));
        assert_eq!(millis("1.50s"), Some(1500.0));
        assert_eq!(millis("3.00m"), None);
        assert_eq!(millis("fast"), None);
        assert_eq!(millis("12"), None);
    }
}
