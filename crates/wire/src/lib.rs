//! `quire-wire`: the pages origin's own HTTP/1.1 server. Serving a page's file is the hottest path Quire
//! has, and a web framework's per-request work (request and header maps, routing, boxed
//! middleware, a response builder that parses header names) cost more than the answer
//! itself. This server reads a request head in place (`httparse`, no copy, no map), hands
//! the handler borrowed views of it, and writes the answer's head and body in one `write`.
//!
//! It takes what the pages origin needs and refuses the rest clearly: one valid `Host` (400
//! otherwise, and when an absolute-form target names another), heads up to 64 KiB and 100
//! header lines once other hosts' cookies are shed (431 past them), bodies by
//! `Content-Length` only (a `Transfer-Encoding` is 411, both at once 400), at most
//! [`WireLimits::max_body`] bytes (413, before any of it is waited for). Every wait has a
//! deadline: the head ([`WireLimits::header_timeout`], 408), an idle keep-alive connection
//! ([`WireLimits::keep_alive`], closed), a body (the edge's body deadline, 408), and writing
//! an answer to a client that does not read it (closed). A connection over its client's
//! share is answered 503 and closed, as on the API listener.
//!
//! By concern: [`message`] (the request and response types), `framing` (reading a request's
//! head), `writing` (an answer's bytes), `connection` (one client's requests in turn, with
//! their deadlines), `server` (worker threads, accepting, shutdown), `turns` (a busy
//! worker sharing its core; binding workers to CPUs), `date` (the cached `Date` header);
//! and what both listeners share without a web framework: [`limits`] (connection shares and
//! the body deadline), [`client_ip`] (trusted proxies), [`origin`] (same-origin posts).
//!
//! It knows nothing of Quire and never reaches actix-web (the architecture test says so): it
//! depends on tokio, httparse, httpdate, itoa, memchr, rustix, bytes, serde_json (its JSON refusals) and tracing only.

pub mod client_ip;
pub mod limits;
pub mod origin;

mod connection;
mod date;
mod framing;
pub mod message;
mod server;
mod turns;
mod writing;

pub use message::{Pieces, Request, Response, Streamed};
pub use server::{ConnectionsOpen, Running, WireLimits, Workers, start};

/// What answers the requests of the pages origin: called once per request, on the worker
/// thread that read it.
pub trait Handler: Clone + Send + 'static {
    fn handle<'a>(&'a self, request: &'a Request<'a>) -> impl Future<Output = Response> + 'a;

    /// Whether a cookie of this name is the handler's own. When a request's head is over
    /// the limits, the others are shed and the head judged again; by default every cookie
    /// is kept.
    fn owns_cookie(&self, name: &[u8]) -> bool {
        let _ = name;
        true
    }
}
