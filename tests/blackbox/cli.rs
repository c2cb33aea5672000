//! The `quire` CLI against the real server: device login approved in the dashboard, then
//! each command's success and failure output. The CLI binary is built (or found up to date)
//! once per test run.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

use crate::dashboard::{Browser, DECISION, with_password};
use crate::harness::{BIN, Backend, Server, on_both_backends};

/// The `quire` binary next to `quire-server`, built by this test run so it is never stale.
pub(crate) fn quire_bin() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = Path::new(BIN).parent().expect("bin dir").to_path_buf();
        let mut build = Command::new(option_env!("CARGO").unwrap_or("cargo"));
        build.args(["build", "-q", "-p", "quire-cli", "--bin", "quire"]);
        if dir.ends_with("release") {
            build.arg("--release");
        }
        let status = build.status().expect("run cargo build");
        assert!(status.success(), "building the quire CLI failed");
        dir.join("quire")
    })
}

/// A CLI user: an empty home and config directory of its own.
pub(crate) struct User {
    pub home: tempfile::TempDir,
    pub server: String,
}

impl User {
    pub(crate) fn new(srv: &Server) -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            server: srv.base.clone(),
        }
    }

    pub(crate) fn config_dir(&self) -> PathBuf {
        self.home.path().join("config")
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(quire_bin());
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("QUIRE_CONFIG_DIR", self.config_dir())
            .env("QUIRE_URL", &self.server)
            .args(args)
            .stdin(Stdio::null());
        cmd
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs and expects success; returns stdout.
    #[track_caller]
    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "quire {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    #[track_caller]
    pub(crate) fn ok_json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(&all)).unwrap()
    }

    /// Runs and expects failure; returns (stdout, stderr).
    #[track_caller]
    pub(crate) fn fails(&self, args: &[&str]) -> (String, String) {
        let out = self.run(args);
        assert!(!out.status.success(), "quire {args:?} should have failed");
        assert_eq!(out.status.code(), Some(1));
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    /// Starts `quire login` and returns it with the verification URL it printed.
    pub(crate) fn start_login(&self) -> (std::process::Child, String) {
        let mut child = self
            .command(&["login", "--no-browser", "--client-name", "cli test"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let url = loop {
            let line = lines.next().expect("login printed no link").unwrap();
            if let Some(i) = line.find("http") {
                break line[i..].trim().to_owned();
            }
        };
        // Keep draining so the child never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        (child, url)
    }
}

pub(crate) fn site(dir: &Path) {
    std::fs::create_dir_all(dir.join("css")).unwrap();
    std::fs::write(dir.join("index.html"), "<h1>Hello from the CLI</h1>").unwrap();
    std::fs::write(dir.join("css/site.css"), "h1 { color: teal }").unwrap();
    std::fs::write(dir.join("logo.bin"), [0u8, 159, 146, 150]).unwrap();
}

fn code_of(url: &str) -> String {
    url.split("code=")
        .nth(1)
        .expect("code in the link")
        .to_owned()
}

async fn login_then_every_command(b: Backend) {
    let Some((_db, srv)) = with_password(b).await else {
        return;
    };
    let user = User::new(&srv);

    // Not logged in yet: a clear local error, exit 1.
    let (_, err) = user.fails(&["whoami"]);
    assert!(err.contains("not logged in"), "{err}");

    let (child, url) = user.start_login();
    assert!(
        url.starts_with(&format!("{}/authorize-agent?code=", srv.base)),
        "{url}"
    );
    let mut browser = Browser::new(&srv);
    assert_eq!(browser.sign_in("ann").await.status, 303);
    let r = browser
        .post(
            DECISION,
            &[("code", &code_of(&url)), ("decision", "approve")],
        )
        .await;
    assert_eq!(r.status, 303);
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The key is stored owner-only.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let file = user.config_dir().join("config.json");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&user.config_dir()), 0o700);
        let stored: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert!(stored["key"].as_str().unwrap().starts_with("qk_"));
    }
    assert!(user.ok(&["whoami"]).contains("Projects: ann"));

    // Publish: text output names both URLs.
    let site_dir = user.home.path().join("site");
    site(&site_dir);
    let text = user.ok(&["publish", site_dir.to_str().unwrap(), "--title", "CLI site"]);
    assert!(text.contains("URL:"), "{text}");
    assert!(text.contains("Short URL:"), "{text}");
    assert!(text.contains("3 files"), "{text}");
    let published = user.ok_json(&[
        "publish",
        site_dir.to_str().unwrap(),
        "--new",
        "--title",
        "Second",
        "--slug",
        "second",
        "--access",
        "password",
        "--password",
        "open sesame",
        "--max-views",
        "5",
    ]);
    let id = published["id"].as_str().unwrap().to_owned();
    assert_eq!(published["access"], "password");
    assert_eq!(published["fileCount"], 3);

    let listed = user.ok(&["pages", "list"]);
    assert!(
        listed.contains("second") && listed.contains("cli-site"),
        "{listed}"
    );
    assert_eq!(user.ok_json(&["pages", "get", &id])["slug"], "second");
    assert_eq!(
        user.ok_json(&["pages", "update", &id, "--title", "Renamed"])["title"],
        "Renamed"
    );
    user.ok(&["pages", "archive", &id]);
    assert!(
        user.ok(&["pages", "list", "--status", "archived"])
            .contains(&id)
    );
    user.ok(&["pages", "restore", &id]);
    let files = user.ok(&["pages", "files", &id]);
    assert!(files.contains("css/site.css"), "{files}");
    let extra = user.home.path().join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::write(extra.join("about.html"), "<p>about</p>").unwrap();
    assert!(
        user.ok(&["pages", "add-files", &id, extra.to_str().unwrap()])
            .contains("Added 1")
    );
    assert!(user.ok(&["pages", "files", &id]).contains("about.html"));
    user.ok(&["pages", "delete", &id, "--yes"]);
    let (stdout, err) = user.fails(&["--json", "pages", "get", &id]);
    assert!(err.starts_with("error: not_found: "), "{err}");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).unwrap()["error"],
        "not_found"
    );

    // Projects and keys.
    user.ok(&[
        "projects",
        "create",
        "--name",
        "Docs",
        "--slug",
        "docs_site",
    ]);
    assert!(user.ok(&["projects", "list"]).contains("docs_site"));
    let (_, err) = user.fails(&[
        "projects",
        "create",
        "--name",
        "Again",
        "--slug",
        "docs_site",
    ]);
    assert!(err.contains("slug_taken"), "{err}");
    let minted = user.ok_json(&["keys", "create", "--name", "ci", "--apps", "page,link"]);
    let key_id = minted["keyId"].as_str().unwrap().to_owned();
    assert!(user.ok(&["keys", "list"]).contains(&key_id));
    user.ok(&["keys", "revoke", &key_id]);
    let (_, err) = user.fails(&["keys", "revoke", &uuid::Uuid::new_v4().to_string()]);
    assert!(err.contains("not_found"), "{err}");

    // Errors from input and environment.
    let (_, err) = user.fails(&["publish", "/nonexistent/site", "--title", "x"]);
    assert!(err.contains("/nonexistent/site"), "{err}");
    let (_, err) = user.fails(&["pages", "update", &id]);
    assert!(err.contains("nothing to update"), "{err}");
    let bad = user
        .command(&["whoami"])
        .env("QUIRE_KEY", format!("qk_{}", "A".repeat(43)))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("invalid_api_key"));
    let down = user
        .command(&["whoami"])
        .env("QUIRE_URL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&down.stderr).contains("cannot connect"));

    assert!(user.ok(&["logout"]).contains("Logged out"));
    let (_, err) = user.fails(&["whoami"]);
    assert!(err.contains("not logged in"), "{err}");
}

