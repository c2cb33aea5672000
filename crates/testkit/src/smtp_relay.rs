//! A real SMTP server for tests: Debian's aiosmtpd on a free loopback port, accepting
//! every message (kept as `{n}.eml` with its envelope) except for `reject@example.com`,
//! which it refuses with `550 5.1.1` at RCPT.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PYTHON: &str = "/usr/bin/python3";

/// Accepts every message and writes it to `$QUIRE_TEST_MAILDIR/{n}.eml`; refuses
/// `reject@example.com` at RCPT.
const HANDLER: &str = r#"
import os, itertools
counter = itertools.count()
class Handler:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address == "reject@example.com":
            return "550 5.1.1 mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"
    async def handle_DATA(self, server, session, envelope):
        n = next(counter)
        with open(os.path.join(os.environ["QUIRE_TEST_MAILDIR"], f"{n}.eml"), "wb") as f:
            f.write(b"X-Envelope-From: " + envelope.mail_from.encode() + b"\r\n")
            f.write(b"X-Envelope-To: " + ",".join(envelope.rcpt_tos).encode() + b"\r\n")
            f.write(envelope.original_content)
        return f"250 2.0.0 queued as Q{n}"
"#;

/// A running aiosmtpd; it stops when dropped.
#[derive(Debug)]
pub struct SmtpRelay {
    child: Child,
    pub port: u16,
    dir: tempfile::TempDir,
}

impl Drop for SmtpRelay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nothing listens on (at the time of asking).
#[must_use]
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl SmtpRelay {
    /// Starts a relay. A test that calls this carries
    /// `#[cfg_attr(no_aiosmtpd, ignore = …)]` (the build script of its crate probes for
    /// aiosmtpd), so it runs only where aiosmtpd is expected.
    ///
    /// # Panics
    /// When Debian's aiosmtpd is not installed, or the relay does not start within 10 s.
    #[must_use]
    pub fn start() -> Self {
        let available = Command::new(PYTHON)
            .args(["-c", "import aiosmtpd"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            available,
            "{PYTHON} has no aiosmtpd: install python3-aiosmtpd"
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("quire_handler.py"), HANDLER).unwrap();
        let port = free_port();
        let child = Command::new(PYTHON)
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")])
            .args(["-c", "quire_handler.Handler"])
            .env("PYTHONPATH", dir.path())
            .env("QUIRE_TEST_MAILDIR", dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "aiosmtpd did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, port, dir }
    }

    /// Every message received so far, oldest first, with `X-Envelope-From` and
    /// `X-Envelope-To` lines on top.
    #[must_use]
    pub fn received(&self) -> Vec<String> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "eml"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect()
    }
}
