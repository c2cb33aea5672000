//! What every benchmark program reads the same way: its settings from the environment and
//! the server's resident memory.

pub const MIB: f64 = 1024.0 * 1024.0;

/// The environment variable `name` parsed, else `default` (unset or not parsable).
#[must_use]
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The process's resident memory (`VmRSS`), in bytes.
///
/// # Panics
/// If the process is gone or `/proc` does not say.
#[must_use]
pub fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// `bytes` in MiB, one decimal.
#[must_use]
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB)
}

/// The median of `v` (the upper one of an even count).
///
/// # Panics
/// When `v` is empty.
#[must_use]
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The least and the most of `v`.
#[must_use]
pub fn spread(v: &[f64]) -> (f64, f64) {
    (
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// The numeric fields of `/proc/{pid}/stat` after the name (`state`, which is not a
/// number, reads as 0): `utime` is at 11, `stime` 12, `cutime` 13, `cstime` 14.
fn stat_fields(pid: &str) -> Vec<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect()
}

fn sum_of(fields: &[u64], at: &[usize]) -> u64 {
    at.iter().filter_map(|&i| fields.get(i)).sum()
}

/// Microseconds in one of `/proc`'s ticks (100 a second).
const TICK_MICROS: f64 = 10_000.0;

/// `ticks` of CPU time spread over `requests`, in microseconds each.
#[must_use]
pub fn micros_per_request(ticks: u64, requests: f64) -> f64 {
    ticks as f64 * TICK_MICROS / requests
}

/// CPU ticks (user and system, 100 a second) of `pid` so far; 0 when it is gone.
#[must_use]
pub fn cpu_ticks(pid: u32) -> u64 {
    sum_of(&stat_fields(&pid.to_string()), &[11, 12])
}

/// The machine's (busy, all) ticks so far, from `/proc/stat`.
#[must_use]
pub fn machine_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let cpu: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let all: u64 = cpu.iter().take(8).sum();
    let idle = cpu.get(3).copied().unwrap_or(0) + cpu.get(4).copied().unwrap_or(0);
    (all - idle, all)
}

/// CPU ticks of this process's children that have ended and been waited for (a load
/// generator after its run).
#[must_use]
pub fn children_ticks() -> u64 {
    sum_of(&stat_fields("self"), &[13, 14])
}