async fn denied_login_stops_cleanly(b: Backend) {
    let Some((_db, srv)) = with_password(b).await else {
        return;
    };
    let user = User::new(&srv);
    let (child, url) = user.start_login();
    let mut browser = Browser::new(&srv);
    assert_eq!(browser.sign_in("ann").await.status, 303);
    browser
        .post(DECISION, &[("code", &code_of(&url)), ("decision", "deny")])
        .await;
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("access_denied") && err.contains("denied"),
        "{err}"
    );
    assert!(!user.config_dir().join("config.json").exists());
}

on_both_backends!(login_then_every_command, denied_login_stops_cleanly);

/// A stand-in token endpoint for what the real server cannot be made to do quickly:
/// `slow_down` and expiry. Answers each request with the next canned (status, body).
async fn scripted_server(
    answers: Vec<(u16, &'static str)>,
) -> (String, tokio::task::JoinHandle<Vec<std::time::Instant>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = tokio::spawn(async move {
        let mut seen = Vec::new();
        for (status, body) in answers {
            let (mut sock, _) = listener.accept().await.unwrap();
            let mut buf = vec![0u8; 8192];
            let _ = sock.read(&mut buf).await;
            seen.push(std::time::Instant::now());
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            sock.write_all(reply.as_bytes()).await.unwrap();
        }
        seen
    });
    (format!("http://{addr}"), handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_honours_slow_down_and_stops_on_expiry() {
    let (base, server) = scripted_server(vec![
        (
            200,
            r#"{"device_code":"dc","user_code":"BCDF-GHJK","verification_uri":"http://x/authorize-agent","verification_uri_complete":"http://x/authorize-agent?code=BCDF-GHJK","expires_in":600,"interval":1}"#,
        ),
        (400, r#"{"error":"slow_down","message":"slow down","interval":3}"#),
        (400, r#"{"error":"authorization_pending","message":"pending"}"#),
        (400, r#"{"error":"expired_token","message":"expired"}"#),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let out = tokio::task::spawn_blocking({
        let dir = home.path().to_path_buf();
        move || {
            Command::new(quire_bin())
                .env_clear()
                .env("QUIRE_CONFIG_DIR", dir.join("config"))
                .args(["login", "--no-browser", "--server", &base])
                .stdin(Stdio::null())
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let seen = server.await.unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("expired_token") && err.contains("quire login"),
        "{err}"
    );
    // After slow_down the CLI waits the new interval (3 s) instead of 1 s.
    let gap = seen[2].duration_since(seen[1]);
    assert!(
        gap >= std::time::Duration::from_millis(2900),
        "waited only {gap:?}"
    );
    assert!(!home.path().join("config/config.json").exists());
}
