//! The pages origin (`QUIRE_PAGES_LISTEN`, public at `QUIRE_PAGES_URL`). With per-owner
//! origins (the default) the listener routes by `Host`: `{handle}.{domain}` serves that
//! owner's pages at `/{slug}/...`, and the bare `{domain}` serves short links at `/s/{code}`.
//! On a shared origin (single tenant) pages are at `/{handle}/{slug}/...` beside `/s/{code}`.
//! Each origin has two endpoints of its own under `/-/` (a prefix no slug or handle can
//! take): the password form's post and the landing of the dashboard's sign-in pass.
//!
//! Visitor content lives only here, never on the dashboard's origin. Every decision is made
//! by `quire-serving`; this module reads the request (host, path, cookies, `Authorization`,
//! `If-None-Match`, `Accept-Encoding`) and writes the answer's status and headers.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Duration;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::{Method, StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_keys::KeyService;
use quire_pages::{HostOwner, PageOrigins};
use quire_serving::{
    Answer, CacheRule, IssuedCookie, PassError, PasswordPrompt, ServingService, TokenKind, Unlock,
    UnlockError, Visit, Visitor, cookie_kind,
};

use crate::common::client_ip::{self, TrustedProxies};
use crate::common::origin::same_origin;
use crate::error::ApiError;

/// What the pages origin's handlers reach.
#[derive(Debug, Clone)]
pub struct PagesState {
    pub serving: ServingService,
    /// Agents may read non-public pages with a key of the page's project.
    pub keys: KeyService,
    pub trusted_proxies: TrustedProxies,
}

impl PagesState {
    /// Where pages live: form posts must come from the page's origin, and cookies are
    /// `Secure` when it is https.
    fn origins(&self) -> &PageOrigins {
        &self.serving.config().origins
    }
}

/// The origin a request was sent to, as named by the browser (`Host`, or the authority of
/// an HTTP/2 request). Never `X-Forwarded-Host`: a script may set that header on a request
/// to its own origin and would then be served another owner's page with its own cookies.
fn request_host(req: &HttpRequest) -> &str {
    req.headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()))
        .unwrap_or("")
}

/// Which part of the pages domain a request is for.
enum Target<'a> {
    /// A shared origin: the path names the owner.
    Shared,
    Owner(Cow<'a, str>),
    Links,
    Unknown,
}

/// For the endpoints of a page's own origin (`/-/unlock`, `/-/pass`): `Some(Some(handle))`
/// on an owner's origin, `Some(None)` on a shared one, `None` on the bare domain or an
/// unknown host, which have no pages.
fn page_owner<'a>(state: &PagesState, req: &'a HttpRequest) -> Option<Option<Cow<'a, str>>> {
    match target(state, req) {
        Target::Owner(handle) => Some(Some(handle)),
        Target::Shared => Some(None),
        Target::Links | Target::Unknown => None,
    }
}

fn target<'a>(state: &PagesState, req: &'a HttpRequest) -> Target<'a> {
    let origins = state.origins();
    if !origins.per_owner() {
        return Target::Shared;
    }
    match origins.host_owner(request_host(req)) {
        HostOwner::Owner(handle) => Target::Owner(handle),
        HostOwner::Links => Target::Links,
        HostOwner::Unknown => Target::Unknown,
    }
}

/// The password form's post carries three short fields and a password.
const FORM_LIMIT: usize = 16 * 1024;

/// Registers every route of the pages origin on an actix `App`.
pub fn configure(state: PagesState) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.app_data(web::Data::new(state))
            .app_data(web::PayloadConfig::new(FORM_LIMIT))
            .route("/-/unlock", web::post().to(unlock))
            .route("/-/pass", web::get().to(pass))
            .route("/-/healthz", web::get().to(healthz))
            .default_service(web::to(visit));
    }
}

#[derive(Template)]
#[template(path = "unlock.html")]
struct UnlockPage<'a> {
    title: &'a str,
    handle: &'a str,
    slug: &'a str,
    next: &'a str,
    error: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "visitor_notice.html")]
struct NoticePage<'a> {
    heading: &'a str,
    text: &'a str,
}

