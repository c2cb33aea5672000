//! `quire-pages-origin`: the visitor side of Quire, the pages origin (`QUIRE_PAGES_LISTEN`, public at `QUIRE_PAGES_URL`). With per-owner
//! origins (the default) the listener routes by `Host`: `{handle}.{domain}` serves that
//! owner's pages at `/{slug}/...`, and the bare `{domain}` serves short links at `/s/{code}`.
//! On a shared origin (single tenant) pages are at `/{handle}/{slug}/...` beside `/s/{code}`.
//! Each origin has two endpoints of its own under `/-/` (a prefix no slug or handle can
//! take): the password form's post, the landing of the dashboard's sign-in pass and
//! `/-/db.json` (also under each page, `/{slug}/-/db.json`: the database the page names); and
//! under `/.quire/` the stylesheet of its own pages (`quire-style`), so they load it from
//! the origin they are on and their CSP stays `style-src 'self'`.
//!
//! Visitor content lives only here, never on the dashboard's origin. Every decision is made
//! by `quire-serving`; this crate reads the request (host, path, cookies, `Authorization`,
//! the conditional and range headers, `Accept-Encoding`) and writes the answer's status and
//! headers. It runs on a server of its own (`quire-wire`), not actix-web: see that crate for
//! why.
//!
//! By concern: `visit` (pages and short links), `forms` (the `/-/` endpoints), `database`
//! (`/-/db.json`), `answers`
//! (the responses). It depends on `quire-wire`, the serving application layer and the
//! domain crates it names (keys, pages, databases, kernel), `quire-style`, askama for its pages, `metrics` (each answer counted), and never on
//! actix-web or another surface crate (the architecture test says so).

use std::borrow::Cow;
use std::time::{Duration, Instant};

use quire_databases::DatabaseService;
use quire_keys::KeyService;
use quire_pages::{HostOwner, PageOrigins};
use quire_serving::ServingService;

use quire_wire::client_ip::TrustedProxies;

mod answers;
mod database;
mod forms;
mod visit;

pub use quire_wire::{Request, Response, Running, WireLimits};

/// What the pages origin's handlers reach.
#[derive(Debug, Clone)]
pub struct PagesState {
    pub serving: ServingService,
    /// Agents may read non-public pages with a key of the page's project.
    pub keys: KeyService,
    /// The data API's client of the database a page names (`/-/db.json`).
    pub databases: DatabaseService,
    pub trusted_proxies: TrustedProxies,
}

/// Which part of the pages domain a request is for.
enum Target<'a> {
    /// A shared origin: the path names the owner.
    Shared,
    Owner(Cow<'a, str>),
    Links,
    Unknown,
}

impl PagesState {
    /// Where pages live: form posts must come from the page's origin, and cookies are
    /// `Secure` when it is https.
    fn origins(&self) -> &PageOrigins {
        &self.serving.config().origins
    }

    fn target<'a>(&self, request: &Request<'a>) -> Target<'a> {
        let origins = self.origins();
        if !origins.per_owner() {
            return Target::Shared;
        }
        match origins.host_owner(request_host(request)) {
            HostOwner::Owner(handle) => Target::Owner(handle),
            HostOwner::Links => Target::Links,
            HostOwner::Unknown => Target::Unknown,
        }
    }

    /// For the origin's own endpoints (`/-/unlock`, `/-/pass`): `Some(Some(handle))` on an
    /// owner's origin, `Some(None)` on a shared one or the bare domain (whose URL links have
    /// a password form and a sign-in pass too), `None` on an unknown host.
    fn page_owner<'a>(&self, request: &Request<'a>) -> Option<Option<Cow<'a, str>>> {
        match self.target(request) {
            Target::Owner(handle) => Some(Some(handle)),
            Target::Shared | Target::Links => Some(None),
            Target::Unknown => None,
        }
    }
}

/// The origin a request was sent to, as named by the browser (`Host`). Never
/// `X-Forwarded-Host`: a script may set that header on a request to its own origin and would
/// then be served another owner's page with its own cookies.
fn request_host<'a>(request: &Request<'a>) -> &'a str {
    request.header("host").unwrap_or("")
}

/// Answers one request of the pages origin: its route is chosen here, once.
pub async fn handle(state: &PagesState, request: &Request<'_>) -> Response {
    match (request.path, request.method) {
        ("/-/unlock", "POST") => forms::unlock(state, request).await,
        ("/-/unlock", _) => answers::method_not_allowed("POST"),
        ("/-/pass", "GET") => forms::pass(state, request).await,
        ("/-/pass", _) => answers::method_not_allowed("GET"),
        ("/-/healthz", "GET" | "HEAD") => forms::healthz(),
        ("/-/healthz", _) => answers::method_not_allowed("GET, HEAD"),
        (path, "GET" | "HEAD") if database::is_db_json(path) => {
            database::db_json(state, &state.databases, request).await
        }
        (path, _) if database::is_db_json(path) => answers::method_not_allowed("GET, HEAD"),
        (path, "GET" | "HEAD") if path.starts_with(answers::ASSETS) => answers::asset(path),
        (path, _) if path.starts_with(answers::ASSETS) => answers::method_not_allowed("GET, HEAD"),
        (_, "POST") => match visit::short_link_code(state, request) {
            Some(code) => forms::confirm(state, request, code).await,
            None if forms::is_continue(request) => forms::confirm_page(state, request).await,
            None => answers::method_not_allowed("GET, HEAD"),
        },
        (_, "GET" | "HEAD") => visit::visit(state, request, false).await,
        _ if visit::short_link_code(state, request).is_some() => {
            answers::method_not_allowed("GET, HEAD, POST")
        }
        _ => answers::method_not_allowed("GET, HEAD"),
    }
}

impl quire_wire::Handler for PagesState {
    async fn handle<'a>(&'a self, request: &'a Request<'a>) -> Response {
        let started = Instant::now();
        let response = handle(self, request).await;
        record(request, &response, started.elapsed());
        response
    }

    /// The visitor cookies this origin sets (`quire_unlock_*`, `quire_access_*`,
    /// `quire_view_*`, with or without `__Host-`); any other a browser sends here was set by
    /// another host of the domain and is of no use to the origin.
    fn owns_cookie(&self, name: &[u8]) -> bool {
        std::str::from_utf8(name).is_ok_and(|name| quire_serving::cookie_kind(name).is_some())
    }
}

/// Counts an answer in the metrics (a no-op unless the server exports them): by status, the
/// body bytes it sends (none for `HEAD`), and the time taken to make it.
fn record(request: &Request<'_>, response: &Response, took: Duration) {
    let status = quire_wire::message::status_text(response.status());
    metrics::counter!("quire_pages_requests_total", "status" => status).increment(1);
    if request.method != "HEAD" {
        metrics::counter!("quire_pages_response_bytes_total").increment(response.body_length());
    }
    metrics::histogram!("quire_pages_request_duration_seconds").record(took);
}

/// The largest request body the pages origin takes (the password form).
pub const MAX_BODY: usize = forms::FORM_LIMIT;
