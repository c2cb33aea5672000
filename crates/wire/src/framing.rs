//! Framing a request: where its head ends, its body's length, what it asks of the
//! connection, and its target's path and query; and what is refused while reading it.

use std::mem::MaybeUninit;

use bytes::BytesMut;

use super::message::Response;

/// The largest request head taken (431 past it), once the cookies that are not the
/// handler's own are shed ([`shed_cookies`]); the API listener takes as much.
pub(super) const MAX_HEAD: usize = 64 * 1024;
/// The most header lines taken (431 past it), once cookie lines of only other hosts'
/// cookies are shed: proxies and CDNs add many to a browser's 15-25.
pub(super) const MAX_HEADERS: usize = 100;
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
    let (mut hosts, mut host_valid) = (0_usize, true);
    for header in request.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("host") {
            hosts += 1;
            host_valid &= valid_host(header.value);
        } else if name.eq_ignore_ascii_case("content-length") {
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
    // RFC 9112 §3.2: exactly one valid Host (HTTP/1.0 may omit it). The origin chooses the
    // owner by Host, so a proxy that read another of two would route to someone else.
    if hosts > 1 || !host_valid || (hosts == 0 && !http10) {
        return Err(bad_request(
            "the request needs exactly one Host header with a host name",
        ));
    }
    framing.body_len = length.unwrap_or(0);
    Ok(Some(framing))
}

/// Whether a Host value is `uri-host [":" port]` (RFC 9112 §3.2, RFC 3986 §3.2.2): the
/// characters of a registered name, an IP literal or a port, and nothing else (no space,
/// `@`, `/`, ...). Empty is valid: the target had no authority.
fn valid_host(value: &[u8]) -> bool {
    value.iter().all(|&b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'%'
                    | b':'
                    | b'['
                    | b']'
            )
    })
}

/// Sheds, in place, the cookies of the head at the start of `buf` whose name `keep` refuses,
/// before the head's size and header count are checked again: on a pages domain outside
/// the Public Suffix List a sibling host can set cookies for the whole domain, and their
/// bytes would otherwise refuse every owner's pages to that visitor (431). A `Cookie` line
/// left empty goes; a last line still arriving keeps its unfinished cookie. Returns whether
/// any byte went.
pub(super) fn shed_cookies(buf: &mut BytesMut, keep: impl Fn(&[u8]) -> bool) -> bool {
    let data: &mut [u8] = buf;
    let n = data.len();
    // Past the request line; its own length is the handler's limit to judge.
    let Some(first) = memchr::memchr(b'\n', data) else {
        return false;
    };
    let (mut read, mut write) = (first + 1, first + 1);
    while read < n {
        let newline = memchr::memchr(b'\n', &data[read..]).map(|i| read + i);
        let end = newline.map_or(n, |i| i + 1);
        let line = &data[read..end];
        if newline.is_some() && (line == b"\r\n" || line == b"\n") {
            // The head's end: what follows is left as it is.
            data.copy_within(read..n, write);
            write += n - read;
            break;
        }
        if line.len() < 7 || !line[..7].eq_ignore_ascii_case(b"cookie:") {
            data.copy_within(read..end, write);
            write += end - read;
            read = end;
            continue;
        }
        let ending = match newline {
            Some(i) if i > read && data[i - 1] == b'\r' => i - 1,
            Some(i) => i,
            None => n,
        };
        // Each cookie kept moves down with the `;` before it; the name comes first.
        let start = write;
        data.copy_within(read..read + 7, write);
        write += 7;
        let mut kept = 0_usize;
        let mut at = read + 7;
        loop {
            let semicolon = memchr::memchr(b';', &data[at..ending]).map(|i| at + i);
            let Some(semicolon) = semicolon.or(newline.map(|_| ending)) else {
                // Unfinished: kept as it is, to be judged once it is whole.
                if kept > 0 {
                    data[write] = b';';
                    write += 1;
                }
                data.copy_within(at..ending, write);
                write += ending - at;
                kept += 1;
                break;
            };
            let pair = &data[at..semicolon];
            let name = pair.split(|b| *b == b'=').next().unwrap_or_default();
            if keep(name.trim_ascii()) && !pair.trim_ascii().is_empty() {
                if kept > 0 {
                    data[write] = b';';
                    write += 1;
                }
                data.copy_within(at..semicolon, write);
                write += semicolon - at;
                kept += 1;
            }
            if semicolon == ending {
                break;
            }
            at = semicolon + 1;
        }
        if newline.is_some() {
            if kept == 0 {
                write = start;
            } else {
                data.copy_within(ending..end, write);
                write += end - ending;
            }
        }
        read = end;
    }
    let shed = write < n;
    buf.truncate(write);
    shed
}

