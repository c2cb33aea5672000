//! One client's connection: its requests read, answered and written in turn (pipelined
//! requests too), under the deadlines of [`WireLimits`].

use std::borrow::Cow;
use std::cell::Cell;
use std::io::IoSlice;
use std::mem::MaybeUninit;
use std::net::IpAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep, timeout_at};

use super::message::{Request, Response, reason};
use super::server::WireLimits;
use super::{Handler, date};

/// The largest request head taken (431 past it): browsers' cookies fit many times over.
const MAX_HEAD: usize = 32 * 1024;
const MAX_HEADERS: usize = 64;
/// A body up to this size is copied after its head; a larger one is sent beside it in the
/// same `writev`, without a copy.
const INLINE_BODY: usize = 1024;
/// Pipelined answers are gathered up to this size before they are written.
const GATHER: usize = 64 * 1024;
/// After answering with a close, what the client still sends is read and dropped for this
/// long: closing on unread data makes the kernel send a reset, which can destroy the answer
/// before the client has read it.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 64 * 1024;

/// How a request is framed: where its head ends, its body's length, and what the client
/// asked of the connection.
#[derive(Debug, Clone, Copy)]
struct Framing {
    head_len: usize,
    body_len: usize,
    keep_alive: bool,
    http10: bool,
    expect_continue: bool,
}

/// What waiting for a request gave.
enum Next {
    Request(Framing),
    /// The client closed, went idle past the keep-alive, or the server is stopping.
    Closed,
    Refuse(Response),
}

/// A connection's state between requests.
pub(super) struct Connection<H> {
    pub stream: TcpStream,
    pub peer: IpAddr,
    /// The client already held its share of connections when this one opened.
    pub over_share: bool,
    pub handler: H,
    pub limits: Arc<WireLimits>,
    /// The worker is stopping: answer what is in flight, then close.
    pub stopping: Rc<Cell<bool>>,
    /// Set while waiting for a request with nothing of it received: the worker closes such
    /// connections at once when it stops (by aborting their task).
    pub idle: Rc<Cell<bool>>,
    pub accepted: Instant,
    /// The deadline of the wait for a request. One timer for the connection's life: moving
    /// it later, as each keep-alive wait does, costs no work in the timer wheel.
    pub wait: Pin<Box<Sleep>>,
}

impl<H: Handler> Connection<H> {
    /// Serves requests until the client closes, a deadline passes or the server stops.
    pub(super) async fn serve(mut self) {
        let mut buf = BytesMut::with_capacity(4096);
        let mut out: Vec<u8> = Vec::with_capacity(4096);
        let mut first = true;
        loop {
            let framing = match self.next_head(&mut buf, first).await {
                Next::Request(framing) => framing,
                Next::Closed => return,
                Next::Refuse(response) => return self.refuse(&mut out, &response).await,
            };
            first = false;
            if self.over_share {
                let response = Response::refusal(
                    503,
                    "too_many_connections",
                    "too many connections from your address; close some and try again",
                );
                return self.refuse(&mut out, &response).await;
            }
            if framing.body_len > self.limits.max_body {
                let response = Response::refusal(
                    413,
                    "payload_too_large",
                    "the request body is larger than this origin takes",
                );
                return self.refuse(&mut out, &response).await;
            }
            let total = framing.head_len + framing.body_len;
            if buf.len() < total {
                match self.read_body(&mut buf, framing, total).await {
                    Ok(()) => {}
                    Err(Some(response)) => return self.refuse(&mut out, &response).await,
                    Err(None) => return,
                }
            }
            let (response, is_head) = self.answer(&buf[..total], framing.head_len).await;
            buf.advance(total);
            let keep_alive = framing.keep_alive && !response.closes() && !self.stopping.get();
            let large = write_answer(&mut out, &response, is_head, keep_alive, framing.http10);
            let more = keep_alive && large.is_none() && pipelined(&buf);
            if !more || out.len() >= GATHER {
                if self.write_out(&out, large.as_deref()).await.is_err() {
                    return;
                }
                out.clear();
            }
            if !keep_alive {
                return self.linger().await;
            }
        }
    }

