//! `GET`/`HEAD` of a page's file or a short link: the request's credentials read, the
//! serving use case asked, its answer written.

use quire_kernel::Principal;
use quire_serving::{Asker, Conditions, LinkVisit, TokenKind, Visit, Visitor, cookie_kind};

use super::answers::{infra_failure, method_not_allowed, not_found, respond};
use super::{PagesState, Target};
use quire_kernel::ErrorCode;
use quire_keys::AuthError;
use quire_wire::{Request, Response};

/// Values of every visitor cookie of `kind` (one per page; each names its page inside).
pub(super) fn cookie_values<'a>(request: &Request<'a>, kind: TokenKind) -> Vec<&'a str> {
    request
        .all("cookie")
        .flat_map(|header| header.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(name, _)| cookie_kind(name.trim()) == Some(kind))
        .map(|(_, value)| value.trim().trim_matches('"'))
        .collect()
}

/// Whether `Accept-Encoding` takes gzip (by name or `*`, with a non-zero weight).
fn accepts_gzip(request: &Request<'_>) -> bool {
    request
        .all("accept-encoding")
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

/// The conditional and range headers, read in one pass over the headers (the first of each
/// name counts): most requests carry none, and every header is looked at once.
fn conditions<'a>(request: &Request<'a>) -> Conditions<'a> {
    let mut c = Conditions::default();
    for header in request.headers {
        let name = header.name.as_bytes();
        let slot = match name.first() {
            Some(b'i' | b'I') => {
                if name.eq_ignore_ascii_case(b"if-none-match") {
                    &mut c.if_none_match
                } else if name.eq_ignore_ascii_case(b"if-match") {
                    &mut c.if_match
                } else if name.eq_ignore_ascii_case(b"if-modified-since") {
                    &mut c.if_modified_since
                } else if name.eq_ignore_ascii_case(b"if-unmodified-since") {
                    &mut c.if_unmodified_since
                } else if name.eq_ignore_ascii_case(b"if-range") {
                    &mut c.if_range
                } else {
                    continue;
                }
            }
            Some(b'r' | b'R') if name.eq_ignore_ascii_case(b"range") => &mut c.range,
            _ => continue,
        };
        if slot.is_none() {
            *slot = std::str::from_utf8(header.value).ok();
        }
    }
    c
}

/// A refused `Authorization`, answered as the API answers it: the kernel's code and status,
/// the refusal's own text, and the bearer challenge.
fn refused(e: AuthError) -> Response {
    let (code, challenge, description) = match &e {
        AuthError::InvalidApiKey => (
            ErrorCode::InvalidApiKey,
            Some(r#"Bearer realm="quire""#.to_owned()),
            None,
        ),
        AuthError::InvalidToken(description) => (
            ErrorCode::InvalidToken,
            Some(format!(
                r#"Bearer realm="quire", error="invalid_token", error_description="{description}""#
            )),
            Some(*description),
        ),
        AuthError::NotActivated => (ErrorCode::NotActivated, None, None),
        AuthError::NotMaster => (ErrorCode::InsufficientScope, None, None),
        AuthError::Infra(cause) => {
            tracing::error!(kind = ?cause.kind(), error = %cause.chain(), "infrastructure failure");
            (ErrorCode::InternalError, None, None)
        }
    };
    let message = match e {
        AuthError::Infra(_) => "internal error; try again later".to_owned(),
        refusal => refusal.to_string(),
    };
    let mut body = serde_json::json!({ "error": code.as_str(), "message": message });
    if let Some(description) = description {
        body["error_description"] = description.into();
    }
    let mut response = Response::new(code.http_status())
        .header("content-type", "application/json")
        .header("cache-control", "no-store")
        .body(body.to_string());
    if let Some(challenge) = challenge {
        response = response.header("www-authenticate", challenge);
    }
    response
}

/// The caller of an `Authorization` header, if it has one; a refused one is answered.
pub(super) async fn principal(
    state: &PagesState,
    request: &Request<'_>,
) -> Result<Option<Principal>, Response> {
    let Some(header) = request
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("authorization"))
    else {
        return Ok(None);
    };
    let value = std::str::from_utf8(header.value).unwrap_or("");
    state
        .keys
        .authenticate(Some(value))
        .await
        .map(Some)
        .map_err(refused)
}

/// The code of a short link's path (`/s/{code}`) on a host that serves short links.
pub(super) fn short_link_code<'a>(state: &PagesState, request: &Request<'a>) -> Option<&'a str> {
    let code = request.path.strip_prefix("/s/")?;
    matches!(state.target(request), Target::Shared | Target::Links).then_some(code)
}

