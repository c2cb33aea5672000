//! The pages origin's HTTP/1.1 server over real sockets, with a handler that echoes what it
//! was given: framing (keep-alive, pipelining, `HEAD`, bodies, `100 Continue`), what it
//! refuses, every deadline a client could otherwise hold open, the connection shares, and the
//! graceful stop; `workers.rs`: how connections are shared out among the workers, and the
//! workers bound to CPUs; `files.rs`: bodies sent from a file with `sendfile`; `heads.rs`:
//! the limits on a request's head, and the cookies of other hosts shed before them.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::net::{IpAddr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_wire::client_ip::TrustedProxies;
use quire_wire::limits::{ConnectionCounts, EdgeLimits};
use quire_wire::{self as wire, Handler, Request, Response, Running, WireLimits, Workers};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod files;
mod heads;
mod workers;

/// Answers `{method} {path}?{query} [{body}] headers={n}`; `/slow` after 400 ms; `/big`
/// with 8 MiB; `/file?{path}&{offset}&{length}` with that part of a file, by `sendfile`;
/// `/worker` with the name of the thread that serves it; `/cpus` with that name
/// and the CPUs the thread may run on, as the kernel lists them; `/cookies` with the length
/// of each `Cookie` line it was given. Its own cookies are those whose name starts `own`.
#[derive(Debug, Clone)]
struct Echo;

impl Handler for Echo {
    fn owns_cookie(&self, name: &[u8]) -> bool {
        name.starts_with(b"own")
    }

    async fn handle<'a>(&'a self, request: &'a Request<'a>) -> Response {
        if request.path == "/cookies" {
            let lengths: Vec<String> = request.all("cookie").map(|c| c.len().to_string()).collect();
            return Response::new(200).body(lengths.join(","));
        }
        if request.path == "/slow" {
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
        if request.path == "/big" {
            return Response::new(200).body(vec![b'x'; 8 << 20]);
        }
        if request.path == "/file" {
            return files::respond(request.query);
        }
        if request.path == "/worker" {
            let name = std::thread::current().name().unwrap_or_default().to_owned();
            return Response::new(200).body(name);
        }
        if request.path == "/cpus" {
            let name = std::thread::current().name().unwrap_or_default().to_owned();
            return Response::new(200).body(format!("{name} {}", cpus_allowed("thread-self")));
        }
        let text = format!(
            "{} {}?{} [{}] headers={}",
            request.method,
            request.path,
            request.query,
            String::from_utf8_lossy(request.body),
            request.headers.len()
        );
        Response::new(200)
            .header("content-type", "text/plain")
            .body(text)
    }
}

fn limits() -> WireLimits {
    WireLimits {
        header_timeout: Duration::from_millis(300),
        keep_alive: Duration::from_millis(500),
        max_connections: 64,
        max_body: 1024,
        edge: EdgeLimits {
            body_timeout: Duration::from_millis(300),
            body_min_rate: 1 << 30,
            max_body: 1024,
            per_client: 256,
        },
        shutdown_grace: Duration::from_secs(5),
    }
}

struct Served {
    addr: String,
    counts: Arc<ConnectionCounts>,
    running: Running,
}

fn serve(limits: WireLimits) -> Served {
    serve_on(1, limits)
}

fn serve_on(workers: usize, limits: WireLimits) -> Served {
    serve_from(&TcpListener::bind("127.0.0.1:0").unwrap(), workers, limits)
}

fn serve_from(listener: &TcpListener, workers: usize, limits: WireLimits) -> Served {
    serve_with(
        listener,
        Workers {
            count: workers,
            pinned: false,
        },
        limits,
    )
}

fn serve_with(listener: &TcpListener, workers: Workers, limits: WireLimits) -> Served {
    let addr = listener.local_addr().unwrap().to_string();
    let counts = Arc::new(ConnectionCounts::default());
    let running = wire::start(
        listener,
        workers,
        limits,
        &counts,
        &TrustedProxies::default(),
        &Echo,
    )
    .unwrap();
    Served {
        addr,
        counts,
        running,
    }
}

/// The kernel's list of the CPUs `task` (`self`, `thread-self`) may run on, as `0-1,4`.
fn cpus_allowed(task: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{task}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_owned()
}