    /// Waits for a complete request head. The first request's head must arrive within the
    /// header timeout of the accept; later ones within it of their first byte, after at most
    /// the keep-alive of idleness.
    async fn next_head(&mut self, buf: &mut BytesMut, first: bool) -> Next {
        let (header_timeout, keep_alive) = (self.limits.header_timeout, self.limits.keep_alive);
        let mut deadline = first.then(|| self.accepted + header_timeout);
        loop {
            if !buf.is_empty() {
                match frame(buf) {
                    Ok(Some(framing)) if framing.head_len <= MAX_HEAD => {
                        return Next::Request(framing);
                    }
                    Ok(Some(_)) => return Next::Refuse(head_too_large()),
                    Ok(None) if buf.len() > MAX_HEAD => return Next::Refuse(head_too_large()),
                    Ok(None) => {}
                    Err(response) => return Next::Refuse(response),
                }
                deadline.get_or_insert_with(|| Instant::now() + header_timeout);
            } else if self.stopping.get() {
                return Next::Closed;
            }
            let until = deadline.unwrap_or_else(|| Instant::now() + keep_alive);
            if buf.capacity() - buf.len() < 1024 {
                buf.reserve(4096);
            }
            self.idle.set(buf.is_empty());
            self.wait.as_mut().reset(until);
            let read = tokio::select! {
                biased;
                read = self.stream.read_buf(buf) => Some(read),
                () = self.wait.as_mut() => None,
            };
            self.idle.set(false);
            match read {
                None if buf.is_empty() => return Next::Closed,
                None => {
                    return Next::Refuse(Response::refusal(
                        408,
                        "request_timeout",
                        "the request's head did not arrive in time",
                    ));
                }
                Some(Ok(0) | Err(_)) => return Next::Closed,
                Some(Ok(_)) => {}
            }
        }
    }

    /// Reads the rest of a body of declared length by the edge's body deadline. `Err(None)`:
    /// the client went away; `Err(Some(_))`: the answer to give before closing.
    async fn read_body(
        &mut self,
        buf: &mut BytesMut,
        framing: Framing,
        total: usize,
    ) -> Result<(), Option<Response>> {
        let length = u64::try_from(framing.body_len).unwrap_or(u64::MAX);
        let allowed = self.limits.edge.body_deadline(Some(length));
        let deadline = Instant::now() + allowed;
        if framing.expect_continue {
            let sent = timeout_at(
                deadline,
                self.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n"),
            )
            .await;
            if !matches!(sent, Ok(Ok(()))) {
                return Err(None);
            }
        }
        buf.reserve(total - buf.len());
        while buf.len() < total {
            match timeout_at(deadline, self.stream.read_buf(buf)).await {
                Err(_) => {
                    let secs = allowed.as_secs();
                    tracing::info!(deadline_secs = secs, "request body not received in time");
                    return Err(Some(Response::refusal(
                        408,
                        "request_timeout",
                        &format!("the request body did not arrive within {secs} s"),
                    )));
                }
                Ok(Ok(0) | Err(_)) => return Err(None),
                Ok(Ok(_)) => {}
            }
        }
        Ok(())
    }

    /// The handler's answer to the request in `message` (its head, then its body).
    async fn answer(&self, message: &[u8], head_len: usize) -> (Response, bool) {
        let mut parsed = [const { MaybeUninit::uninit() }; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut []);
        // The head parsed whole when it was framed; it parses the same again.
        if !matches!(
            request.parse_with_uninit_headers(&message[..head_len], &mut parsed),
            Ok(httparse::Status::Complete(_))
        ) {
            return (bad_request("the request could not be read"), false);
        }
        let method = request.method.unwrap_or("");
        let Some((path, query)) = split_target(request.path.unwrap_or("")) else {
            return (bad_request("the request's target is not a path"), false);
        };
        let request = Request {
            method,
            path,
            query,
            headers: request.headers,
            peer: self.peer,
            body: &message[head_len..],
        };
        (self.handler.handle(&request).await, method == "HEAD")
    }

