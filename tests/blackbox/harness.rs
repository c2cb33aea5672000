//! Starts the real `quire-server` binary on a free port, against SQLite (a temporary file)
//! or PostgreSQL (a fresh database), and talks to it over HTTP only. The running server
//! and its HTTP helpers are in `server`.

// Named by its path: `tests/schemathesis` includes this file by `#[path]`, which would look
// for the module beside it.
#[path = "harness/server.rs"]
mod server;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use quire_testkit::pg::TestDatabase;
use serde_json::Value;

#[allow(unused_imports)] // `tests/schemathesis` uses a part of the harness
pub use server::{Reply, Server, client};

pub const BIN: &str = env!("CARGO_BIN_EXE_quire-server");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A database for one test: keeps the temporary directory or PostgreSQL database alive.
pub struct TestDb {
    pub url: String,
    pub dir: tempfile::TempDir,
    pub pg: Option<TestDatabase>,
}

impl TestDb {
    /// Always `Some`: a PostgreSQL test is reported as ignored where PostgreSQL is not
    /// configured (the `no_postgres` cfg), and fails here when it is unreachable.
    pub async fn create(backend: Backend) -> Option<Self> {
        let dir = tempfile::tempdir().expect("tempdir");
        match backend {
            Backend::Sqlite => Some(Self {
                url: format!("sqlite://{}/quire.db", dir.path().display()),
                dir,
                pg: None,
            }),
            Backend::Postgres => {
                let pg = TestDatabase::create().await;
                Some(Self {
                    url: pg.url.clone(),
                    dir,
                    pg: Some(pg),
                })
            }
        }
    }

    /// The server's command on this database (its directory, a clean environment).
    pub fn command(&self) -> Command {
        self.command_via(&[])
    }

    /// The key the server seals stored secrets under (`data/secret.key`, the default
    /// `QUIRE_SECRET_KEY_FILE`, made at first start), or another file of the directory.
    pub fn sealing_key(&self, file: &str) -> quire_accounts::SealingKey {
        let hex = std::fs::read_to_string(self.dir.path().join(file)).expect("key file");
        let hex = hex.trim();
        let bytes: Vec<u8> = (0..32)
            .map(|i| u8::from_str_radix(&hex[i * 2..i * 2 + 2], 16).expect("hex"))
            .collect();
        quire_accounts::SealingKey::from_bytes(&bytes).expect("32 bytes")
    }

    /// The store on this database, holding the server's key file (as the server does).
    pub fn store(&self) -> quire_store::Database {
        quire_store::Database::connect(&quire_store::DatabaseConfig::new(&self.url))
            .expect("connect")
            .with_sealing_key(self.sealing_key("data/secret.key"))
    }

