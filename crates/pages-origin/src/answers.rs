//! The responses of the pages origin: a page's file and the origin's own pages (the
//! password form, the sign-in page of private and allow-list pages, notices, redirects, the
//! stylesheet they share), with the headers each must carry.

use std::borrow::Cow;

use askama::Template;
use futures_util::StreamExt;
use quire_serving::{
    Answer, CacheRule, ContinuePrompt, IssuedCookie, ObjectAnswer, ObjectBody, PasswordPrompt,
    SignInPrompt,
};

use quire_wire::{Pieces, Response};

#[derive(Template)]
#[template(path = "unlock.html")]
struct UnlockPage<'a> {
    title: &'a str,
    handle: &'a str,
    slug: &'a str,
    next: &'a str,
    error: Option<&'a str>,
    code: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "continue.html")]
struct ContinuePage<'a> {
    title: Option<&'a str>,
    host: Option<&'a str>,
    action: &'a str,
}

#[derive(Template)]
#[template(path = "sign_in.html")]
struct SignInPage<'a> {
    title: &'a str,
    shared: bool,
    location: &'a str,
}

#[derive(Template)]
#[template(path = "not_shared.html")]
struct NotSharedPage<'a> {
    title: &'a str,
    /// The signed-in account's email, when it has one.
    email: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "visitor_notice.html")]
struct NoticePage<'a> {
    heading: &'a str,
    text: &'a str,
    /// What the visitor can do about it, when anything.
    next_step: Option<&'a str>,
}

/// Where the origin's own pages find the stylesheet: `/.quire/` is a prefix no page can
/// take (slugs and handles never start with a dot), on every host of the origin.
pub(super) const ASSETS: &str = "/.quire/";

/// One of this origin's own HTML pages (never user content): not cached, not framed.
fn own_page(status: u16, body: Result<String, askama::Error>) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "template failed");
            return plain(500, "Internal error");
        }
    };
    Response::new(status)
        .header("content-type", "text/html; charset=utf-8")
        .header("cache-control", "private, no-store")
        .header("x-content-type-options", "nosniff")
        .header("x-frame-options", "DENY")
        .header("cross-origin-resource-policy", "same-origin")
        // Not no-referrer: with it, browsers send `Origin: null` on the form's post.
        .header("referrer-policy", "same-origin")
        .header(
            "content-security-policy",
            "default-src 'none'; style-src 'self'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        )
        .body(body)
}

/// `GET`/`HEAD` under [`ASSETS`]: the stylesheet under its hashed name, kept for a year;
/// any other name is a 404 (an old name after an upgrade too: the page that asks for it is
/// a year old at most, and reloading it names the new one).
pub(super) fn asset(path: &str) -> Response {
    if path.strip_prefix(ASSETS) != Some(quire_style::file_name()) {
        return not_found();
    }
    Response::new(200)
        .header("content-type", "text/css; charset=utf-8")
        .header("cache-control", quire_style::IMMUTABLE)
        .header("x-content-type-options", "nosniff")
        .body(quire_style::CSS)
}

pub(super) fn notice(status: u16, heading: &str, text: &str) -> Response {
    notice_with(status, heading, text, None)
}

pub(super) fn notice_with(
    status: u16,
    heading: &str,
    text: &str,
    next_step: Option<&str>,
) -> Response {
    own_page(
        status,
        NoticePage {
            heading,
            text,
            next_step,
        }
        .render(),
    )
}

pub(super) fn plain(status: u16, text: &'static str) -> Response {
    Response::new(status)
        .header("content-type", "text/plain; charset=utf-8")
        .header("cache-control", "private, no-store")
        .header("x-content-type-options", "nosniff")
        .body(text)
}

pub(super) fn not_found() -> Response {
    notice_with(
        404,
        "Page not found",
        "There is no page at this address.",
        Some("Check the link for typing mistakes, or ask the person who sent it."),
    )
}

pub(super) fn gone() -> Response {
    notice_with(
        410,
        "This page is no longer available",
        "It has expired, or it has been opened as many times as its owner allowed.",
        Some("If you still need it, ask the person who sent you the link."),
    )
}

/// 405 for a method the path does not take.
pub(super) fn method_not_allowed(allow: &'static str) -> Response {
    Response::new(405).header("allow", allow)
}