fn content_length(value: &[u8]) -> Option<usize> {
    let digits = value.trim_ascii();
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The authority, path and query of a request target: origin-form (`/path?query`, no
/// authority), or absolute-form (`http://host/path?query`, which clients send to proxies).
/// `None` for anything else.
pub(super) fn split_target(target: &str) -> Option<(Option<&str>, &str, &str)> {
    let (authority, rest) = if target.starts_with('/') {
        (None, target)
    } else {
        let scheme_end = target.find("://")?;
        let scheme = &target[..scheme_end];
        if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
            return None;
        }
        let after = &target[scheme_end + 3..];
        match after.find(['/', '?']) {
            Some(i) if after.as_bytes()[i] == b'/' => (Some(&after[..i]), &after[i..]),
            Some(i) => return Some((Some(&after[..i]), "/", &after[i + 1..])),
            None => (Some(after), "/"),
        }
    };
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    Some((authority, path, query))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_give_their_raw_path_and_query() {
        assert_eq!(
            split_target("/a/b%2F?x=1&y"),
            Some((None, "/a/b%2F", "x=1&y"))
        );
        assert_eq!(split_target("/"), Some((None, "/", "")));
        assert_eq!(
            split_target("http://evil.test/ann/x"),
            Some((Some("evil.test"), "/ann/x", ""))
        );
        assert_eq!(split_target("HTTPS://h?q=1"), Some((Some("h"), "/", "q=1")));
        assert_eq!(split_target("http://h"), Some((Some("h"), "/", "")));
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
        let f = frame(b"GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade, close\r\n\r\n")
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
            status(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n"),
            None
        );
        assert_eq!(status(b"GET /\x01 HTTP/1.1\r\n\r\n"), Some(400));
    }

    #[test]
    fn one_valid_host_is_required_of_http_1_1() {
        let status = |head: &[u8]| frame(head).err().map(|r| r.status());
        assert_eq!(
            status(b"GET / HTTP/1.1\r\nHost: ann.localhost:8081\r\n\r\n"),
            None
        );
        assert_eq!(status(b"GET / HTTP/1.1\r\nhost: [::1]:80\r\n\r\n"), None);
        assert_eq!(
            status(b"GET / HTTP/1.1\r\nHost:\r\n\r\n"),
            None,
            "empty is valid"
        );
        assert_eq!(status(b"GET / HTTP/1.0\r\n\r\n"), None, "1.0 may omit it");
        for refused in [
            &b"GET / HTTP/1.1\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nHost: a.localhost\r\nHost: b.localhost\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a.localhost\r\nhost: a.localhost\r\n\r\n",
            b"GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: ann@bob.localhost\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: ann.localhost bob.localhost\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: bob.localhost/x\r\n\r\n",
        ] {
            assert_eq!(
                status(refused),
                Some(400),
                "{}",
                String::from_utf8_lossy(refused)
            );
        }
    }

    fn shed(head: &str) -> (bool, String) {
        let mut buf = BytesMut::from(head);
        let shed = shed_cookies(&mut buf, |name| name.starts_with(b"own"));
        (shed, String::from_utf8(buf.to_vec()).unwrap())
    }

    #[test]
    fn other_hosts_cookies_are_shed_and_the_rest_left_as_it_was() {
        assert_eq!(
            shed(
                "GET / HTTP/1.1\r\nHost: h\r\nCookie: a=1; own_x=2;b=3; own=4\r\nX: y\r\n\r\nbody"
            ),
            (
                true,
                "GET / HTTP/1.1\r\nHost: h\r\nCookie: own_x=2; own=4\r\nX: y\r\n\r\nbody".into()
            )
        );
        // A line of only other cookies goes; nothing past the head is read as a header.
        assert_eq!(
            shed("GET / HTTP/1.1\r\ncookie: a=1\r\nCOOKIE: own=1\r\n\r\nCookie: b=2\r\n"),
            (
                true,
                "GET / HTTP/1.1\r\nCOOKIE: own=1\r\n\r\nCookie: b=2\r\n".into()
            )
        );
        // Nothing to shed: unchanged.
        let own = "GET / HTTP/1.1\r\nHost: h\r\nCookie: own=1\r\nCookies: a=1\r\n\r\n";
        assert_eq!(shed(own), (false, own.into()));
        // Still arriving: the unfinished cookie is kept until it is whole.
        assert_eq!(
            shed("GET / HTTP/1.1\nCookie: a=1; own=2; b=3; oth"),
            (true, "GET / HTTP/1.1\nCookie: own=2; oth".into())
        );
        assert_eq!(
            shed("GET / HTTP/1.1\nCookie: a=1; b"),
            (true, "GET / HTTP/1.1\nCookie: b".into())
        );
        assert_eq!(shed("GET / HTTP/1.1"), (false, "GET / HTTP/1.1".into()));
    }
}
