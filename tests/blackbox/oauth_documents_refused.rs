//! What Client ID Metadata Documents refuse, against the real server: documents that lie,
//! redirect, grow past 16 KiB or never answer are refused on the error page (on both
//! databases); inner addresses are never fetched; a certificate no verifier trusts is
//! refused without an ERROR line.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::harness::{Backend, TestDb, on_both_backends};
use crate::oauth_documents::{SWITCH, refused, serve_documents};
use crate::oauth_flow::{REDIRECT, world};

on_both_backends!(
    bad_documents_are_refused_on_the_error_page,
    inner_addresses_are_never_fetched,
);

async fn bad_documents_are_refused_on_the_error_page(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let srv = db.start_with(&[SWITCH]);
    let docs = serve_documents().await;
    refused(
        &srv,
        &docs.url("/other.json"),
        REDIRECT,
        "its client_id is not exactly the URL it was fetched from",
    )
    .await;
    refused(
        &srv,
        &docs.url("/good.json"),
        "http://127.0.0.1:4711/elsewhere",
        "The redirect_uri is not one this application registered.",
    )
    .await;
    refused(
        &srv,
        &docs.url("/redirect.json"),
        REDIRECT,
        "answered with a redirect",
    )
    .await;
    refused(&srv, &docs.url("/big.json"), REDIRECT, "larger than 16 KiB").await;
    refused(
        &srv,
        &docs.url("/page.html"),
        REDIRECT,
        "not served as application/json",
    )
    .await;
    refused(
        &srv,
        &docs.url("/missing.json"),
        REDIRECT,
        "answered with an error status",
    )
    .await;
    refused(
        &srv,
        &format!("{}#frag", docs.url("/good.json")),
        REDIRECT,
        "The client_id URL is not acceptable",
    )
    .await;
    // A server that never answers is given up on at the 5 s deadline.
    let started = std::time::Instant::now();
    refused(
        &srv,
        &docs.url("/slow.json"),
        REDIRECT,
        "did not answer within 5 seconds",
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(9));
}

async fn inner_addresses_are_never_fetched(b: Backend) {
    let Some((_db, srv, _ann)) = world(b).await else {
        return;
    };
    let docs = serve_documents().await;
    // Without the test switch a loopback http document is not even a URL Quire fetches ...
    refused(
        &srv,
        &docs.url("/good.json"),
        REDIRECT,
        "it must be an https URL",
    )
    .await;
    // ... and https to an inner address is refused before any connection.
    for inner in [
        "https://127.0.0.1/client.json",
        "https://10.0.0.1/client.json",
        "https://169.254.169.254/latest/client.json",
        "https://[::1]/client.json",
        "https://localhost/client.json",
    ] {
        refused(
            &srv,
            inner,
            REDIRECT,
            "loopback, private, link-local or reserved",
        )
        .await;
    }
}

/// `openssl s_server` on a loopback port with a self-signed certificate, which no verifier
/// trusts; stopped when dropped.
struct Untrusted {
    child: Child,
    port: u16,
}

impl Drop for Untrusted {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn untrusted_tls(dir: &Path) -> Untrusted {
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "tls.key",
            "-out",
            "tls.pem",
        ])
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(made.status.success(), "{made:?}");
    // `-www` answers on its own, never reading standard input (whose end would close the
    // connection before the handshake).
    let mut child = Command::new("openssl")
        .args(["s_server", "-www", "-accept", "127.0.0.1:0"])
        .args(["-cert", "tls.pem", "-key", "tls.key"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run openssl s_server");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let port = loop {
        let line = lines
            .next()
            .expect("s_server says where it listens")
            .expect("read s_server");
        if let Some(address) = line.strip_prefix("ACCEPT ") {
            break address.rsplit_once(':').unwrap().1.parse().unwrap();
        }
    };
    // What it prints per connection is read and dropped, so it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Untrusted { child, port }
}

/// Anyone can make the server fetch from a host whose certificate it refuses: that is the
/// requester's doing, not the operator's alarm. The fetch fails on the error page, Quire's
/// own line says why at info, and nothing is logged as an ERROR (the TLS verifier's own line
/// is off, `telemetry.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(no_openssl, ignore = "needs the openssl command")]
async fn a_certificate_no_one_trusts_is_refused_without_an_error_line() {
    let db = TestDb::create(Backend::Sqlite).await.expect("SQLite");
    let srv = db.start_with(&[SWITCH]);
    let tls = untrusted_tls(db.dir.path());
    for path in ["/one.json", "/two.json"] {
        refused(
            &srv,
            &format!("https://127.0.0.1:{}{path}", tls.port),
            REDIRECT,
            "its host could not be resolved or reached",
        )
        .await;
    }
    let logs = srv.logs();
    let errors: Vec<&str> = logs
        .lines()
        .filter(|line| line.contains(r#""level":"ERROR""#))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let said = logs
        .lines()
        .filter(|line| {
            line.contains(r#""level":"INFO""#)
                && line.contains("client metadata document not fetched")
                && line.contains("certificate")
        })
        .count();
    assert_eq!(said, 2, "{logs}");
}
