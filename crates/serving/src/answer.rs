//! What the serving use cases take and give: a visit and its visitor, the password form's
//! post, and the answers and refusals the pages-origin edge turns into responses.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use quire_kernel::conditional::Conditions;
use quire_kernel::{InfraError, Principal};

/// The credentials a request carries; cookies are the values of every cookie of that name.
#[derive(Debug, Default, Clone)]
pub struct Visitor<'a> {
    /// The caller of an `Authorization` header, already authenticated.
    pub principal: Option<&'a Principal>,
    pub unlock: Vec<&'a str>,
    pub access: Vec<&'a str>,
    pub view: Vec<&'a str>,
}

/// A `GET` or `HEAD` of the pages origin.
#[derive(Debug, Clone)]
pub struct Visit<'a> {
    /// The owner whose origin was asked (per-owner origins), from the `Host`; `None` on a
    /// shared origin, where the path names the owner.
    pub owner: Option<&'a str>,
    /// The raw (still percent-encoded) path.
    pub path: &'a str,
    /// The raw query, kept on redirects.
    pub query: &'a str,
    pub head: bool,
    pub visitor: Visitor<'a>,
    /// The conditional and range headers; evaluated only once the visitor has access.
    pub conditions: Conditions<'a>,
    pub accepts_gzip: bool,
    pub asker: Asker<'a>,
}

/// Who asks, as a budget judges it: a person's browser is shown the continue page first, a
/// preview or crawler never spends a view, any other client spends one at once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asker<'a> {
    pub user_agent: Option<&'a str>,
    pub accept: Option<&'a str>,
    /// The continue page's post, which spends the view.
    pub confirm: bool,
}

impl Asker<'_> {
    /// A known preview or crawler.
    #[must_use]
    pub fn bot(&self) -> bool {
        crate::bots::is_bot(self.user_agent)
    }

    /// Whether a budgeted view waits for the continue page's post: always for a preview or
    /// crawler, and for a browser until it posts.
    #[must_use]
    pub fn holds_back(&self) -> bool {
        self.bot() || (!self.confirm && crate::bots::wants_html(self.accept))
    }
}

/// A `GET`, `HEAD` or `POST` of a short link `/s/{code}`.
#[derive(Debug, Clone)]
pub struct LinkVisit<'a> {
    pub code: &'a str,
    pub head: bool,
    pub visitor: Visitor<'a>,
    pub asker: Asker<'a>,
    pub referer: Option<&'a str>,
}

impl<'a> LinkVisit<'a> {
    /// A `GET` of `/s/{code}` with no credential and no header that says who asks (curl).
    #[must_use]
    pub fn plain(code: &'a str) -> Self {
        Self {
            code,
            head: false,
            visitor: Visitor::default(),
            asker: Asker::default(),
            referer: None,
        }
    }
}

/// The page a person's browser is shown before a budgeted link or page spends a view: its
/// button posts back to the same address, and only that post is counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinuePrompt {
    pub title: Option<String>,
    /// The host a link leads to; `None` for a page.
    pub host: Option<String>,
    /// Where the button posts: `/s/{code}`, or the page's path.
    pub action: String,
}

/// How browsers may keep a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheRule {
    /// `max-age=0, must-revalidate` with the ETag: public pages without budget or expiry.
    Revalidate,
    /// `private, no-store`: anything a policy guards.
    NoStore,
}

/// A cookie to set on the pages origin, for one page: on a per-owner origin it is named for
/// the page (`quire_unlock_{slug}`, with the `__Host-` prefix on https, which wants path
/// `/`); on a shared origin it is scoped to the page's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedCookie {
    pub name: String,
    pub value: String,
    /// `/` or `/{handle}/{slug}/`.
    pub path: String,
    pub max_age: Duration,
}

/// A file to send.
#[derive(Debug, Clone)]
pub struct FileAnswer {
    /// `false` for the page's own `404.html` sent with status 404.
    pub found: bool,
    pub body: Bytes,
    /// The body is gzip-encoded.
    pub gzip: bool,
    /// The file has a gzip variant (responses vary on `Accept-Encoding`).
    pub varies: bool,
    pub content_type: String,
    pub etag: String,
    /// The page's last change as an HTTP-date, shared by its files (`Last-Modified`).
    pub last_modified: Arc<str>,
    /// `Some` for a 206: the part of the identity body that `body` is.
    pub range: Option<ByteRange>,
    pub cache: CacheRule,
    /// The page has a password, an allow list, is private or has a view budget: no other
    /// origin may frame it or embed its files.
    pub guarded: bool,
    pub cookie: Option<IssuedCookie>,
}

/// An object to send: its bytes stream from storage.
#[derive(Debug, Clone)]
pub struct ObjectAnswer {
    pub content_type: String,
    /// `Content-Disposition`: inline only for a public object of an inert type.
    pub disposition: String,
    /// Not of a type known to be inert (`Object::is_inert`): sent with
    /// `Content-Security-Policy: sandbox`.
    pub active: bool,
    pub etag: String,
    pub last_modified: Arc<str>,
    /// `Some` for a 206.
    pub range: Option<ByteRange>,
    /// The length of what is sent.
    pub length: u64,
    pub cache: CacheRule,
    pub guarded: bool,
    /// The view cookie of a budgeted object's counted download.
    pub cookie: Option<IssuedCookie>,
    /// The bytes, taken once by whoever sends them.
    pub body: SharedStream,
}

