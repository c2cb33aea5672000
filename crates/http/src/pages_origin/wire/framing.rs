//! Framing a request: where its head ends, its body's length, what it asks of the
//! connection, and its target's path and query; and what is refused while reading it.

use std::mem::MaybeUninit;

use super::message::Response;

/// The largest request head taken (431 past it): browsers' cookies fit many times over.
pub(super) const MAX_HEAD: usize = 32 * 1024;
pub(super) const MAX_HEADERS: usize = 64;
/// How a request is framed: where its head ends, its body's length, and what the client
/// asked of the connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Framing {
    pub head_len: usize,
    pub body_len: usize,
    pub keep_alive: bool,
    pub http10: bool,
    pub expect_continue: bool,
}

pub(super) fn head_too_large() -> Response {
    Response::refusal(
        431,
        "request_header_fields_too_large",
        "the request's head is too large",
    )
}

pub(super) fn bad_request(message: &str) -> Response {
    Response::refusal(400, "bad_request", message)
}

/// Whether `buf` already holds the whole head of a next (pipelined) request: then answers
/// are gathered and written together.
pub(super) fn pipelined(buf: &[u8]) -> bool {
    !buf.is_empty() && matches!(frame(buf), Ok(Some(_)))
}

/// Frames the request at the start of `buf`: `Ok(None)` while its head is incomplete.
pub(super) fn frame(buf: &[u8]) -> Result<Option<Framing>, Response> {
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
pub(super) fn split_target(target: &str) -> Option<(&str, &str)> {
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
}
