//! What every dashboard answer carries: the HTML page headers, and the redirect after a post;
//! and what a list page shows of its list ([`listed`]).

use actix_web::HttpResponse;
use actix_web::http::{StatusCode, header};
use askama::Template;

use quire_edge::ApiError;
use quire_edge::AppState;

/// An HTML response with the headers every dashboard page carries.
pub(crate) fn page(
    state: &AppState,
    status: StatusCode,
    template: &impl Template,
) -> Result<HttpResponse, ApiError> {
    page_posting_to(state, status, template, "")
}

/// [`page`] for a form whose post redirects to `form_target` (a CSP source: an OAuth
/// client's origin or private scheme) as well.
pub(crate) fn page_posting_to(
    state: &AppState,
    status: StatusCode,
    template: &impl Template,
    form_target: &str,
) -> Result<HttpResponse, ApiError> {
    render(state, status, template, form_target, "", "'self'")
}

/// [`page`] for the Files pages: their script sends the upload to this origin (XHR, for the
/// progress), so `connect-src 'self'`; nothing else changes.
pub(crate) fn page_with_uploads(
    state: &AppState,
    status: StatusCode,
    template: &impl Template,
) -> Result<HttpResponse, ApiError> {
    render(
        state,
        status,
        template,
        "",
        "connect-src 'self'; ",
        "'self'",
    )
}

/// [`page`] for the activation page (the captcha): its scripts' workers and fetches from
/// this origin only, and the styles the widget writes inline.
pub(crate) fn page_with_scripts(
    state: &AppState,
    status: StatusCode,
    template: &impl Template,
) -> Result<HttpResponse, ApiError> {
    render(
        state,
        status,
        template,
        "",
        "worker-src 'self'; connect-src 'self'; ",
        "'self' 'unsafe-inline'",
    )
}

fn render(
    state: &AppState,
    status: StatusCode,
    template: &impl Template,
    form_target: &str,
    scripts: &str,
    styles: &str,
) -> Result<HttpResponse, ApiError> {
    let body = template.render().map_err(|e| ApiError::internal(&e))?;
    // Browsers apply form-action to the redirects that follow a post too: signing in for a
    // private page ends on the pages origin.
    let pages_origin = state.serving.config().origins.csp_source();
    Ok(HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header(("X-Frame-Options", "DENY"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        // Not `no-referrer`, even on the pages that carry a one-time link's token in their
        // URL: under `no-referrer` a browser posts their forms with `Origin: null`, which the
        // same-origin check must refuse. `same-origin` keeps the token from every other
        // origin, which is what the policy is for.
        .insert_header(("Referrer-Policy", "same-origin"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            format!(
                "default-src 'none'; script-src 'self'; {scripts}style-src {styles}; img-src 'self' data:; \
                 form-action 'self' {pages_origin} {form_target}; frame-ancestors 'none'; base-uri 'none'"
            ),
        ))
        .body(body))
}

#[derive(Template)]
#[template(path = "message.html")]
struct MessagePage<'a> {
    signed_in_as: Option<String>,
    title: &'a str,
    text: &'a str,
    tone: &'a str,
    link: Option<(&'a str, &'a str)>,
}

/// A page that only says something: an outcome, with where to go next.
pub(crate) struct Message<'a> {
    pub title: &'a str,
    pub text: &'a str,
    /// `notice` for news, `error` for a refusal.
    pub tone: &'a str,
    pub link: Option<(&'a str, &'a str)>,
}

pub(crate) fn message(
    state: &AppState,
    status: StatusCode,
    m: &Message<'_>,
) -> Result<HttpResponse, ApiError> {
    page(
        state,
        status,
        &MessagePage {
            signed_in_as: None,
            title: m.title,
            text: m.text,
            tone: m.tone,
            link: m.link,
        },
    )
}

/// Adds `Retry-After` to a refusal page when the refusal says when to come back.
pub(crate) fn retry_after(mut response: HttpResponse, secs: Option<u64>) -> HttpResponse {
    if let Some(value) = secs.and_then(|s| header::HeaderValue::from_str(&s.to_string()).ok()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// What a list page shows: the project listed and its rows, or the refusal in their place.
#[derive(Debug)]
pub(crate) struct Listed<R> {
    /// The listed project's slug; empty when the list was refused.
    pub(crate) project: String,
    pub(crate) rows: Vec<R>,
    /// The status and words of the refusal, when the list was refused.
    pub(crate) refused: Option<(StatusCode, String)>,
}

impl<R> Listed<R> {
    /// The page's status and the error it shows (`OK` and none, or the refusal's), the
    /// project and the rows.
    pub(crate) fn parts(self) -> (StatusCode, Option<String>, String, Vec<R>) {
        let (status, error) = match self.refused {
            Some((status, words)) => (status, Some(words)),
            None => (StatusCode::OK, None),
        };
        (status, error, self.project, self.rows)
    }
}

/// A service's list (the project's slug and its items), each item a row as `row` makes
/// it, or its refusal shown in their place.
///
/// # Errors
/// A failure of the server (an infrastructure failure) rather than a refusal: the error
/// page answers instead.
pub(crate) fn listed<V, R, E>(
    outcome: Result<(quire_kernel::ProjectSlug, Vec<V>), E>,
    row: impl FnMut(V) -> R,
) -> Result<Listed<R>, ApiError>
where
    E: Clone + std::fmt::Display,
    ApiError: From<E>,
{
    match outcome {
        Ok((project, items)) => Ok(Listed {
            project: project.as_str().to_owned(),
            rows: items.into_iter().map(row).collect(),
            refused: None,
        }),
        Err(e) => {
            let answer = ApiError::from(e.clone());
            let status = actix_web::ResponseError::status_code(&answer);
            if status.is_server_error() {
                return Err(answer);
            }
            Ok(Listed {
                project: String::new(),
                rows: Vec::new(),
                refused: Some((status, e.to_string())),
            })
        }
    }
}

/// The status the API gives the same refusal (one mapping, `quire-edge`'s).
pub(crate) fn refusal_status<E: Clone>(e: &E) -> actix_web::http::StatusCode
where
    quire_edge::ApiError: From<E>,
{
    actix_web::ResponseError::status_code(&quire_edge::ApiError::from(e.clone()))
}

pub(crate) fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}
