//! Slow clients: request bodies sent a few bytes at a time cannot hold the server's files or
//! connections; each gets its deadline, and the service answers others throughout.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::{Backend, TestDb, on_both_backends};

/// A connection from another loopback address (127.0.0.2) that sends the headers of a post
/// with a 60,000-byte body, then three bytes of it, and nothing more.
async fn slow_body(addr: &str, path: &str) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
    let mut stream = socket.connect(addr.parse().unwrap()).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: 60000\r\n\r\nabc"
    );
    let _ = stream.write_all(head.as_bytes()).await;
    stream
}

/// Slow request bodies cannot stop the service: a server with 256 open files gets 400
/// connections that each declare a body and send three bytes of it. Each address holds at
/// most its share; the rest are answered at once; the slow ones are closed at their
/// deadline; `/healthz` and a publish keep answering throughout.
async fn slow_bodies_cannot_stop_the_service(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let srv = db.start_via(
        &["prlimit", "--nofile=256:256", "--"],
        &[
            ("QUIRE_BODY_TIMEOUT_SECS", "2"),
            ("QUIRE_MAX_CONNECTIONS_PER_CLIENT", "40"),
        ],
    );
    let mut slow = Vec::new();
    for i in 0..400 {
        let (addr, path) = match i % 3 {
            0 => (&srv.addr, "/login"),
            1 => (&srv.addr, "/api/agent-login/token"),
            _ => (&srv.pages_addr, "/-/unlock"),
        };
        slow.push(tokio::spawn(slow_body_until_closed(addr.clone(), path)));
        if i % 100 == 99 {
            // The service answers while they are open.
            let r = srv.call("GET", "/healthz", None, None).await;
            r.assert_status(200);
        }
    }
    let started = std::time::Instant::now();
    let r = srv
        .post(
            "/api/page/v1/pages",
            &ann.key,
            json!({"title": "Still here", "files": [{"path": "index.html", "content": "<p>up</p>"}]}),
        )
        .await;
    r.assert_status(201);
    let (mut refused, mut timed_out, mut other) = (0, 0, Vec::new());
    for task in slow {
        let (status, closed_after) = task.await.unwrap();
        match status {
            // Over the client's share; or, on a route whose body limit is below the declared
            // length, refused before any of the body is waited for.
            503 | 413 => refused += 1,
            408 => {
                timed_out += 1;
                assert!(
                    closed_after < Duration::from_secs(10),
                    "closed after {closed_after:?}"
                );
            }
            s => other.push(s),
        }
    }
    assert!(other.is_empty(), "unexpected answers: {other:?}");
    // About one share (40) is held until its deadline; a few fewer when a connection that
    // was just answered 413 still held its slot as a slow one arrived (seen: 35 and 39 on a
    // loaded machine). What matters is that most of the share was held and timed out, and
    // that everything past it was refused at once.
    assert!(
        timed_out >= 30 && refused >= 200 && timed_out + refused == 400,
        "408: {timed_out}, refused: {refused}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    srv.call("GET", "/healthz", None, None)
        .await
        .assert_status(200);
    let logs = srv.logs();
    assert!(!logs.contains("Too many open files"), "{logs}");
}

/// Opens a slow body and waits (at most 30 s) until the server answers and closes; returns
/// the status it answered and when the connection ended.
async fn slow_body_until_closed(addr: String, path: &str) -> (u16, Duration) {
    let opened = std::time::Instant::now();
    let mut stream = slow_body(&addr, path).await;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "{path}: the server never closed a slow body");
    let text = String::from_utf8_lossy(&answer);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, opened.elapsed())
}

on_both_backends!(slow_bodies_cannot_stop_the_service);
