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
        Self::launch(
            dir,
            name,
            label,
            workers,
            pin,
            port,
            &format!(
                "access_log off;
    {http}
    tcp_nopush on;
    keepalive_requests 100000;
    open_file_cache max=1000 inactive=60s;
    types {{ text/html html; }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        {directives}
    }}"
            ),
        )
    }

    /// nginx with `http` inside its `http` block (after the paths of its temporary files,
    /// which it keeps in its own folder under `dir`): the caller's servers, which listen on
    /// `port` (the one reported) and any others. `name` names its files, `label` its figures.
    ///
    /// # Panics
    /// When nginx does not start.
    #[must_use]
    pub fn launch(
        dir: &Path,
        name: &str,
        label: &str,
        workers: usize,
        pin: bool,
        port: u16,
        http: &str,
    ) -> Self {
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
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    {http}
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

    /// The pids of nginx's workers (the children of its master), empty when unknown.
    #[must_use]
    pub fn worker_pids(&self) -> Vec<u32> {
        let master = std::fs::read_to_string(self.prefix.join("nginx.pid")).unwrap_or_default();
        let master = master.trim();
        std::fs::read_to_string(format!("/proc/{master}/task/{master}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    }

    /// nginx's error log (level `warn` and above).
    #[must_use]
    pub fn error_log(&self) -> PathBuf {
        self.prefix.join("logs/error.log")
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

/// The documented proxy configuration, `deploy/nginx.conf` (`QUIRE_BENCH_NGINX_CONF` names
/// another file): what goes inside nginx's `http` block in front of Quire's replicas.
///
/// # Panics
/// When the file cannot be read.
#[must_use]
pub fn deploy_template() -> (PathBuf, String) {
    let path = std::env::var_os("QUIRE_BENCH_NGINX_CONF").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/nginx.conf"),
        PathBuf::from,
    );
    let text = std::fs::read_to_string(&path);
    let text = text.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path.canonicalize().unwrap_or(path), text)
}

/// `template`, the deploy configuration, for replicas on loopback: its upstream servers
/// `10.0.0.11`, `10.0.0.12`, … (ports 8080 for the API, 8081 for pages) become `replicas`
/// (each its API and pages port; the template's lines naming a replica past them are
/// dropped, so one replica is the same file with a server line less in each upstream); its
/// `listen 443 ssl;` listens on loopback at `port`, with TLS from `tls` (certificate, key)
/// or, without it, in plain HTTP with the certificate lines dropped; its `listen 80;` (the
/// redirect to https) at `redirect`.
///
/// # Panics
/// When the template no longer has the lines replaced (it changed shape).
#[must_use]
pub fn deploy_config(
    template: &str,
    replicas: &[(u16, u16)],
    port: u16,
    redirect: u16,
    tls: Option<(&Path, &Path)>,
) -> String {
    let mut out = String::new();
    let (mut listens, mut upstreams) = (0, 0);
    'lines: for line in template.lines() {
        let mut line = line.to_owned();
        for i in 0..9 {
            let host = format!("10.0.0.{}:", 11 + i);
            if !line.contains(&host) {
                continue;
            }
            let Some((api, pages)) = replicas.get(i) else {
                continue 'lines;
            };
            upstreams += 1;
            line = line
                .replace(&format!("{host}8080"), &format!("127.0.0.1:{api}"))
                .replace(&format!("{host}8081"), &format!("127.0.0.1:{pages}"));
        }
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        if trimmed.starts_with("listen 443 ssl;") {
            listens += 1;
            let ssl = if tls.is_some() { " ssl" } else { "" };
            line = format!("{indent}listen 127.0.0.1:{port}{ssl};");
        } else if trimmed.starts_with("listen 80;") {
            line = format!("{indent}listen 127.0.0.1:{redirect};");
        } else if let Some(rest) = trimmed.strip_prefix("ssl_certificate") {
            let Some((cert, key)) = tls else {
                continue;
            };
            let (name, file) = if rest.starts_with("_key") {
                ("ssl_certificate_key", key)
            } else {
                ("ssl_certificate", cert)
            };
            line = format!("{indent}{name} {};", file.display());
        }
        out.push_str(&line);
        out.push('\n');
    }
    assert!(
        listens > 0 && upstreams >= replicas.len() && !out.contains("10.0.0."),
        "the deploy configuration changed shape: no `listen 443 ssl;`, or upstream servers \
         not at 10.0.0.11, 10.0.0.12, … ports 8080 and 8081"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::{deploy_config, deploy_template};
    use std::path::Path;

    /// The benchmark runs the documented file: each of its replicas, listeners and
    /// certificates must still be found in it.
    #[test]
    fn the_deploy_configuration_is_put_on_loopback() {
        let (_, template) = deploy_template();
        let two = deploy_config(&template, &[(1001, 1002), (1003, 1004)], 2000, 2001, None);
        assert!(two.contains("127.0.0.1:1001") && two.contains("127.0.0.1:1004"));
        assert!(two.contains("listen 127.0.0.1:2000;") && two.contains("127.0.0.1:2001;"));
        assert!(!two.contains("ssl_certificate") && !two.contains(" ssl;"));
        let one = deploy_config(&template, &[(1001, 1002)], 2000, 2001, None);
        assert!(one.contains("127.0.0.1:1002") && !one.contains("1003") && !one.contains("1004"));
        assert_eq!(two.lines().count() - one.lines().count(), 2);
        let tls = deploy_config(
            &template,
            &[(1001, 1002)],
            2000,
            2001,
            Some((Path::new("/c.pem"), Path::new("/k.pem"))),
        );
        assert!(tls.contains("listen 127.0.0.1:2000 ssl;"));
        assert!(
            tls.contains("ssl_certificate /c.pem;") && tls.contains("ssl_certificate_key /k.pem;")
        );
    }
}