    /// The server's command, run through `wrapper` (e.g. `prlimit --nofile=256:256 --`).
    fn command_via(&self, wrapper: &[&str]) -> Command {
        let mut cmd = match wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(BIN);
                c
            }
            None => Command::new(BIN),
        };
        cmd.current_dir(self.dir.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("QUIRE_DATABASE_URL", &self.url)
            .env("QUIRE_LISTEN", "127.0.0.1:0")
            .env("QUIRE_PAGES_LISTEN", "127.0.0.1:0")
            .env("QUIRE_WORKERS", "2")
            .env("QUIRE_LOG_FORMAT", "json");
        cmd
    }

    /// Runs `quire-server admin create-account` and returns its JSON.
    pub fn create_account(&self, handle: &str, extra: &[&str]) -> Account {
        let out = self.admin(
            &[
                "create-account",
                "--email",
                &format!("{handle}@example.com"),
                "--handle",
                handle,
            ],
            extra,
        );
        assert!(
            out.status.success(),
            "create-account failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON output");
        Account {
            account_id: v["accountId"].as_str().unwrap().to_owned(),
            project_id: v["projectId"].as_str().unwrap().to_owned(),
            project_slug: v["projectSlug"].as_str().unwrap().to_owned(),
            key: v["masterKey"].as_str().unwrap().to_owned(),
        }
    }

    pub fn admin(&self, args: &[&str], extra: &[&str]) -> std::process::Output {
        self.admin_with(args, extra, &[])
    }

    /// [`TestDb::admin`] with more environment.
    pub fn admin_with(
        &self,
        args: &[&str],
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> std::process::Output {
        let mut cmd = self.command();
        cmd.arg("admin").args(args).args(extra);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("run quire-server admin")
    }

    /// Starts a server on this database.
    pub fn start(&self) -> Server {
        self.start_with(&[])
    }

    pub fn start_with(&self, env: &[(&str, &str)]) -> Server {
        self.start_via(&[], env)
    }

    /// Starts a server through `wrapper` (see [`TestDb::command_via`]).
    pub fn start_via(&self, wrapper: &[&str], env: &[(&str, &str)]) -> Server {
        let log = self
            .dir
            .path()
            .join(format!("server-{}.log", uuid::Uuid::new_v4()));
        let log_file = std::fs::File::create(&log).expect("log file");
        let mut cmd = self.command_via(wrapper);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .arg("serve")
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file))
            .spawn()
            .expect("spawn quire-server");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read listening line");
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|_| {
            panic!(
                "server did not start: {line:?}\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            )
        });
        let addr = v["listening"]["api"]
            .as_str()
            .expect("api address")
            .to_owned();
        let pages_addr = v["listening"]["pages"]
            .as_str()
            .expect("pages address")
            .to_owned();
        let pages_port = pages_addr.rsplit_once(':').expect("port").1.to_owned();
        let metrics = v["listening"]["metrics"].as_str().map(str::to_owned);
        Server {
            child,
            base: format!("http://{addr}"),
            pages: format!("http://localhost:{pages_port}"),
            pages_addr,
            metrics,
            addr,
            log,
            http: client()
                .timeout(Duration::from_secs(20))
                .build()
                .expect("client"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Account {
    pub account_id: String,
    pub project_id: String,
    pub project_slug: String,
    pub key: String,
}

/// Expands each listed `async fn name(backend: Backend)` into one test per backend. The
/// attributes written first go on every test made. Where PostgreSQL is not configured the
/// PostgreSQL tests are reported as ignored, with the reason (the `no_postgres` cfg of
/// `crates/server/build.rs`), never as passed.
macro_rules! on_both_backends {
    // The attributes travel as one bracketed group, so that they can be repeated per test.
    (@tests $attrs:tt $($name:ident),+) => {
        mod sqlite {
            $($crate::harness::on_both_backends!(@sqlite $attrs $name);)+
        }
        mod postgres {
            $($crate::harness::on_both_backends!(@postgres $attrs $name);)+
        }
    };
    (@sqlite [$(#[$attr:meta])*] $name:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            super::$name($crate::harness::Backend::Sqlite).await;
        }
    };
    (@postgres [$(#[$attr:meta])*] $name:ident) => {
        // One reason per test: another attribute's `ignore` stands only where PostgreSQL is.
        $(#[cfg_attr(not(no_postgres), $attr)])*
        #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            super::$name($crate::harness::Backend::Postgres).await;
        }
    };
    ($(#[$attr:meta])* $($name:ident),+ $(,)?) => {
        $crate::harness::on_both_backends!(@tests [$(#[$attr])*] $($name),+);
    };
}
pub(crate) use on_both_backends;

/// Starts a database, one account and a server; returns `None` to skip (see [`TestDb`]).
pub async fn setup(backend: Backend) -> Option<(TestDb, Server, Account)> {
    let db = TestDb::create(backend).await?;
    let account = db.create_account("ann", &[]);
    let server = db.start();
    Some((db, server, account))
}

/// Longest [`eventually`] waits: far past the server's background ticks (the view flush every
/// second, the janitor at the interval a test sets), and short enough to fail a test soon.
/// 10 s was once not enough under the whole suite's load on SQLite: an idle view block's
/// return (2 s idle, the next flush, 0.8 s of policy cache, about 4 s in all when run alone)
/// did not show within it.
pub const EVENTUALLY_WITHIN: Duration = Duration::from_secs(30);

/// Waits until `done` holds, asking every 100 ms; fails naming `what` if it does not within
/// [`EVENTUALLY_WITHIN`]. For what the server does in the background, on its own schedule.
pub async fn eventually<F, Done>(what: &str, mut done: F)
where
    F: FnMut() -> Done,
    Done: Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + EVENTUALLY_WITHIN;
    while !done().await {
        assert!(
            std::time::Instant::now() < deadline,
            "not within {EVENTUALLY_WITHIN:?}: {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Lowercase hex SHA-256 of `bytes` from the system's `sha256sum`: a digest made apart from
/// the code under test, to check the digests Quire stores and reports.
pub fn sha256sum(bytes: &[u8]) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sha256sum");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

/// A TOTP code other than the enrolling one: the next step's while the clock is still in the
/// step enrolled at (a step ahead is accepted), the current step's on a run slow enough to
/// have left it, where the step after enrolling would be too old.
pub fn code_after_enrolling(
    secret: &quire_accounts::TotpSecret,
    enrolled_at: time::OffsetDateTime,
) -> String {
    let later = time::OffsetDateTime::now_utc().max(enrolled_at + time::Duration::seconds(30));
    secret.code_at(later)
}