/// `GET`/`HEAD` of a short link, or (`confirm`) the `POST` of a budgeted link's continue
/// page. Short links are never indexed.
pub(super) async fn short_link(
    state: &PagesState,
    request: &Request<'_>,
    code: &str,
    confirm: bool,
) -> Response {
    let principal = match principal(state, request).await {
        Ok(p) => p,
        Err(refusal) => return refusal,
    };
    let answer = state
        .serving
        .short_link(LinkVisit {
            code,
            head: request.method == "HEAD",
            visitor: Visitor {
                principal: principal.as_ref(),
                unlock: cookie_values(request, TokenKind::Unlock),
                access: cookie_values(request, TokenKind::Access),
                view: Vec::new(),
            },
            asker: asker(request, confirm),
            referer: request.header("referer"),
        })
        .await;
    match answer {
        Ok(answer) => respond(answer, state.origins().https()),
        Err(e) => infra_failure(&e),
    }
    .header("x-robots-tag", "noindex")
}

/// Who asks, as a budget judges it; `confirm` for the continue page's post.
fn asker<'a>(request: &Request<'a>, confirm: bool) -> Asker<'a> {
    Asker {
        user_agent: request.header("user-agent"),
        accept: request.header("accept"),
        confirm,
    }
}

/// `GET`/`HEAD` of anything but the origin's own endpoints: a short link (`/s/{code}`) or a
/// page's file; or (`confirm`) the `POST` of a budgeted page's continue page.
pub(super) async fn visit(state: &PagesState, request: &Request<'_>, confirm: bool) -> Response {
    let head = match request.method {
        "GET" => false,
        "HEAD" => true,
        "POST" if confirm => false,
        _ => return method_not_allowed("GET, HEAD"),
    };
    let https = state.origins().https();
    if let Some(code) = short_link_code(state, request) {
        return short_link(state, request, code, false).await;
    }
    let owner = match state.target(request) {
        Target::Owner(handle) => Some(handle),
        Target::Shared => None,
        Target::Links | Target::Unknown => return not_found(),
    };
    let principal = match principal(state, request).await {
        Ok(p) => p,
        Err(refusal) => return refusal,
    };
    let has_cookies = request.has("cookie");
    let cookies = |kind| {
        if has_cookies {
            cookie_values(request, kind)
        } else {
            Vec::new()
        }
    };
    let answer = state
        .serving
        .visit(Visit {
            owner: owner.as_deref(),
            path: request.path,
            query: request.query,
            head,
            visitor: Visitor {
                principal: principal.as_ref(),
                unlock: cookies(TokenKind::Unlock),
                access: cookies(TokenKind::Access),
                view: cookies(TokenKind::View),
            },
            conditions: conditions(request),
            accepts_gzip: accepts_gzip(request),
            asker: asker(request, confirm),
        })
        .await;
    match answer {
        Ok(answer) => respond(answer, https),
        Err(e) => infra_failure(&e),
    }
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::*;
    use quire_wire::message::Header;

    fn with<T>(headers: &[(&'static str, &'static str)], f: impl FnOnce(&Request<'_>) -> T) -> T {
        let headers: Vec<Header<'_>> = headers
            .iter()
            .map(|(name, value)| Header {
                name,
                value: value.as_bytes(),
            })
            .collect();
        let request = Request {
            method: "GET",
            path: "/",
            query: "",
            headers: &headers,
            peer: IpAddr::from([127, 0, 0, 1]),
            body: b"",
        };
        f(&request)
    }

    #[test]
    fn gzip_is_taken_only_when_accepted() {
        let accepts = |v: &'static str| with(&[("Accept-Encoding", v)], accepts_gzip);
        assert!(accepts("gzip, deflate, br"));
        assert!(accepts("br;q=1.0, GZIP;q=0.5"));
        assert!(accepts("*"));
        assert!(!accepts("gzip;q=0"));
        assert!(!accepts("br, deflate"));
        assert!(!with(&[], accepts_gzip));
    }

    #[test]
    fn conditional_headers_are_read_in_any_case_the_first_of_each() {
        with(
            &[
                ("IF-NONE-MATCH", "\"a\""),
                ("If-Match", "\"b\""),
                ("if-modified-since", "d1"),
                ("If-Unmodified-Since", "d2"),
                ("Range", "bytes=0-1"),
                ("range", "bytes=5-6"),
                ("If-Range", "\"c\""),
                ("Ignored", "x"),
            ],
            |r| {
                assert_eq!(
                    conditions(r),
                    Conditions {
                        if_match: Some("\"b\""),
                        if_none_match: Some("\"a\""),
                        if_modified_since: Some("d1"),
                        if_unmodified_since: Some("d2"),
                        range: Some("bytes=0-1"),
                        if_range: Some("\"c\""),
                    }
                );
            },
        );
        assert!(with(&[("Accept", "*/*")], |r| conditions(r).is_empty()));
    }

    #[test]
    fn visitor_cookies_are_read_from_every_cookie_header() {
        let unlock = "quire_unlock_site";
        assert_eq!(cookie_kind(unlock), Some(TokenKind::Unlock));
        let values = with(
            &[
                ("Cookie", "theme=dark; quire_unlock_site=a.b"),
                ("cookie", " quire_unlock_other = \"c.d\" ;junk"),
            ],
            |r| {
                cookie_values(r, TokenKind::Unlock)
                    .into_iter()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            },
        );
        assert_eq!(values, ["a.b", "c.d"]);
    }
}
