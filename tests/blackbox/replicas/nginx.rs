//! The real nginx in front of the replicas, running `deploy/nginx.conf` (the file
//! `docs/deploy.md` shows) with only its names, addresses, listen ports and certificate paths
//! swapped for the test's; the TLS certificate made here with the `openssl` CLI.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The workspace's root.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The names the configuration is written for, and the ones the test answers on.
pub const DOMAIN: &str = "example.test";
pub const API_HOST: &str = "quire.example.test";
pub const PAGES_DOMAIN: &str = "pages.example.test";

/// The nginx binary: on `PATH`, or where Debian puts it.
pub fn binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join("nginx"))
        .find(|p| p.is_file())
}

/// The replicas' listeners, as nginx's upstreams name them.
#[derive(Debug, Clone, Copy)]
pub struct Ports {
    pub api: [u16; 2],
    pub pages: [u16; 2],
    pub https: u16,
    pub http: u16,
}

/// A running nginx; stopped when dropped.
pub struct Nginx {
    child: Child,
    dir: PathBuf,
    ca: Vec<u8>,
    pub ports: Ports,
}

/// `deploy/nginx.conf` with the test's names, addresses, ports and certificate paths.
pub fn site_config(ports: Ports, certs: &Path) -> String {
    let conf = std::fs::read_to_string(format!("{ROOT}/deploy/nginx.conf")).expect("nginx.conf");
    let swaps = [
        (
            "/etc/ssl/quire/".to_owned(),
            format!("{}/", certs.display()),
        ),
        ("example.com".to_owned(), DOMAIN.to_owned()),
        (
            "10.0.0.11:8080".to_owned(),
            format!("127.0.0.1:{}", ports.api[0]),
        ),
        (
            "10.0.0.12:8080".to_owned(),
            format!("127.0.0.1:{}", ports.api[1]),
        ),
        (
            "10.0.0.11:8081".to_owned(),
            format!("127.0.0.1:{}", ports.pages[0]),
        ),
        (
            "10.0.0.12:8081".to_owned(),
            format!("127.0.0.1:{}", ports.pages[1]),
        ),
        (
            "listen 443 ssl;".to_owned(),
            format!("listen 127.0.0.1:{} ssl;", ports.https),
        ),
        (
            "listen 80;".to_owned(),
            format!("listen 127.0.0.1:{};", ports.http),
        ),
    ];
    let mut conf = conf;
    for (from, to) in swaps {
        assert!(
            conf.contains(&from),
            "deploy/nginx.conf no longer holds {from:?}"
        );
        conf = conf.replace(&from, &to);
    }
    for left in [
        "10.0.0.",
        "example.com",
        "/etc/ssl",
        "listen 443",
        "listen 80",
    ] {
        assert!(!conf.contains(left), "{left:?} left in the configuration");
    }
    conf
}

/// A test CA and a certificate it signs for the API host, the bare pages domain (short
/// links) and every owner's pages host.
fn make_certificate(dir: &Path) -> Vec<u8> {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("run openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let ca = ["req", "-x509", "-days", "2", "-subj", "/CN=Quire test CA"];
    let ca_files = ["-keyout", "ca.key", "-out", "ca.pem"];
    openssl(&[&ca[..], &ec, &ca_files].concat());
    let csr = [
        "req",
        "-subj",
        "/CN=quire.example.test",
        "-keyout",
        "leaf.key",
        "-out",
        "leaf.csr",
    ];
    openssl(&[&csr[..], &ec].concat());
    std::fs::write(
        dir.join("leaf.cnf"),
        format!(
            "subjectAltName=DNS:{API_HOST},DNS:{PAGES_DOMAIN},DNS:*.{PAGES_DOMAIN}\n\
             basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n"
        ),
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "leaf.cnf",
        "-out",
        "leaf.pem",
    ]);
    // The configuration names one certificate per server block; one covers both here.
    for name in [format!("quire.{DOMAIN}"), PAGES_DOMAIN.to_owned()] {
        std::fs::copy(dir.join("leaf.pem"), dir.join(format!("{name}.pem"))).unwrap();
        std::fs::copy(dir.join("leaf.key"), dir.join(format!("{name}.key"))).unwrap();
    }
    std::fs::read(dir.join("ca.pem")).unwrap()
}