/// Reads one answer: its head (lower-cased) and a body of its `content-length`.
async fn answer(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(String, String)> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .map_or(0, |n| n.parse().unwrap());
            while buf.len() < end + 4 + length {
                let mut chunk = [0_u8; 4096];
                let n = stream.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).into_owned();
            buf.drain(..end + 4 + length);
            return Some((head, body));
        }
        let mut chunk = [0_u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Waits for the server to close: `Some(elapsed)` if it did within `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut rest = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut rest))
        .await
        .ok()
        .map(|_| started.elapsed())
}

fn status(head: &str) -> u16 {
    head.split(' ').nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn keep_alive_pipelining_and_head() {
    let served = serve(limits());
    let mut stream = TcpStream::connect(&served.addr).await.unwrap();
    let mut buf = Vec::new();
    stream
        .write_all(b"GET /a?x=1 HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    let (head, body) = answer(&mut stream, &mut buf).await.unwrap();
    assert!(head.starts_with("http/1.1 200 ok\r\n"), "{head}");
    assert!(
        head.contains("\r\ndate: ") && !head.contains("connection: close"),
        "{head}"
    );
    assert_eq!(body, "GET /a?x=1 [] headers=1");

    // Three requests in one write: three answers, in order, on the same connection.
    stream
        .write_all(
            b"GET /1 HTTP/1.1\r\nHost: h\r\n\r\nHEAD /2 HTTP/1.1\r\nHost: h\r\nX-A: b\r\n\r\n\
              GET http://other.test/3?q HTTP/1.1\r\nHost: other.test\r\n\r\n",
        )
        .await
        .unwrap();
    let (_, first) = answer(&mut stream, &mut buf).await.unwrap();
    assert_eq!(first, "GET /1? [] headers=1");
    // HEAD: the length of what GET would send, and no body (the next answer follows).
    let end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let mut chunk = [0_u8; 4096];
        let n = stream.read(&mut chunk).await.unwrap();
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    assert!(head.contains("content-length: 21"), "{head}");
    buf.drain(..end + 4);
    let (_, third) = answer(&mut stream, &mut buf).await.unwrap();
    assert_eq!(
        third, "GET /3?q [] headers=1",
        "absolute-form gives its path"
    );

    // HTTP/1.0 closes unless asked to keep alive.
    let mut old = TcpStream::connect(&served.addr).await.unwrap();
    old.write_all(b"GET / HTTP/1.0\r\n\r\n").await.unwrap();
    let mut all = String::new();
    old.read_to_string(&mut all).await.unwrap();
    assert!(
        all.to_ascii_lowercase().contains("connection: close"),
        "{all}"
    );
    served.running.stop(Duration::ZERO).await;
}

#[tokio::test]
async fn bodies_by_length_with_continue_and_what_is_refused() {
    let served = serve(limits());
    let mut stream = TcpStream::connect(&served.addr).await.unwrap();
    let mut buf = Vec::new();
    stream
        .write_all(
            b"POST /form HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n",
        )
        .await
        .unwrap();
    let mut line = [0_u8; 25];
    stream.read_exact(&mut line).await.unwrap();
    assert_eq!(&line, b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(b"slug=a&pw=b").await.unwrap();
    let (_, body) = answer(&mut stream, &mut buf).await.unwrap();
    assert_eq!(body, "POST /form? [slug=a&pw=b] headers=3");

    for (request, expected) in [
        (
            &b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\n\r\n"[..],
            413,
        ),
        (
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
            411,
        ),
        (
            b"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\nx",
            400,
        ),
        (b"GARBAGE\r\n\r\n", 400),
        (b"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", 400),
    ] {
        let mut stream = TcpStream::connect(&served.addr).await.unwrap();
        stream.write_all(request).await.unwrap();
        let mut all = Vec::new();
        stream.read_to_end(&mut all).await.unwrap();
        let text = String::from_utf8_lossy(&all).to_ascii_lowercase();
        assert_eq!(status(&text), expected, "{text}");
        assert!(
            text.contains("connection: close") && text.contains("\"error\""),
            "{text}"
        );
    }

    served.running.stop(Duration::ZERO).await;
}

/// Sends `request` on a new connection and reads until the server closes or one answer is
/// whole: the status and the body.
async fn one(addr: &str, request: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let _ = stream.write_all(request).await;
    let mut buf = Vec::new();
    let (head, body) = answer(&mut stream, &mut buf).await.unwrap();
    (status(&head), body)
}

fn get_with(lines: &[String]) -> Vec<u8> {
    let mut request = b"GET /cookies HTTP/1.1\r\nHost: h\r\n".to_vec();
    for line in lines {
        request.extend_from_slice(line.as_bytes());
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"\r\n");
    request
}

#[tokio::test]
async fn every_wait_has_a_deadline() {
    let served = serve(limits());
    // A head that never ends: 408 at the header timeout (300 ms), then closed.
    let mut stream = TcpStream::connect(&served.addr).await.unwrap();
    stream.write_all(b"GET / HTTP/1.1\r\nHost").await.unwrap();
    let started = Instant::now();
    let mut all = Vec::new();
    stream.read_to_end(&mut all).await.unwrap();
    assert_eq!(status(&String::from_utf8_lossy(&all)), 408);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    // A body that never ends: 408 at the body deadline.
    let mut stream = TcpStream::connect(&served.addr).await.unwrap();
    stream
        .write_all(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
        .await
        .unwrap();
    let mut all = Vec::new();
    stream.read_to_end(&mut all).await.unwrap();
    let text = String::from_utf8_lossy(&all);
    assert_eq!(status(&text), 408, "{text}");
    assert!(text.contains("request_timeout"), "{text}");

    // A connection that says nothing, and one idle after an answer: closed silently.
    let mut silent = TcpStream::connect(&served.addr).await.unwrap();
    assert!(
        closed_within(&mut silent, Duration::from_secs(2))
            .await
            .is_some()
    );
    let mut idle = TcpStream::connect(&served.addr).await.unwrap();
    let mut buf = Vec::new();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    answer(&mut idle, &mut buf).await.unwrap();
    let after = closed_within(&mut idle, Duration::from_secs(3))
        .await
        .unwrap();
    assert!(after >= Duration::from_millis(400), "kept alive {after:?}");

    // A client that asks for 8 MiB and never reads: dropped at the write deadline, and its
    // place comes back.
    let mut stuck = TcpStream::connect(&served.addr).await.unwrap();
    stuck
        .write_all(b"GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    let local: IpAddr = "127.0.0.1".parse().unwrap();
    let started = Instant::now();
    while served.counts.of(local) > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "a client that does not read holds its connection"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    served.running.stop(Duration::ZERO).await;
}

#[tokio::test]
async fn shares_and_the_connection_budget() {
    let mut few = limits();
    few.edge.per_client = 2;
    let served = serve(few);
    let open = |n, addr: String| async move {
        let mut held = Vec::new();
        for _ in 0..n {
            held.push(TcpStream::connect(&addr).await.unwrap());
        }
        held
    };
    // A third connection from one address is over its share: 503 and closed.
    let mut held = open(3, served.addr.clone()).await;
    let mut buf = Vec::new();
    for stream in &mut held[..2] {
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
            .await
            .unwrap();
        let (head, _) = answer(stream, &mut buf).await.unwrap();
        assert_eq!(status(&head), 200);
    }
    held[2]
        .write_all(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    let mut all = Vec::new();
    held[2].read_to_end(&mut all).await.unwrap();
    let text = String::from_utf8_lossy(&all);
    assert_eq!(status(&text), 503, "{text}");
    assert!(text.contains("too_many_connections"), "{text}");
    drop(held);
    served.running.stop(Duration::ZERO).await;

    // The worker holds 3 connections at most: a fourth waits until one closes.
    let mut few = limits();
    few.max_connections = 3;
    let served = serve(few);
    let held = open(2, served.addr.clone()).await;
    let mut extra = open(2, served.addr.clone()).await;
    let waiting = &mut extra[1];
    waiting
        .write_all(b"GET /w HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    let mut wait_buf = Vec::new();
    let early =
        tokio::time::timeout(Duration::from_millis(200), answer(waiting, &mut wait_buf)).await;
    assert!(early.is_err(), "answered past the connection budget");
    drop(held);
    let (head, body) = tokio::time::timeout(Duration::from_secs(2), answer(waiting, &mut wait_buf))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status(&head), 200);
    assert_eq!(body, "GET /w? [] headers=1");
    served.running.stop(Duration::ZERO).await;
}

#[tokio::test]
async fn a_stop_lets_the_request_in_flight_finish_and_closes_the_idle() {
    let served = serve(limits());
    let mut idle = TcpStream::connect(&served.addr).await.unwrap();
    let mut buf = Vec::new();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    answer(&mut idle, &mut buf).await.unwrap();
    let mut busy = TcpStream::connect(&served.addr).await.unwrap();
    busy.write_all(b"GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stopping = tokio::spawn(served.running.stop(Duration::from_secs(5)));
    let mut all = Vec::new();
    busy.read_to_end(&mut all).await.unwrap();
    let text = String::from_utf8_lossy(&all).to_ascii_lowercase();
    assert_eq!(status(&text), 200, "{text}");
    assert!(
        text.contains("connection: close") && text.ends_with("get /slow? [] headers=1"),
        "{text}"
    );
    assert!(
        closed_within(&mut idle, Duration::from_secs(1))
            .await
            .is_some()
    );
    tokio::time::timeout(Duration::from_secs(3), stopping)
        .await
        .unwrap()
        .unwrap();
    assert!(
        TcpStream::connect(&served.addr).await.is_err(),
        "still accepting"
    );
}
