//! Writing answers: the head of each (with `Content-Length`, `Date` and `Connection`), its
//! body copied after it when small or sent beside it when large, and `writev` until all is
//! sent.

use std::io::IoSlice;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::date;
use super::message::{Response, reason};

/// A body up to this size is copied after its head; a larger one is sent beside it in the
/// same `writev`, without a copy.
pub(super) const INLINE_BODY: usize = 1024;
/// Writes `head` then `body`, both in each `writev` until all is sent.
pub(super) async fn write_both(
    stream: &mut TcpStream,
    head: &[u8],
    body: &[u8],
) -> std::io::Result<()> {
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

/// Appends `response` to `out`: its head, and its body when small. Returns a large body to
/// write after `out`. An answer whose header value would break the head is replaced by a
/// 500.
pub(super) fn write_answer(
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
        let text = value.as_str();
        if value.made_at_run_time() && text.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return false;
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(text.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if has_body(status) {
        out.extend_from_slice(b"content-length: ");
        out.extend_from_slice(number.format(response.body_length()).as_bytes());
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
