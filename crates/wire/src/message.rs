//! A request as the handler sees it (borrowed from the connection's buffer) and the answer
//! it gives, written by the connection.

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;

/// One request header, as read: the value is bytes, since a client may send any.
pub use httparse::Header;

/// A request of the pages origin. The target is split into its raw (still
/// percent-encoded) path and query; an absolute-form target (`http://host/path`) gives its
/// path, and is refused unless its host is the `Host` header's.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub headers: &'a [Header<'a>],
    /// The TCP peer.
    pub peer: IpAddr,
    pub body: &'a [u8],
}

impl<'a> Request<'a> {
    /// The first header called `name` (any case) whose value is text.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.all(name).next()
    }

    /// Every header called `name` (any case) whose value is text, in order.
    pub fn all<'n>(&self, name: &'n str) -> impl Iterator<Item = &'a str> + use<'a, 'n> {
        self.headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name))
            .filter_map(|h| std::str::from_utf8(h.value).ok())
    }

    /// Whether any header is called `name`.
    #[must_use]
    pub fn has(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case(name))
    }
}

/// A header value of an answer: a constant, a text made for this answer, or a text shared
/// with others (a page's `Last-Modified`), which costs no copy per answer.
#[derive(Debug, Clone)]
pub enum Value {
    Static(&'static str),
    Owned(String),
    Shared(Arc<str>),
}

impl Value {
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Static(s) => s,
            Self::Owned(s) => s,
            Self::Shared(s) => s,
        }
    }

    /// Whether the text was made at run time: it may carry what a client or an owner wrote.
    pub(super) fn made_at_run_time(&self) -> bool {
        !matches!(self, Self::Static(_))
    }
}

impl From<&'static str> for Value {
    fn from(s: &'static str) -> Self {
        Self::Static(s)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Self::Owned(s)
    }
}

impl From<Cow<'static, str>> for Value {
    fn from(s: Cow<'static, str>) -> Self {
        match s {
            Cow::Borrowed(s) => Self::Static(s),
            Cow::Owned(s) => Self::Owned(s),
        }
    }
}

impl From<Arc<str>> for Value {
    fn from(s: Arc<str>) -> Self {
        Self::Shared(s)
    }
}

/// The bytes of a body too large to hold, as they come (a file read from storage).
pub trait Pieces: Send {
    /// The next piece; `None` at the end.
    fn next_piece(
        &mut self,
    ) -> std::pin::Pin<Box<dyn Future<Output = Option<std::io::Result<Bytes>>> + Send + '_>>;

    /// A file on this machine's disk holding the body from the offset given: the
    /// connection sends it with `sendfile`, no byte of it through user space. Asked once,
    /// before any piece.
    fn file(&mut self) -> Option<(std::fs::File, u64)> {
        None
    }
}

/// A body sent as it comes: its length (the `Content-Length`) and its pieces, which the
/// connection takes once (a clone of the answer shares them).
#[derive(Clone)]
pub struct Streamed {
    length: u64,
    pieces: Arc<std::sync::Mutex<Option<Box<dyn Pieces>>>>,
}

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamed")
            .field("length", &self.length)
            .finish_non_exhaustive()
    }
}

/// An answer: status, headers and body. The connection adds `Content-Length`, `Date` and,
/// when it closes, `Connection: close`; for `HEAD` it sends the head only.
#[derive(Debug, Clone)]
pub struct Response {
    status: u16,
    headers: Vec<(&'static str, Value)>,
    body: Bytes,
    streamed: Option<Streamed>,
    close: bool,
}

impl Response {
    #[must_use]
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::with_capacity(12),
            body: Bytes::new(),
            streamed: None,
            close: false,
        }
    }

    /// A body of `length` bytes sent as `pieces` yields them, with no copy held whole. A
    /// source that ends early or fails closes the connection (the length was promised).
    #[must_use]
    pub fn streamed(mut self, length: u64, pieces: Box<dyn Pieces>) -> Self {
        self.body = Bytes::new();
        self.streamed = Some(Streamed {
            length,
            pieces: Arc::new(std::sync::Mutex::new(Some(pieces))),
        });
        self
    }

    /// The length of the body: held or streamed.
    #[must_use]
    pub fn body_length(&self) -> u64 {
        self.streamed
            .as_ref()
            .map_or(self.body.len() as u64, |s| s.length)
    }

    /// The streamed body's length and pieces, once.
    pub(super) fn take_stream(&self) -> Option<(u64, Box<dyn Pieces>)> {
        let streamed = self.streamed.as_ref()?;
        let pieces = streamed.pieces.lock().ok()?.take()?;
        Some((streamed.length, pieces))
    }

    /// Adds a header (names are written as given; values must not hold line breaks, or
    /// the connection answers 500 instead).
    #[must_use]
    pub fn header(mut self, name: &'static str, value: impl Into<Value>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// Sets a header, replacing any of that name.
    #[must_use]
    pub fn set_header(mut self, name: &'static str, value: impl Into<Value>) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.header(name, value)
    }

    #[must_use]
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// The connection closes after this answer.
    #[must_use]
    pub fn close(mut self) -> Self {
        self.close = true;
        self
    }

    #[must_use]
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The first value of header `name` (any case).
    #[must_use]
    pub fn header_value(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    #[must_use]
    pub fn headers(&self) -> &[(&'static str, Value)] {
        &self.headers
    }

    #[must_use]
    pub fn body_bytes(&self) -> &Bytes {
        &self.body
    }

    #[must_use]
    pub fn closes(&self) -> bool {
        self.close
    }

    /// A refusal of the server itself (not of a page): JSON as on the API, and the
    /// connection closes.
    pub(super) fn refusal(status: u16, error: &str, message: &str) -> Self {
        let body = serde_json::json!({ "error": error, "message": message }).to_string();
        Self::new(status)
            .header("content-type", "application/json")
            .header("cache-control", "no-store")
            .body(body)
            .close()
    }
}

/// A status code as text (`"404"`) with no allocation per call: the label of an answer in
/// the metrics.
#[must_use]
pub fn status_text(status: u16) -> &'static str {
    static CODES: std::sync::LazyLock<Vec<String>> =
        std::sync::LazyLock::new(|| (0..600).map(|code: u16| code.to_string()).collect());
    CODES
        .get(usize::from(status))
        .map_or("other", String::as_str)
}

/// The reason phrase of the statuses this origin sends.
pub(super) fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        206 => "Partial Content",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        416 => "Range Not Satisfiable",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_found_in_any_case_and_only_as_text() {
        let headers = [
            Header {
                name: "Cookie",
                value: b"a=1",
            },
            Header {
                name: "cookie",
                value: b"b=2",
            },
            Header {
                name: "X-Bin",
                value: &[0xff, 0xfe],
            },
        ];
        let req = Request {
            method: "GET",
            path: "/",
            query: "",
            headers: &headers,
            peer: IpAddr::from([127, 0, 0, 1]),
            body: b"",
        };
        assert_eq!(req.header("COOKIE"), Some("a=1"));
        assert_eq!(req.all("cookie").collect::<Vec<_>>(), ["a=1", "b=2"]);
        assert_eq!(req.header("x-bin"), None);
        assert!(req.has("x-bin"));
        assert!(!req.has("host"));
    }

    #[test]
    fn set_header_replaces_every_value_of_that_name() {
        let r = Response::new(303)
            .header("Referrer-Policy", "same-origin")
            .set_header("referrer-policy", "no-referrer");
        assert_eq!(r.header_value("Referrer-Policy"), Some("no-referrer"));
        assert_eq!(r.headers().len(), 1);
    }
}