/// The password form, a 401 with a challenge of its own scheme (RFC 9110 §11.6.1 and
/// §15.5.2: a 401 carries one). Browsers know no `QuirePassword` scheme, so they show the
/// form rather than a prompt of their own; the realm names the page.
pub(super) fn password_form(status: u16, prompt: &PasswordPrompt, error: Option<&str>) -> Response {
    let response = own_page(
        status,
        UnlockPage {
            title: &prompt.title,
            handle: &prompt.handle,
            slug: &prompt.slug,
            next: &prompt.next,
            error,
            code: prompt.code.as_deref(),
        }
        .render(),
    );
    let response = if prompt.code.is_some() {
        response.set_header("content-security-policy", LINK_PAGE_CSP)
    } else {
        response
    };
    if status == 401 {
        // Handles, slugs and codes are of letters, digits, `_` and `-`: nothing to quote.
        let realm = match &prompt.code {
            Some(code) => format!("s/{code}"),
            None => format!("{}/{}", prompt.handle, prompt.slug),
        };
        response.header(
            "www-authenticate",
            format!("QuirePassword realm=\"{realm}\""),
        )
    } else {
        response
    }
}

/// A private or allow-list page to a visitor without access: a 403 that says which page
/// this is, who may open it, and links to the dashboard's sign-in hand-off (see
/// `docs/decisions/visitor-pages.md` for the status and the title).
fn sign_in(prompt: &SignInPrompt) -> Response {
    own_page(
        403,
        SignInPage {
            title: &prompt.title,
            shared: prompt.shared,
            location: &prompt.location,
        }
        .render(),
    )
}

/// The CSP of a URL link's own pages: their form's post ends in a redirect to the link's
/// target, which browsers hold to `form-action` too.
const LINK_PAGE_CSP: &str = "default-src 'none'; style-src 'self'; form-action 'self' http: https:; \
     frame-ancestors 'none'; base-uri 'none'";

/// The continue page of a budgeted link or page: its button posts back to its address.
fn continue_page(prompt: &ContinuePrompt) -> Response {
    own_page(
        200,
        ContinuePage {
            title: prompt.title.as_deref(),
            host: prompt.host.as_deref(),
            action: &prompt.action,
        }
        .render(),
    )
    .set_header("content-security-policy", LINK_PAGE_CSP)
}

pub(super) fn redirect(status: u16, location: &str) -> Response {
    Response::new(status)
        .header("location", location.to_owned())
        .header("cache-control", "private, no-store")
        .header("cross-origin-resource-policy", "same-origin")
}

pub(super) fn infra_failure(e: &impl std::fmt::Display) -> Response {
    tracing::warn!(error = %e, "pages origin could not answer");
    plain(
        500,
        "Something went wrong on our side. Try again in a moment.",
    )
}

fn cache_control(rule: CacheRule) -> &'static str {
    match rule {
        CacheRule::Revalidate => "max-age=0, must-revalidate",
        CacheRule::NoStore => "private, no-store",
    }
}

/// A cookie of the pages origin: `HttpOnly; SameSite=Lax`, for one page (see
/// [`IssuedCookie`]), host-only, and `Secure` when the origin is https. Names and values
/// are the serving crate's (a page's slug, a signed token in base64url), which need no
/// quoting.
pub(super) fn visitor_cookie(https: bool, issued: &IssuedCookie) -> String {
    let secure = if https { "; Secure" } else { "" };
    format!(
        "{}={}; HttpOnly; SameSite=Lax{secure}; Path={}; Max-Age={}",
        issued.name,
        issued.value,
        issued.path,
        issued.max_age.as_secs()
    )
}

pub(super) fn with_cookie(
    response: Response,
    https: bool,
    cookie: Option<&IssuedCookie>,
) -> Response {
    match cookie {
        Some(issued) => response.header("set-cookie", visitor_cookie(https, issued)),
        None => response,
    }
}

/// An object's bytes as they come from storage, or its file on local disk.
struct ObjectPieces(Option<ObjectBody>);

impl Pieces for ObjectPieces {
    fn next_piece(
        &mut self,
    ) -> std::pin::Pin<Box<dyn Future<Output = Option<std::io::Result<bytes::Bytes>>> + Send + '_>>
    {
        Box::pin(async move {
            match &mut self.0 {
                Some(ObjectBody::Stream(stream)) => stream
                    .next()
                    .await
                    .map(|piece| piece.map_err(|e| std::io::Error::other(e.to_string()))),
                Some(ObjectBody::File { .. }) | None => None,
            }
        })
    }

    fn file(&mut self) -> Option<(std::fs::File, u64)> {
        match self.0.take() {
            Some(ObjectBody::File { file, offset }) => Some((file, offset)),
            other => {
                self.0 = other;
                None
            }
        }
    }
}