/// One of this origin's own HTML pages (never user content): not cached, not framed.
fn own_page(status: StatusCode, body: Result<String, askama::Error>) -> HttpResponse {
    let body = match body {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "template failed");
            return plain(StatusCode::INTERNAL_SERVER_ERROR, "Internal error");
        }
    };
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("X-Frame-Options", "DENY"))
        .insert_header(("Cross-Origin-Resource-Policy", "same-origin"))
        // Not no-referrer: with it, browsers send `Origin: null` on the form's post.
        .insert_header(("Referrer-Policy", "same-origin"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ))
        .body(body)
}

fn notice(status: StatusCode, heading: &str, text: &str) -> HttpResponse {
    own_page(status, NoticePage { heading, text }.render())
}

fn plain(status: StatusCode, text: &'static str) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/plain; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .body(text)
}

fn not_found() -> HttpResponse {
    notice(
        StatusCode::NOT_FOUND,
        "Page not found",
        "There is no page at this address.",
    )
}

fn gone() -> HttpResponse {
    notice(
        StatusCode::GONE,
        "This page is no longer available",
        "It has expired or reached the number of views its owner allowed.",
    )
}

fn password_form(status: StatusCode, prompt: &PasswordPrompt, error: Option<&str>) -> HttpResponse {
    own_page(
        status,
        UnlockPage {
            title: &prompt.title,
            handle: &prompt.handle,
            slug: &prompt.slug,
            next: &prompt.next,
            error,
        }
        .render(),
    )
}

fn redirect(status: StatusCode, location: &str) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .insert_header(("Cross-Origin-Resource-Policy", "same-origin"))
        .finish()
}

fn infra_failure(e: &impl std::fmt::Display) -> HttpResponse {
    tracing::warn!(error = %e, "pages origin could not answer");
    plain(
        StatusCode::INTERNAL_SERVER_ERROR,
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
/// [`IssuedCookie`]), host-only, and `Secure` when the origin is https.
fn visitor_cookie(https: bool, issued: &IssuedCookie) -> Cookie<'static> {
    let mut c = Cookie::new(issued.name.clone(), issued.value.clone());
    c.set_path(issued.path.clone());
    c.set_http_only(true);
    c.set_same_site(SameSite::Lax);
    c.set_secure(https);
    let secs = i64::try_from(issued.max_age.as_secs()).unwrap_or(i64::MAX);
    c.set_max_age(actix_web::cookie::time::Duration::seconds(secs));
    c
}

fn with_cookie(
    state: &PagesState,
    mut response: HttpResponse,
    cookie: Option<&IssuedCookie>,
) -> HttpResponse {
    if let Some(issued) = cookie
        && let Err(e) = response.add_cookie(&visitor_cookie(state.origins().https(), issued))
    {
        return infra_failure(&e);
    }
    response
}

/// Values of every visitor cookie of `kind` (one per page; each names its page inside).
fn cookie_values(cookies: &[Cookie<'static>], kind: TokenKind) -> Vec<String> {
    cookies
        .iter()
        .filter(|c| cookie_kind(c.name()) == Some(kind))
        .map(|c| c.value().to_owned())
        .collect()
}

/// Whether `Accept-Encoding` takes gzip (by name or `*`, with a non-zero weight).
fn accepts_gzip(req: &HttpRequest) -> bool {
    req.headers()
        .get_all(header::ACCEPT_ENCODING)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let coding = parts.next().unwrap_or("");
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
        })
}

