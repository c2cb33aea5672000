//! Headless Chromium (Debian's `chromium`, driven through `chromedriver` over the W3C
//! WebDriver protocol) clicking through the dashboard as a person would: sign in, enroll
//! TOTP, sign in again with the code, approve the link printed by a real `quire login`,
//! deny another, and a cross-site form post that must be refused.
//!
//! Needs `/usr/bin/chromium` and `/usr/bin/chromedriver`: CI installs them and fails
//! without them; elsewhere a test that starts the browser is reported ignored when they are
//! absent (`no_chromium`, set by the server crate's build script).

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use quire_accounts::TotpSecret;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::cli::{User, site};
use crate::dashboard::{PASSWORD, with_password};
use crate::harness::Backend;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// One chromedriver process and one browser session; both end when dropped.
pub(crate) struct Driver {
    process: Child,
    http: reqwest::Client,
    base: String,
    profile: tempfile::TempDir,
}

impl Drop for Driver {
    /// Ends chromedriver, the browser and every helper process of it, pass or fail:
    /// killing chromedriver alone leaves Chromium's renderers and zygotes running. They
    /// share chromedriver's process group (started as its own) and name the profile
    /// directory on their command lines.
    fn drop(&mut self) {
        let group = format!("-{}", self.process.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.process.kill();
        let _ = self.process.wait();
        let _ = Command::new("pkill")
            .args(["-KILL", "-f", &self.profile.path().display().to_string()])
            .status();
    }
}

impl Driver {
    /// The processes of this browser still running (their command lines name its profile).
    pub(crate) fn profile_path(&self) -> String {
        self.profile.path().display().to_string()
    }
}

/// How many processes name `profile` on their command line.
pub(crate) fn processes_of(profile: &str) -> usize {
    let out = Command::new("pgrep")
        .args(["-f", profile])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Driver {
    /// Always `Some`: a test that starts the browser carries `#[cfg_attr(no_chromium,
    /// ignore = …)]`, so it runs only where Chromium is expected, and fails here without it.
    pub(crate) async fn start() -> Option<Self> {
        assert!(
            std::path::Path::new(CHROMEDRIVER).exists() && std::path::Path::new(CHROMIUM).exists(),
            "{CHROMIUM} or {CHROMEDRIVER} is not installed: apt-get install chromium chromium-driver"
        );
        let port = free_port();
        let process = Command::new(CHROMEDRIVER)
            .process_group(0)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let root = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(r) = http.get(format!("{root}/status")).send().await
                && r.status().is_success()
            {
                break;
            }
            assert!(Instant::now() < deadline, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            // Each owner's pages are on `{handle}.localhost`: loopback, whatever the resolver.
            "--host-resolver-rules=MAP *.localhost 127.0.0.1, MAP localhost 127.0.0.1",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([format!("--user-data-dir={}", profile.path().display())])
        .collect::<Vec<_>>();
        let session: Value = http
            .post(format!("{root}/session"))
            .json(&json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": { "binary": CHROMIUM, "args": args }
            }}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = session["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no browser session: {session}"))
            .to_owned();
        Some(Self {
            process,
            http,
            base: format!("{root}/session/{id}"),
            profile,
        })
    }

    pub(crate) async fn cmd(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Value {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let v: Value = req.send().await.unwrap().json().await.unwrap();
        assert!(
            v["value"].get("error").is_none(),
            "webdriver {path}: {}",
            v["value"]
        );
        v["value"].clone()
    }

    pub(crate) async fn go(&self, url: &str) {
        self.cmd(reqwest::Method::POST, "/url", Some(json!({ "url": url })))
            .await;
    }

    pub(crate) async fn url(&self) -> String {
        self.cmd(reqwest::Method::GET, "/url", None)
            .await
            .as_str()
            .unwrap()
            .to_owned()
    }

    pub(crate) async fn find(&self, css: &str) -> Option<String> {
        let r: Value = self
            .http
            .post(format!("{}/element", self.base))
            .json(&json!({ "using": "css selector", "value": css }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        r["value"][ELEMENT].as_str().map(str::to_owned)
    }

    pub(crate) async fn element(&self, css: &str) -> String {
        match self.find(css).await {
            Some(id) => id,
            None => panic!("no {css} on {}:\n{}", self.url().await, self.source().await),
        }
    }

    pub(crate) async fn text(&self, css: &str) -> String {
        let id = self.element(css).await;
        self.cmd(reqwest::Method::GET, &format!("/element/{id}/text"), None)
            .await
            .as_str()
            .unwrap()
            .to_owned()
    }

    pub(crate) async fn fill(&self, css: &str, text: &str) {
        let id = self.element(css).await;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/value"),
            Some(json!({ "text": text })),
        )
        .await;
    }

    /// Clicks something that submits a form, and waits until the next document is loaded
    /// (its `<html>` element is a new one, even when the URL is the same).
    pub(crate) async fn click(&self, css: &str) {
        let before = self.find("html").await;
        let id = self.element(css).await;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/click"),
            Some(json!({})),
        )
        .await;
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let now = self.find("html").await;
            if now.is_some() && now != before {
                let ready = self
                    .cmd(
                        reqwest::Method::POST,
                        "/execute/sync",
                        Some(json!({ "script": "return document.readyState", "args": [] })),
                    )
                    .await;
                if ready == "complete" {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "clicking {css} loaded no page");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub(crate) async fn source(&self) -> String {
        self.cmd(reqwest::Method::GET, "/source", None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Saves a screenshot next to the test binaries, for a person to look at.
    pub(crate) async fn screenshot(&self, name: &str) {
        self.save_screenshot("/screenshot", name).await;
    }

    /// [`Driver::screenshot`] of one element (scrolled into view).
    pub(crate) async fn screenshot_of(&self, css: &str, name: &str) {
        let id = self.element(css).await;
        self.save_screenshot(&format!("/element/{id}/screenshot"), name)
            .await;
    }

    async fn save_screenshot(&self, path: &str, name: &str) {
        use base64::Engine;
        let png = self.cmd(reqwest::Method::GET, path, None).await;
        if let Some(b64) = png.as_str()
            && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(b64)
        {
            let dir = std::path::Path::new(crate::harness::BIN)
                .parent()
                .unwrap()
                .join("screenshots");
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(dir.join(format!("{name}.png")), bytes);
        }
    }

    pub(crate) async fn sign_in(&self, login: &str) {
        self.fill("#login", login).await;
        self.fill("#password", PASSWORD).await;
        self.click("#submit").await;
    }
}

/// Serves one fixed HTML page on another origin, for the cross-site post.
pub(crate) async fn foreign_site(html: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = vec![0u8; 8192];
            let _ = sock.read(&mut buf).await;
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{html}",
                html.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        }
    });
    format!("http://{addr}")
}

async fn wait_for(child: Child) -> std::process::Output {
    tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap()
}

#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[cfg_attr(
    all(no_axe, not(no_chromium)),
    ignore = "needs axe-core: npm install --prefix target/axe axe-core"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_signs_in_with_totp_and_approves_the_cli_in_chromium() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some((_db, srv)) = with_password(Backend::Sqlite).await else {
        return;
    };

    // Sign in with the password and enroll TOTP.
    browser.go(&format!("{}/login", srv.base)).await;
    browser.audit("sign-in").await;
    browser.sign_in("ann@example.com").await;
    // Sign-in lands on the Pages overview; two-step sign-in is on Security.
    assert_eq!(browser.url().await, format!("{}/account/pages", srv.base));
    browser.go(&format!("{}/account/security", srv.base)).await;
    browser.screenshot("enroll-totp").await;
    let secret = TotpSecret::parse(&browser.text("#totp-secret").await).unwrap();
    let now = OffsetDateTime::now_utc();
    browser.fill("#code", &secret.code_at(now)).await;
    browser.click("#enroll").await;
    assert!(browser.text("#enrolled").await.contains("on"));
    browser.click("#sign-out").await;
    assert_eq!(browser.url().await, format!("{}/login", srv.base));

    // The real CLI starts a device login; the person opens the link it printed.
    let user = User::new(&srv);
    let (cli, link) = user.start_login();
    browser.go(&link).await;
    assert!(
        browser.url().await.contains("/login?next="),
        "{}",
        browser.url().await
    );
    browser.sign_in("ann").await;
    assert!(browser.url().await.contains("/login/totp"));
    browser.audit("totp").await;
    // The enrolling code is spent: give a later step's.
    browser.fill("#code", "000000").await;
    browser.click("#submit").await;
    assert!(browser.text("#error").await.contains("not right"));
    browser
        .fill("#code", &crate::harness::code_after_enrolling(&secret, now))
        .await;
    browser.click("#submit").await;
    assert_eq!(browser.url().await, link, "{}", browser.source().await);
    assert_eq!(browser.text("#client-name").await, "cli test");
    assert!(link.ends_with(&browser.text("#user-code").await));
    assert!(browser.text("#scope").await.contains("master key"));
    browser.screenshot("consent").await;
    browser.click("#approve").await;
    assert!(browser.text("#outcome").await.starts_with("Approved"));

    let out = wait_for(cli).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let site_dir = user.home.path().join("site");
    site(&site_dir);
    let published = user.ok(&[
        "publish",
        site_dir.to_str().unwrap(),
        "--title",
        "From Chromium",
    ]);
    assert!(published.contains("URL:"), "{published}");

    // Deny: the CLI stops with the denial and stores nothing new.
    let other = User::new(&srv);
    let (cli, link) = other.start_login();
    browser.go(&link).await;
    browser.click("#deny").await;
    assert!(browser.text("#outcome").await.starts_with("Denied"));
    let out = wait_for(cli).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("denied"));

    // A page on another origin posts the decision form: the browser sends the session
    // cookie (same site), but the Origin check refuses it and the request stays pending.
    let third = User::new(&srv);
    let (cli, link) = third.start_login();
    let code = link.split("code=").nth(1).unwrap().to_owned();
    let evil = foreign_site(format!(
        r#"<!doctype html><form method="post" action="{}/api/agent-login/decision">
<input type="hidden" name="code" value="{code}"><input type="hidden" name="decision" value="approve">
<button id="go" type="submit">Win a prize</button></form>"#,
        srv.base
    ))
    .await;
    browser.go(&evil).await;
    browser.click("#go").await;
    let refused = browser.source().await;
    assert!(refused.contains("invalid origin"), "{refused}");
    browser.go(&link).await;
    assert!(browser.find("#approve").await.is_some(), "still pending");
    browser.click("#deny").await;
    assert_eq!(wait_for(cli).await.status.code(), Some(1));
}

/// The browser and all its helper processes end with the test that started them.
#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_ends_with_its_driver() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    browser.go("about:blank").await;
    let profile = browser.profile_path();
    assert!(
        processes_of(&profile) > 1,
        "chromium runs while the test does"
    );
    drop(browser);
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_of(&profile) > 0 {
        assert!(
            Instant::now() < deadline,
            "{} chromium processes outlived the test",
            processes_of(&profile)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Expiry, end to end: a real `quire login` whose request ages past its 600 seconds (moved
/// there in the PostgreSQL database, since nobody should wait ten minutes) is shown as
/// expired on the consent screen, and the CLI stops with `expired_token`.
#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[cfg_attr(
    all(no_postgres, not(no_chromium)),
    ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_request_is_shown_as_such_and_the_cli_stops() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some((db, srv)) = with_password(Backend::Postgres).await else {
        return;
    };
    let user = User::new(&srv);
    let (cli, link) = user.start_login();
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let aged = client
        .execute(
            "UPDATE device_grants SET created_at = created_at - interval '601 seconds', \
             expires_at = expires_at - interval '601 seconds'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(aged, 1);

    browser.go(&link).await;
    browser.sign_in("ann").await;
    assert!(browser.text("#error").await.contains("expired"));
    assert!(browser.find("#approve").await.is_none());
    let out = wait_for(cli).await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("expired_token"), "{err}");
    assert!(!user.config_dir().join("config.json").exists());
}