/// An object: its bytes streamed, never held whole. Whatever is not known to be inert is
/// an attachment in a sandbox with no script: the owner's origin holds the pages' cookies.
fn object_response(object: ObjectAnswer, https: bool) -> Response {
    let status = if object.range.is_some() { 206 } else { 200 };
    let mut response = Response::new(status)
        .header("content-type", Cow::Owned(object.content_type))
        .header("content-disposition", object.disposition)
        .header("cache-control", cache_control(object.cache))
        .header("x-content-type-options", "nosniff")
        .header("etag", object.etag)
        .header("last-modified", object.last_modified)
        .header("accept-ranges", "bytes");
    if let Some(range) = object.range {
        response = response.header(
            "content-range",
            format!("bytes {}-{}/{}", range.start, range.end, range.length),
        );
    }
    if object.active {
        response = response.header("content-security-policy", "sandbox; default-src 'none'");
    } else if object.guarded {
        response = response
            .header("content-security-policy", "frame-ancestors 'self'")
            .header("x-frame-options", "SAMEORIGIN")
            .header("cross-origin-resource-policy", "same-origin");
    }
    let response = with_cookie(response, https, object.cookie.as_ref());
    match object.body.take() {
        Some(body) => response.streamed(object.length, Box::new(ObjectPieces(Some(body)))),
        None => Response::new(500).header("cache-control", "no-store"),
    }
}

/// The response to what the serving use cases answered.
pub(super) fn respond(answer: Answer, https: bool) -> Response {
    match answer {
        Answer::File(file) => {
            let status = match (file.found, file.range) {
                (false, _) => 404,
                (true, Some(_)) => 206,
                (true, None) => 200,
            };
            let mut response = Response::new(status)
                .header("content-type", Cow::Owned(file.content_type))
                .header("cache-control", cache_control(file.cache))
                .header("x-content-type-options", "nosniff");
            if file.found {
                response = response
                    .header("etag", file.etag)
                    .header("last-modified", file.last_modified)
                    .header("accept-ranges", "bytes");
            }
            if let Some(range) = file.range {
                response = response.header(
                    "content-range",
                    format!("bytes {}-{}/{}", range.start, range.end, range.length),
                );
            }
            if file.varies {
                response = response.header("vary", "Accept-Encoding");
            }
            if file.gzip {
                response = response.header("content-encoding", "gzip");
            }
            if file.guarded {
                // Only the page itself may frame or embed what its policy guards.
                response = response
                    .header("content-security-policy", "frame-ancestors 'self'")
                    .header("x-frame-options", "SAMEORIGIN")
                    .header("cross-origin-resource-policy", "same-origin");
            }
            with_cookie(response.body(file.body), https, file.cookie.as_ref())
        }
        Answer::Object(object) => object_response(*object, https),
        // RFC 9110 §15.4.5: the ETag, Vary and Cache-Control the 200 would carry.
        Answer::NotModified {
            etag,
            cache,
            varies,
            last_modified,
        } => {
            let response = Response::new(304)
                .header("etag", etag)
                .header("cache-control", cache_control(cache))
                .header("last-modified", last_modified);
            if varies {
                response.header("vary", "Accept-Encoding")
            } else {
                response
            }
        }
        Answer::PreconditionFailed => plain(412, "A precondition of the request is false."),
        Answer::RangeNotSatisfiable { length } => {
            plain(416, "The range asked for starts past the end of the file.")
                .header("content-range", format!("bytes */{length}"))
        }
        Answer::Redirect {
            location,
            permanent,
        } => redirect(if permanent { 308 } else { 302 }, &location),
        Answer::Forward {
            location,
            status,
            cache,
        } => Response::new(status)
            .header("location", location)
            .header("cache-control", cache_control(cache)),
        Answer::Continue(prompt) => continue_page(&prompt),
        Answer::NotFound => not_found(),
        Answer::Gone => gone(),
        Answer::Password(prompt) => password_form(401, &prompt, None),
        Answer::SignIn(prompt) => sign_in(&prompt),
        Answer::Forbidden { title, email } => own_page(
            403,
            NotSharedPage {
                title: &title,
                email: email.as_deref(),
            }
            .render(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn visitor_cookies_are_page_scoped_http_only_and_secure_on_https() {
        let issued = IssuedCookie {
            name: "__Host-quire_unlock_site".into(),
            value: "v".into(),
            path: "/".into(),
            max_age: Duration::from_secs(60),
        };
        let https = visitor_cookie(true, &issued);
        assert!(!https.contains("Domain"), "host-only: {https}");
        for part in [
            "__Host-quire_unlock_site=v",
            "HttpOnly",
            "SameSite=Lax",
            "Secure",
            "Path=/",
            "Max-Age=60",
        ] {
            assert!(https.contains(part), "{part} in {https}");
        }
        assert!(!visitor_cookie(false, &issued).contains("Secure"));
    }
}