/// Who runs the test: nginx's workers run as this user when the master runs as root
/// (otherwise the directive is ignored, with a warning in the error log).
fn user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

impl Nginx {
    /// Starts nginx in `dir` (its configuration, certificate, logs and temporary files) and
    /// waits until it accepts connections.
    pub fn start(binary: &Path, dir: &Path, ports: Ports) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let ca = make_certificate(dir);
        std::fs::write(dir.join("quire.conf"), site_config(ports, dir)).unwrap();
        let d = dir.display();
        let main = format!(
            "daemon off;\nuser {user};\nworker_processes 2;\npid {d}/nginx.pid;\n\
             error_log {d}/error.log warn;\nevents {{ worker_connections 1024; }}\n\
             http {{\n    log_format upstreams '$msec|$request_method|$host$request_uri|$status|\
             $upstream_addr|$upstream_status|$request_time';\n    \
             access_log {d}/access.log upstreams;\n    client_body_temp_path {d}/body;\n    \
             proxy_temp_path {d}/proxy;\n    fastcgi_temp_path {d}/fastcgi;\n    \
             uwsgi_temp_path {d}/uwsgi;\n    scgi_temp_path {d}/scgi;\n    \
             include {d}/quire.conf;\n}}\n",
            user = user()
        );
        std::fs::write(dir.join("nginx.conf"), main).unwrap();
        let mut child = Command::new(binary)
            .arg("-p")
            .arg(dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn nginx");
        let started = Instant::now();
        let addr = SocketAddr::from(([127, 0, 0, 1], ports.https));
        while std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
            if let Some(status) = child.try_wait().unwrap() {
                panic!("nginx stopped ({status}):\n{log}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "nginx never listened:\n{log}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            child,
            dir: dir.to_owned(),
            ca,
            ports,
        }
    }

    /// `https://{host}:{port}`: the names resolve to nginx, whose certificate is trusted.
    pub fn origin(&self, host: &str) -> String {
        format!("https://{host}:{}", self.ports.https)
    }

    /// A client that reaches the API host, the pages domain and `ann`'s pages through nginx
    /// only, trusts the test CA alone and follows no redirects.
    pub fn client(&self) -> reqwest::Client {
        let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
        reqwest::Client::builder()
            .resolve(API_HOST, loopback)
            .resolve(PAGES_DOMAIN, loopback)
            .resolve(&format!("ann.{PAGES_DOMAIN}"), loopback)
            .tls_certs_only([reqwest::Certificate::from_pem(&self.ca).unwrap()])
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap()
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }

    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    /// A fast shutdown (SIGTERM) through the master, which stops its workers; a SIGKILL of
    /// the master alone would leave them holding the ports.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `docs/deploy.md` shows `deploy/nginx.conf` as it is, in a fenced block of its own.
#[test]
fn the_deployment_guide_shows_the_nginx_configuration_the_test_runs() {
    let conf = std::fs::read_to_string(format!("{ROOT}/deploy/nginx.conf")).unwrap();
    let guide = std::fs::read_to_string(format!("{ROOT}/docs/deploy.md"))
        .expect("docs/deploy.md, the deployment guide that shows deploy/nginx.conf");
    let mut blocks = Vec::new();
    let mut open: Option<Vec<&str>> = None;
    for line in guide.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => open = Some(Vec::new()),
            (Some(block), true) => {
                blocks.push(block.join("\n"));
                open = None;
            }
            (Some(block), false) => block.push(line),
            (None, false) => {}
        }
    }
    assert!(
        blocks.iter().any(|b| b.trim_end() == conf.trim_end()),
        "no fenced block of docs/deploy.md is deploy/nginx.conf verbatim"
    );
}