/// `GET`/`HEAD` of anything else: a short link (`/s/{code}`, matched here rather than by a
/// route pattern, which would run a regex on every page request) or a page's file.
async fn visit(state: web::Data<PagesState>, req: HttpRequest) -> HttpResponse {
    let head = match *req.method() {
        Method::GET => false,
        Method::HEAD => true,
        _ => {
            return HttpResponse::MethodNotAllowed()
                .insert_header((header::ALLOW, "GET, HEAD"))
                .finish();
        }
    };
    let short_link = || req.uri().path().strip_prefix("/s/");
    let owner = match target(&state, &req) {
        Target::Owner(handle) => Some(handle),
        Target::Shared if short_link().is_none() => None,
        Target::Shared | Target::Links => {
            let Some(code) = short_link() else {
                return not_found();
            };
            return match state.serving.short_link(code).await {
                Ok(answer) => respond(&state, answer),
                Err(e) => infra_failure(&e),
            };
        }
        Target::Unknown => return not_found(),
    };
    let principal = match req.headers().get(header::AUTHORIZATION) {
        None => None,
        Some(value) => {
            let value = value.to_str().unwrap_or("");
            match state.keys.authenticate(Some(value)).await {
                Ok(p) => Some(p),
                Err(e) => return actix_web::ResponseError::error_response(&ApiError::from(e)),
            }
        }
    };
    let cookies: Vec<Cookie<'static>> = if req.headers().contains_key(header::COOKIE) {
        req.cookies().map(|c| c.clone()).unwrap_or_default()
    } else {
        Vec::new()
    };
    let (unlock, access, view) = (
        cookie_values(&cookies, TokenKind::Unlock),
        cookie_values(&cookies, TokenKind::Access),
        cookie_values(&cookies, TokenKind::View),
    );
    let if_none_match = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok());
    let answer = state
        .serving
        .visit(Visit {
            owner: owner.as_deref(),
            path: req.uri().path(),
            query: req.query_string(),
            head,
            visitor: Visitor {
                principal: principal.as_ref(),
                unlock: unlock.iter().map(String::as_str).collect(),
                access: access.iter().map(String::as_str).collect(),
                view: view.iter().map(String::as_str).collect(),
            },
            if_none_match,
            accepts_gzip: accepts_gzip(&req),
        })
        .await;
    match answer {
        Ok(answer) => respond(&state, answer),
        Err(e) => infra_failure(&e),
    }
}

fn respond(state: &PagesState, answer: Answer) -> HttpResponse {
    match answer {
        Answer::File(file) => {
            let status = if file.found {
                StatusCode::OK
            } else {
                StatusCode::NOT_FOUND
            };
            let mut builder = HttpResponse::build(status);
            builder
                .insert_header((header::CONTENT_TYPE, file.content_type.as_str()))
                .insert_header((header::CACHE_CONTROL, cache_control(file.cache)))
                .insert_header(("X-Content-Type-Options", "nosniff"));
            if file.found {
                builder.insert_header((header::ETAG, file.etag.as_str()));
            }
            if file.varies {
                builder.insert_header((header::VARY, "Accept-Encoding"));
            }
            if file.gzip {
                builder.insert_header((header::CONTENT_ENCODING, "gzip"));
            }
            if file.guarded {
                // Only the page itself may frame or embed what its policy guards.
                builder
                    .insert_header((header::CONTENT_SECURITY_POLICY, "frame-ancestors 'self'"))
                    .insert_header(("X-Frame-Options", "SAMEORIGIN"))
                    .insert_header(("Cross-Origin-Resource-Policy", "same-origin"));
            }
            let cookie = file.cookie.clone();
            with_cookie(state, builder.body(file.body), cookie.as_ref())
        }
        Answer::NotModified { etag, cache } => HttpResponse::NotModified()
            .insert_header((header::ETAG, etag))
            .insert_header((header::CACHE_CONTROL, cache_control(cache)))
            .finish(),
        Answer::Redirect {
            location,
            permanent,
        } => {
            let status = if permanent {
                StatusCode::PERMANENT_REDIRECT
            } else {
                StatusCode::FOUND
            };
            redirect(status, &location)
        }
        Answer::NotFound => not_found(),
        Answer::Gone => gone(),
        Answer::Password(prompt) => password_form(StatusCode::UNAUTHORIZED, &prompt, None),
        Answer::SignIn { location } => redirect(StatusCode::FOUND, &location),
        Answer::Forbidden { email } => {
            let text = match email {
                Some(e) => format!(
                    "You are signed in as {e}, and this page is not shared with that account."
                ),
                None => "This page is not shared with the account you signed in with.".into(),
            };
            notice(
                StatusCode::FORBIDDEN,
                "This page is not shared with you",
                &text,
            )
        }
    }
}

/// The password form; a field it lacks is empty. `handle` counts only on the shared
/// origin: on an owner's origin the host names the owner.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct UnlockForm {
    handle: String,
    slug: String,
    password: String,
    next: String,
}

