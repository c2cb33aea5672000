//! A request's head: its one `Host`, and its limits (header lines and bytes), judged after
//! the cookies that are not the origin's own are shed.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{get_with, limits, one, serve, status};

/// Up to 100 header lines and 64 KiB of head are taken; cookies that are not the handler's
/// own are shed before either is judged, however many a browser sends; past that, 431.
#[tokio::test]
async fn header_limits_count_only_the_origins_own_cookies() {
    let served = serve(limits());
    let addr = served.addr.as_str();
    // 100 header lines (with Host), and a head of 64 KiB.
    let lines: Vec<String> = (0..99).map(|i| format!("X-{i}: {i}")).collect();
    let (code, body) = one(addr, &get_with(&lines)).await;
    assert_eq!((code, body.as_str()), (200, ""));
    let lines: Vec<String> = (0..100).map(|i| format!("X-{i}: {i}")).collect();
    assert_eq!(one(addr, &get_with(&lines)).await.0, 431, "101 lines");
    let head_of = |n: usize| {
        let padding = n - get_with(&["X-Pad: ".into()]).len();
        get_with(&[format!("X-Pad: {}", "p".repeat(padding))])
    };
    assert_eq!(head_of(64 * 1024).len(), 64 * 1024);
    assert_eq!(one(addr, &head_of(64 * 1024)).await.0, 200);
    assert_eq!(one(addr, &head_of(64 * 1024 + 1)).await.0, 431);

    // 40 KiB of other hosts' cookies beside 60 KiB of other headers; then 1 MiB of them
    // in one line, and in 300 lines: shed, and the origin's own cookie arrives whole.
    let foreign = |n: usize| {
        (0..n)
            .map(|i| format!("bomb{i}={}", "b".repeat(4000)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let own = "own_site=signed.value";
    let (code, body) = one(
        addr,
        &get_with(&[
            format!("X-Pad: {}", "p".repeat(60 * 1024)),
            format!("Cookie: {}; {own}", foreign(10)),
        ]),
    )
    .await;
    // Cookies are shed only while the head is over a limit, as its bytes arrive: how many
    // foreign ones remain depends on how the reads fall (framing's unit tests pin down
    // what is kept); what reaches the handler is within the limits and holds its own.
    let within = |body: &str| {
        let n: usize = body.parse().unwrap();
        (own.len()..64 * 1024).contains(&n)
    };
    assert_eq!(code, 200);
    assert!(within(&body), "{body}");
    let (code, body) = one(
        addr,
        &get_with(&[format!("Cookie: {own}; {}", foreign(256))]),
    )
    .await;
    assert_eq!(code, 200);
    assert!(within(&body), "{body}");
    let mut lines: Vec<String> = (0..300)
        .map(|_| format!("Cookie: {}", foreign(1)))
        .collect();
    lines.push(format!("Cookie: {own}"));
    let (code, body) = one(addr, &get_with(&lines)).await;
    // Shed only while over a limit: a few may remain, well within them.
    assert_eq!(code, 200);
    assert_eq!(
        body.rsplit(',').next(),
        Some(own.len().to_string().as_str())
    );
    assert!(body.split(',').count() < 20, "{body}");

    // The origin's own cookies count: past 64 KiB, 431.
    let (code, _) = one(
        addr,
        &get_with(&[format!("Cookie: own_big={}", "o".repeat(64 * 1024))]),
    )
    .await;
    assert_eq!(code, 431);
    served.running.stop(Duration::ZERO).await;
}

/// RFC 9112 §3.2: a request with no Host, with two, or with a Host that is not a host name,
/// is 400 (the origin chooses an owner by Host); §3.2.2: an absolute-form target's host
/// wins, and one that another Host contradicts is refused too.
#[tokio::test]
async fn one_host_and_only_one() {
    let served = serve(limits());
    for request in [
        &b"GET / HTTP/1.1\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: ann.localhost\r\nHost: bob.localhost\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: ann.localhost bob.localhost\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: ann@bob.localhost\r\n\r\n",
        b"GET http://bob.localhost/x HTTP/1.1\r\nHost: ann.localhost\r\n\r\n",
        b"GET http://bob.localhost/x HTTP/1.1\r\n\r\n",
    ] {
        let mut stream = TcpStream::connect(&served.addr).await.unwrap();
        stream.write_all(request).await.unwrap();
        let mut all = Vec::new();
        stream.read_to_end(&mut all).await.unwrap();
        let text = String::from_utf8_lossy(&all).to_ascii_lowercase();
        assert_eq!(status(&text), 400, "{}", String::from_utf8_lossy(request));
        assert!(text.contains("connection: close"), "{text}");
    }
    assert_eq!(
        one(
            &served.addr,
            b"GET http://Ann.localhost:8/x HTTP/1.1\r\nHost: ann.localhost:8\r\n\r\n"
        )
        .await,
        (200, "GET /x? [] headers=1".into())
    );
    served.running.stop(Duration::ZERO).await;
}