    /// Writes the gathered answers, then a large body that follows them, by the edge's
    /// deadline for that many bytes: a client that does not read cannot hold the
    /// connection for ever.
    async fn write_out(&mut self, out: &[u8], large: Option<&[u8]>) -> Result<(), ()> {
        let (mut out, mut large) = (out, large.unwrap_or_default());
        // Most answers fit the socket's buffer at once: then no deadline needs arming.
        match self
            .stream
            .try_write_vectored(&[IoSlice::new(out), IoSlice::new(large)])
        {
            Ok(sent) if sent == out.len() + large.len() => return Ok(()),
            Ok(sent) => {
                let of_out = sent.min(out.len());
                out = &out[of_out..];
                large = &large[sent - of_out..];
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return Err(()),
        }
        let bytes = out.len() + large.len();
        let allowed = self
            .limits
            .edge
            .body_deadline(Some(u64::try_from(bytes).unwrap_or(u64::MAX)));
        let deadline = Instant::now() + allowed;
        let write = write_both(&mut self.stream, out, large);
        match timeout_at(deadline, write).await {
            Ok(Ok(())) => Ok(()),
            _ => Err(()),
        }
    }

    /// Answers with a refusal of the server's own and closes.
    async fn refuse(mut self, out: &mut Vec<u8>, response: &Response) {
        out.clear();
        let large = write_answer(out, response, false, false, false);
        if self.write_out(out, large.as_deref()).await.is_ok() {
            self.linger().await;
        }
    }

    /// Closes after an answer: sends FIN, then reads and drops what the client still sends
    /// for a moment (see [`LINGER`]).
    async fn linger(mut self) {
        if self.stream.shutdown().await.is_err() {
            return;
        }
        let deadline = Instant::now() + LINGER;
        let mut sink = [0_u8; 4096];
        let mut left = LINGER_BYTES;
        while left > 0 {
            match timeout_at(deadline, self.stream.read(&mut sink)).await {
                Ok(Ok(n)) if n > 0 => left = left.saturating_sub(n),
                _ => return,
            }
        }
    }
}

/// Writes `head` then `body`, both in each `writev` until all is sent.
async fn write_both(stream: &mut TcpStream, head: &[u8], body: &[u8]) -> std::io::Result<()> {
    let (mut head, mut body) = (head, body);
    while !head.is_empty() || !body.is_empty() {
        let sent = stream
            .write_vectored(&[IoSlice::new(head), IoSlice::new(body)])
            .await?;
        if sent == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        let of_head = sent.min(head.len());
        head = &head[of_head..];
        body = &body[sent - of_head..];
    }
    Ok(())
}

fn head_too_large() -> Response {
    Response::refusal(
        431,
        "request_header_fields_too_large",
        "the request's head is too large",
    )
}

fn bad_request(message: &str) -> Response {
    Response::refusal(400, "bad_request", message)
}

/// Whether `buf` already holds the whole head of a next (pipelined) request: then answers
/// are gathered and written together.
fn pipelined(buf: &[u8]) -> bool {
    !buf.is_empty() && matches!(frame(buf), Ok(Some(_)))
}

/// Frames the request at the start of `buf`: `Ok(None)` while its head is incomplete.
fn frame(buf: &[u8]) -> Result<Option<Framing>, Response> {
    let mut parsed = [const { MaybeUninit::uninit() }; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut []);
    let head_len = match request.parse_with_uninit_headers(buf, &mut parsed) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(Response::refusal(
                431,
                "request_header_fields_too_large",
                "the request has too many headers",
            ));
        }
        Err(_) => return Err(bad_request("the request could not be read")),
    };
    let http10 = request.version == Some(0);
    let mut framing = Framing {
        head_len,
        body_len: 0,
        keep_alive: !http10,
        http10,
        expect_continue: false,
    };
    let (mut length, mut transfer_encoding) = (None::<usize>, false);
    for header in request.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("content-length") {
            let Some(n) = content_length(header.value) else {
                return Err(bad_request("the request's Content-Length is not a number"));
            };
            if length.is_some_and(|l| l != n) {
                return Err(bad_request("the request has two Content-Lengths"));
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            transfer_encoding = true;
        } else if name.eq_ignore_ascii_case("connection") {
            for token in header.value.split(|b| *b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    framing.keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    framing.keep_alive = true;
                }
            }
        } else if name.eq_ignore_ascii_case("expect") {
            framing.expect_continue = header
                .value
                .trim_ascii()
                .eq_ignore_ascii_case(b"100-continue");
        }
    }
    if transfer_encoding {
        // Both framings at once is how requests are smuggled past a proxy; a body of
        // unknown length is never needed here (the password form has a length).
        return Err(if length.is_some() {
            bad_request("the request has both Content-Length and Transfer-Encoding")
        } else {
            Response::refusal(
                411,
                "length_required",
                "request bodies need a Content-Length here",
            )
        });
    }
    framing.body_len = length.unwrap_or(0);
    Ok(Some(framing))
}

fn content_length(value: &[u8]) -> Option<usize> {
    let digits = value.trim_ascii();
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The path and query of a request target: origin-form (`/path?query`), or absolute-form
/// (`http://host/path?query`, which clients send to proxies). `None` for anything else.
fn split_target(target: &str) -> Option<(&str, &str)> {
    let rest = if target.starts_with('/') {
        target
    } else {
        let scheme_end = target.find("://")?;
        let scheme = &target[..scheme_end];
        if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
            return None;
        }
        let after = &target[scheme_end + 3..];
        match after.find(['/', '?']) {
            Some(i) if after.as_bytes()[i] == b'/' => &after[i..],
            Some(i) => return Some(("/", &after[i + 1..])),
            None => "/",
        }
    };
    Some(rest.split_once('?').unwrap_or((rest, "")))
}