/// `POST /-/unlock`: the password form.
async fn unlock(state: web::Data<PagesState>, req: HttpRequest, body: web::Bytes) -> HttpResponse {
    // On a per-owner origin the host names the page's owner, never the form: a page could
    // otherwise post guesses for another owner's page from its own origin.
    let Some(owner) = page_owner(&state, &req) else {
        return not_found();
    };
    let origin = match &owner {
        Some(handle) => state.origins().owner_origin(handle),
        None => state.origins().links_origin(),
    };
    if !same_origin(&req, &origin) {
        return notice(
            StatusCode::FORBIDDEN,
            "Refused",
            "A page's password can only be sent from that page's own form.",
        );
    }
    let Ok(f) = serde_urlencoded::from_bytes::<UnlockForm>(&body) else {
        return notice(
            StatusCode::BAD_REQUEST,
            "Bad request",
            "The form could not be read.",
        );
    };
    if !quire_pages::validate::is_slug(&f.slug) {
        return notice(
            StatusCode::BAD_REQUEST,
            "Bad request",
            "The form's slug is not a page's slug.",
        );
    }
    let client = client_ip::of(&req, &state.trusted_proxies);
    let attempt = Unlock {
        handle: owner.as_deref().unwrap_or(&f.handle),
        slug: &f.slug,
        password: &f.password,
        next: &f.next,
        client: &client,
    };
    match state.serving.unlock(attempt).await {
        Ok(admitted) => with_cookie(
            &state,
            redirect(StatusCode::SEE_OTHER, &admitted.location),
            admitted.cookie.as_ref(),
        ),
        Err(UnlockError::Wrong(prompt)) => password_form(
            StatusCode::UNAUTHORIZED,
            &prompt,
            Some("That password is not right."),
        ),
        Err(UnlockError::Throttled { retry_after_secs }) => {
            let minutes = Duration::from_secs(retry_after_secs).as_secs().div_ceil(60);
            let mut response = notice(
                StatusCode::TOO_MANY_REQUESTS,
                "Too many attempts",
                &format!(
                    "Too many passwords were tried for this page from your network. \
                     Try again in {minutes} minute(s)."
                ),
            );
            if let Ok(v) = header::HeaderValue::from_str(&retry_after_secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
            response
        }
        Err(UnlockError::NotFound) => not_found(),
        Err(UnlockError::Gone) => gone(),
        Err(UnlockError::Infra(e)) => infra_failure(&e),
    }
}

/// `GET /-/pass?token=…&next=…`: the dashboard's hand-off for private and allow-list pages.
async fn pass(state: web::Data<PagesState>, req: HttpRequest) -> HttpResponse {
    let q: HashMap<String, String> =
        serde_urlencoded::from_str::<Vec<(String, String)>>(req.query_string())
            .map(|pairs| pairs.into_iter().collect())
            .unwrap_or_default();
    let token = q.get("token").map_or("", String::as_str);
    let next = q.get("next").map_or("", String::as_str);
    let Some(owner) = page_owner(&state, &req) else {
        return not_found();
    };
    match state
        .serving
        .accept_pass(owner.as_deref(), token, next)
        .await
    {
        Ok(admitted) => {
            let mut response = with_cookie(
                &state,
                redirect(StatusCode::SEE_OTHER, &admitted.location),
                admitted.cookie.as_ref(),
            );
            response.headers_mut().insert(
                header::REFERRER_POLICY,
                header::HeaderValue::from_static("no-referrer"),
            );
            response
        }
        Err(PassError::Forbidden) => notice(
            StatusCode::FORBIDDEN,
            "This sign-in link has expired",
            "Sign-in links work once, within a minute. Open the page's address again to get a new one.",
        ),
        Err(PassError::NotFound) => not_found(),
        Err(PassError::Infra(e)) => infra_failure(&e),
    }
}

async fn healthz() -> HttpResponse {
    plain(StatusCode::OK, "ok")
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    #[test]
    fn visitor_cookies_are_page_scoped_http_only_and_secure_on_https() {
        let issued = IssuedCookie {
            name: "__Host-quire_unlock_site".into(),
            value: "v".into(),
            path: "/".into(),
            max_age: Duration::from_secs(60),
        };
        let https = visitor_cookie(true, &issued).to_string();
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
        assert!(
            !visitor_cookie(false, &issued)
                .to_string()
                .contains("Secure")
        );
    }

    #[test]
    fn gzip_is_taken_only_when_accepted() {
        let with = |v: &str| {
            accepts_gzip(
                &TestRequest::default()
                    .insert_header((header::ACCEPT_ENCODING, v))
                    .to_http_request(),
            )
        };
        assert!(with("gzip, deflate, br"));
        assert!(with("br;q=1.0, GZIP;q=0.5"));
        assert!(with("*"));
        assert!(!with("gzip;q=0"));
        assert!(!with("br, deflate"));
        assert!(!accepts_gzip(&TestRequest::default().to_http_request()));
    }
}
