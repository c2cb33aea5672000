//! A mixed load with `wrk`: each connection cycles through a list of requests (their paths
//! and headers, `Host` among them) in order, from a Lua script written for the run, and the
//! script's `done` prints what the benchmarks read: the rate, p50, p99, p99.9 and the slowest
//! latency, the socket errors, and (when asked, at some cost to the client) every status
//! answered. wrk counts a request that is not answered within `--timeout` as a timeout and
//! leaves it out of the latencies, so the timeout is set long (30 s) for the slow ones to
//! count.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// One request of the cycle: a path and its headers.
#[derive(Debug, Clone)]
pub struct Request {
    pub label: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub requests: u64,
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// Socket errors: connect, read, write, timeout.
    pub socket_errors: [u64; 4],
    /// Answers with a status of 400 or more (wrk's count).
    pub error_statuses: u64,
    /// Every status and how many, when counted (`"200=1234,502=3"`), else empty.
    pub statuses: String,
}

impl Report {
    /// Socket errors and error statuses together.
    #[must_use]
    pub fn errors(&self) -> u64 {
        self.socket_errors.iter().sum::<u64>() + self.error_statuses
    }

    /// The errors spelled out: `none`, or each kind with its count.
    #[must_use]
    pub fn describe_errors(&self) -> String {
        let names = ["connect", "read", "write", "timeout"];
        let mut out = String::new();
        for (name, n) in names.iter().zip(self.socket_errors) {
            if n > 0 {
                let _ = write!(out, "{name} {n}, ");
            }
        }
        if self.error_statuses > 0 {
            let _ = write!(out, "status >= 400: {}, ", self.error_statuses);
        }
        if out.is_empty() {
            "none".to_owned()
        } else {
            out.truncate(out.len() - 2);
            out
        }
    }
}

/// Lua's long string, which needs no escapes.
fn lua_string(s: &str) -> String {
    format!("[==[{s}]==]")
}

/// Writes the script cycling through `requests` to `path`; with `count_statuses`, each
/// answer's status is counted in a table of each thread's, added up in `done`.
///
/// # Panics
/// When the file cannot be written.
pub fn write_script(path: &Path, requests: &[Request], count_statuses: bool) {
    let mut list = String::new();
    for r in requests {
        let headers: Vec<String> = r
            .headers
            .iter()
            .map(|(k, v)| format!("[ {} ] = {}", lua_string(k), lua_string(v)))
            .collect();
        let _ = writeln!(
            list,
            "    wrk.format(\"GET\", {}, {{{}}}),",
            lua_string(&r.path),
            headers.join(", ")
        );
    }
    let response = if count_statuses {
        "function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end"
    } else {
        ""
    };
    let script = format!(
        "-- written by quire-bench: one cycle of requests per connection
local threads = {{}}
function setup(thread)
  table.insert(threads, thread)
end
local cycle, at
statuses = {{}}
function init(args)
  cycle = {{
{list}  }}
  at = 0
end
function request()
  at = at % #cycle + 1
  return cycle[at]
end
{response}
function done(summary, latency, requests)
  local total = {{}}
  for _, thread in ipairs(threads) do
    local counted = thread:get(\"statuses\")
    if counted then
      for status, n in pairs(counted) do
        total[status] = (total[status] or 0) + n
      end
    end
  end
  local parts = {{}}
  for status, n in pairs(total) do
    table.insert(parts, status .. \"=\" .. n)
  end
  table.sort(parts)
  io.write(string.format(
    \"quire-bench requests=%d duration_us=%d p50_us=%d p99_us=%d p999_us=%d max_us=%d connect=%d read=%d write=%d timeout=%d status=%d statuses=%s\\n\",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency:percentile(99.9), latency.max, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.timeout, summary.errors.status,
    table.concat(parts, \",\")))
end
"
    );
    std::fs::write(path, script).unwrap();
}

/// Starts `wrk -t2` with `connections` for `seconds` against `base` (`http://host:port`)
/// with the script at `script`; [`finish`] reads its report.
///
/// # Panics
/// When wrk does not start.
#[must_use]
pub fn spawn(base: &str, script: &Path, seconds: u64, connections: usize) -> Child {
    Command::new("wrk")
        .args([
            "-t2",
            &format!("-c{connections}"),
            &format!("-d{seconds}s"),
            "--timeout",
            "30s",
            "-s",
        ])
        .arg(script)
        .arg(base)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for the run of [`spawn`] and reads its report.
///
/// # Panics
/// When wrk printed no report.
#[must_use]
pub fn finish(wrk: Child) -> Report {
    let out = wrk.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("quire-bench "))
        .unwrap_or_else(|| {
            panic!(
                "no report from wrk:\n{text}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    parse(line)
}

/// Runs [`spawn`] to its end.
#[must_use]
pub fn run(base: &str, script: &Path, seconds: u64, connections: usize) -> Report {
    finish(spawn(base, script, seconds, connections))
}

fn parse(line: &str) -> Report {
    let field = |name: &str| -> &str {
        line.split(' ')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .unwrap_or_default()
    };
    let number = |name: &str| field(name).parse::<u64>().unwrap_or_default();
    let ms = |name: &str| number(name) as f64 / 1000.0;
    let requests = number("requests");
    let seconds = number("duration_us") as f64 / 1e6;
    Report {
        requests,
        rps: if seconds > 0.0 {
            requests as f64 / seconds
        } else {
            0.0
        },
        p50_ms: ms("p50_us"),
        p99_ms: ms("p99_us"),
        p999_ms: ms("p999_us"),
        max_ms: ms("max_us"),
        socket_errors: [
            number("connect"),
            number("read"),
            number("write"),
            number("timeout"),
        ],
        error_statuses: number("status"),
        statuses: field("statuses").to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{Request, parse, write_script};

    /// A key in brackets must not open a long string (`[[`).
    #[test]
    fn the_script_names_each_header_as_a_table_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mix.lua");
        let request = Request {
            label: "page".into(),
            path: "/public/".into(),
            headers: vec![("Host".into(), "bench.pages.example.com".into())],
        };
        write_script(&path, &[request], true);
        let script = std::fs::read_to_string(&path).unwrap();
        assert!(script.contains(
            "wrk.format(\"GET\", [==[/public/]==], {[ [==[Host]==] ] = [==[bench.pages.example.com]==]}),"
        ));
        assert!(script.contains("function response("));
    }

    #[test]
    fn the_scripts_report_is_read_in_milliseconds_per_second() {
        let r = parse(
            "requests=2000 duration_us=2000000 p50_us=1500 p99_us=12000 p999_us=30000 max_us=2500000 connect=1 read=2 write=0 timeout=0 status=3 statuses=200=1997,502=3",
        );
        assert_eq!(r.requests, 2000);
        assert!((r.rps - 1000.0).abs() < 1e-9);
        assert!((r.p50_ms - 1.5).abs() < 1e-9);
        assert!((r.p99_ms - 12.0).abs() < 1e-9);
        assert!((r.max_ms - 2500.0).abs() < 1e-9);
        assert_eq!(r.socket_errors, [1, 2, 0, 0]);
        assert_eq!(r.errors(), 6);
        assert_eq!(r.statuses, "200=1997,502=3");
        assert_eq!(r.describe_errors(), "connect 1, read 2, status >= 400: 3");
    }
}