/// Where an object's bytes come from: storage's stream, or a file on this machine's disk
/// from an offset (sent with `sendfile`).
pub enum ObjectBody {
    Stream(quire_objects::ByteStream),
    File { file: std::fs::File, offset: u64 },
}

impl std::fmt::Debug for ObjectBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stream(_) => f.write_str("Stream"),
            Self::File { offset, .. } => f.debug_struct("File").field("offset", offset).finish(),
        }
    }
}

/// The body an answer carries; cloning the answer shares it, and the first taker has it.
#[derive(Clone)]
pub struct SharedStream(Arc<std::sync::Mutex<Option<ObjectBody>>>);

impl SharedStream {
    #[must_use]
    pub fn new(body: ObjectBody) -> Self {
        Self(Arc::new(std::sync::Mutex::new(Some(body))))
    }

    /// The body, once.
    #[must_use]
    pub fn take(&self) -> Option<ObjectBody> {
        self.0.lock().ok()?.take()
    }
}

impl std::fmt::Debug for SharedStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedStream")
    }
}

/// Bytes `start..=end` of a representation of `length` bytes (`Content-Range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    pub start: u64,
    pub end: u64,
    pub length: u64,
}

/// The password form of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordPrompt {
    pub title: String,
    pub handle: String,
    pub slug: String,
    /// The path inside the page to return to.
    pub next: String,
    pub wrong: bool,
    /// A URL link's code: its form posts the code instead of the page's handle and slug.
    pub code: Option<String>,
}

/// A private or allow-list page, as shown to a visitor who is not signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInPrompt {
    /// The page's title (see `docs/decisions/0040-visitor-sign-in-page.md`).
    pub title: String,
    /// `true` for an allow-list page (people its owner named), `false` for a private one.
    pub shared: bool,
    /// The dashboard's sign-in hand-off, `{base}/visit?page={code}&next={path}`, which
    /// returns the visitor to the page.
    pub location: String,
}

/// A page named by its short-link code, as the dashboard's hand-off pages name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageCard {
    pub title: String,
    /// The page's address on the pages origin.
    pub url: String,
}

/// What the pages origin answers.
#[derive(Debug, Clone)]
pub enum Answer {
    File(Box<FileAnswer>),
    /// An object's bytes (200 or 206).
    Object(Box<ObjectAnswer>),
    /// 304, with the validators and caching headers the 200 would carry.
    NotModified {
        etag: String,
        cache: CacheRule,
        /// The file has a gzip variant (`Vary: Accept-Encoding`).
        varies: bool,
        last_modified: Arc<str>,
    },
    /// 412: `If-Match` or `If-Unmodified-Since` is false.
    PreconditionFailed,
    /// 416: the range starts past the end of the file's `length` bytes.
    RangeNotSatisfiable {
        length: u64,
    },
    /// 308 when `permanent` (the trailing slash), 302 otherwise.
    Redirect {
        location: String,
        permanent: bool,
    },
    /// A URL link followed: its status (301, 302, 303 after the continue page, 307, 308)
    /// and whether it may be kept (`Revalidate`: a public link without expiry or budget).
    Forward {
        location: String,
        status: u16,
        cache: CacheRule,
    },
    /// 200: the continue page of a budgeted link.
    Continue(ContinuePrompt),
    NotFound,
    /// Expired, or the view budget is spent.
    Gone,
    /// 401 with the password form.
    Password(PasswordPrompt),
    /// A private or allow-list page asked for with nothing that opens it: the pages
    /// origin says which page this is and how to get in.
    SignIn(SignInPrompt),
    /// 403: signed in, but not as an account the page admits.
    Forbidden {
        /// The page's title, as its sign-in page shows it.
        title: String,
        email: Option<String>,
    },
}

/// The password form's post of a URL link.
#[derive(Debug, Clone)]
pub struct LinkUnlock<'a> {
    pub code: &'a str,
    pub password: &'a str,
    /// The client (address) the attempt is counted against.
    pub client: &'a str,
}

/// The password form's post.
#[derive(Debug, Clone)]
pub struct Unlock<'a> {
    pub handle: &'a str,
    pub slug: &'a str,
    pub password: &'a str,
    /// The path inside the page to return to.
    pub next: &'a str,
    /// The client (address) the attempt is counted against.
    pub client: &'a str,
}

/// Where to send the visitor, and the cookie to set on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    pub cookie: Option<IssuedCookie>,
    /// A path on the pages origin.
    pub location: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnlockError {
    #[error("page not found")]
    NotFound,
    #[error("the page has expired or its view budget is spent")]
    Gone,
    #[error("wrong password")]
    Wrong(PasswordPrompt),
    #[error("too many password attempts")]
    Throttled { retry_after_secs: u64 },
    #[error(transparent)]
    Infra(#[from] InfraError),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PassError {
    #[error("page not found")]
    NotFound,
    /// The account is not admitted (issue), or the pass is invalid or expired (accept).
    #[error("not allowed")]
    Forbidden,
    #[error(transparent)]
    Infra(#[from] InfraError),
}