/// Appends `response` to `out`: its head, and its body when small. Returns a large body to
/// write after `out`. An answer whose header value would break the head is replaced by a
/// 500.
fn write_answer(
    out: &mut Vec<u8>,
    response: &Response,
    is_head: bool,
    keep_alive: bool,
    http10: bool,
) -> Option<bytes::Bytes> {
    let start = out.len();
    if !write_head(out, response, keep_alive, http10) {
        out.truncate(start);
        tracing::error!(
            status = response.status(),
            "an answer's header held a line break"
        );
        let failed = Response::new(500)
            .header("content-type", "text/plain; charset=utf-8")
            .header("cache-control", "private, no-store")
            .body("Internal error");
        return write_answer(out, &failed, is_head, keep_alive, http10);
    }
    let body = response.body_bytes();
    if is_head || !has_body(response.status()) {
        None
    } else if body.len() <= INLINE_BODY {
        out.extend_from_slice(body);
        None
    } else {
        Some(body.clone())
    }
}

/// 1xx, 204 and 304 answers have no body, nor a length.
fn has_body(status: u16) -> bool {
    !(status < 200 || status == 204 || status == 304)
}

fn write_head(out: &mut Vec<u8>, response: &Response, keep_alive: bool, http10: bool) -> bool {
    let status = response.status();
    let mut number = itoa::Buffer::new();
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(number.format(status).as_bytes());
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\n");
    for (name, value) in response.headers() {
        // Constants are this crate's own; a value made at run time may carry what a client
        // or an owner wrote.
        if let Cow::Owned(text) = value
            && text.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f)
        {
            return false;
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if has_body(status) {
        out.extend_from_slice(b"content-length: ");
        out.extend_from_slice(number.format(response.body_bytes().len()).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"date: ");
    date::append(out);
    out.extend_from_slice(b"\r\n");
    if !keep_alive {
        out.extend_from_slice(b"connection: close\r\n");
    } else if http10 {
        out.extend_from_slice(b"connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"\r\n");
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_give_their_raw_path_and_query() {
        assert_eq!(split_target("/a/b%2F?x=1&y"), Some(("/a/b%2F", "x=1&y")));
        assert_eq!(split_target("/"), Some(("/", "")));
        assert_eq!(split_target("http://evil.test/ann/x"), Some(("/ann/x", "")));
        assert_eq!(split_target("HTTPS://h?q=1"), Some(("/", "q=1")));
        assert_eq!(split_target("http://h"), Some(("/", "")));
        assert_eq!(split_target("*"), None);
        assert_eq!(split_target("ftp://h/x"), None);
        assert_eq!(split_target("a/b"), None);
    }

    #[test]
    fn framing_reads_length_connection_and_expect() {
        let f = frame(b"POST /-/unlock HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\nExpect: 100-continue\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(
            (f.body_len, f.keep_alive, f.expect_continue),
            (12, true, true)
        );
        let f = frame(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(f.keep_alive && f.http10);
        let f = frame(b"GET / HTTP/1.0\r\n\r\n").unwrap().unwrap();
        assert!(!f.keep_alive);
        let f = frame(b"GET / HTTP/1.1\r\nConnection: upgrade, close\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(!f.keep_alive);
        assert!(frame(b"GET / HTTP/1.1\r\nHost: h\r\n").unwrap().is_none());
    }

    #[test]
    fn ambiguous_or_unknown_lengths_are_refused() {
        let status = |head: &[u8]| frame(head).err().map(|r| r.status());
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Some(411)
        );
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Some(400)
        );
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n"),
            Some(400)
        );
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n"),
            Some(400)
        );
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n"),
            None
        );
        assert_eq!(status(b"GET /\x01 HTTP/1.1\r\n\r\n"), Some(400));
    }

    #[test]
    fn heads_carry_length_date_and_close_and_refuse_line_breaks() {
        let mut out = Vec::new();
        let ok = Response::new(200)
            .header("content-type", "text/html")
            .body("hello");
        assert!(write_answer(&mut out, &ok, false, false, false).is_none());
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(
            text.starts_with(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 5\r\ndate: "
            ),
            "{text}"
        );
        assert!(text.ends_with("connection: close\r\n\r\nhello"), "{text}");

        out.clear();
        write_answer(&mut out, &ok, true, true, true);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(
            text.contains("content-length: 5\r\n")
                && text.ends_with("connection: keep-alive\r\n\r\n"),
            "HEAD: {text}"
        );

        out.clear();
        write_answer(
            &mut out,
            &Response::new(304).header("etag", "\"x\""),
            false,
            true,
            false,
        );
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(!text.contains("content-length"), "{text}");

        out.clear();
        let injected = Response::new(302).header("location", String::from("/a\r\nset-cookie: x=1"));
        write_answer(&mut out, &injected, false, true, false);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(
            text.starts_with("HTTP/1.1 500 ") && !text.contains("set-cookie"),
            "{text}"
        );

        out.clear();
        let big = Response::new(200).body(vec![b'x'; INLINE_BODY + 1]);
        let rest = write_answer(&mut out, &big, false, true, false).unwrap();
        assert_eq!(rest.len(), INLINE_BODY + 1);
        assert!(out.ends_with(b"\r\n\r\n"));
    }
}
