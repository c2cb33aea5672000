//! nginx as the reference of the serving benchmarks: installed with `wrk` when missing,
//! started on a configuration of its own (a free port, its own pid and log files, `access_log
//! off`, the workers and CPU binding given), stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const NGINX: &str = "/usr/sbin/nginx";

fn on_path(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Installs the load generator and nginx when missing.
///
/// # Panics
/// When `apt-get` fails.
pub fn install_tools() {
    if on_path("wrk") && Path::new(NGINX).exists() {
        return;
    }
    eprintln!("installing wrk and nginx-light with apt...");
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let run = |args: &[&str]| {
        let mut cmd = if root {
            Command::new(args[0])
        } else {
            let mut c = Command::new("sudo");
            c.arg("-n").arg(args[0]);
            c
        };
        let status = cmd
            .args(&args[1..])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{args:?} failed");
    };
    run(&["apt-get", "update", "-qq"]);
    run(&["apt-get", "install", "-y", "-qq", "wrk", "nginx-light"]);
}

/// A free port on loopback.
#[must_use]
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One nginx with its own config and pid file in `dir`; stopped when dropped.
#[derive(Debug)]
pub struct Nginx {
    conf: PathBuf,
    prefix: PathBuf,
    pub port: u16,
    pub label: String,
}

impl Nginx {
    /// nginx serving the files of `root` (with `sendfile` on or off).
    ///
    /// # Panics
    /// When nginx does not start.
    #[must_use]
    pub fn serving(dir: &Path, root: &Path, sendfile: bool, workers: usize, pin: bool) -> Self {
        let onoff = if sendfile { "on" } else { "off" };
        Self::start(
            dir,
            &format!("sendfile-{onoff}"),
            &format!("nginx sendfile {onoff}"),
            &format!("sendfile {onoff};"),
            &format!("root {}; etag on;", root.display()),
            workers,
            pin,
        )
    }

    /// nginx answering every request with `directives` in its one `server` block (after
    /// `listen`), and `http` settings `http`; `name` names its files, `label` its figures.
    ///
    /// # Panics
    /// When nginx does not start.
    #[must_use]
    pub fn start(
        dir: &Path,
        name: &str,
        label: &str,
        http: &str,
        directives: &str,
        workers: usize,
        pin: bool,
    ) -> Self {
        let port = free_port();
        let conf = dir.join(format!("nginx-{name}.conf"));
        let prefix = dir.join(name);
        std::fs::create_dir_all(prefix.join("logs")).unwrap();
        // nginx has no `off`: without the directive its workers are left to the scheduler.
        let affinity = if pin { "worker_cpu_affinity auto;" } else { "" };
        std::fs::write(
            &conf,
            format!(
                "worker_processes {workers};
{affinity}
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    {http}
    tcp_nopush on;
    keepalive_requests 100000;
    open_file_cache max=1000 inactive=60s;
    types {{ text/html html; }}
    default_type application/octet-stream;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port};
        {directives}
    }}
}}
",
                prefix = prefix.display(),
            ),
        )
        .unwrap();
        let status = Command::new(NGINX)
            .arg("-p")
            .arg(&prefix)
            .arg("-c")
            .arg(&conf)
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "nginx did not start ({})", conf.display());
        Self {
            conf,
            prefix,
            port,
            label: label.to_owned(),
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = Command::new(NGINX)
            .arg("-p")
            .arg(&self.prefix)
            .arg("-c")
            .arg(&self.conf)
            .args(["-s", "stop"])
            .stderr(Stdio::null())
            .status();
    }
}
