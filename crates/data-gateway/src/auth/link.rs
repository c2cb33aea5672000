//! The sign-up confirmation link's pages: opened from an email with no key, its page (`GET
//! verify`) spends nothing and asks for the password chosen at sign-up, and its button
//! posts the token and that password back (a form, from the API origin's own page only, as
//! the dashboard's forms); a wrong password answers the page again. Plain HTML, never a
//! redirect.

use actix_web::http::{Method, StatusCode, header};
use actix_web::{HttpRequest, HttpResponse};
use quire_databases::{AuthError, TenantAuth, plausible_link_token};
use quire_edge::AppState;
use quire_edge::origin::same_origin;

use super::query_value;

/// Whether the request is the confirmation link's (its page, or its button's form), the
/// one route open without a key. A `POST verify` of JSON is supabase-js's `verifyOtp`,
/// which comes with the key as every other call.
pub fn is_link(req: &HttpRequest, path: &str) -> bool {
    let json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    path == "verify" && (*req.method() == Method::GET || (*req.method() == Method::POST && !json))
}

/// The link's `type` and `token`: from the query of its page, from the form of its button.
fn link_fields(req: &HttpRequest, raw: &[u8]) -> (Option<String>, Option<String>) {
    if req.method() == Method::POST {
        let field = |name: &str| {
            url::form_urlencoded::parse(raw)
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.into_owned())
        };
        (field("type"), field("token"))
    } else {
        (query_value(req, "type"), query_value(req, "token"))
    }
}

/// What the link's route answers before any instance starts: a button pressed on another
/// origin's page (or a post with no origin) is refused, as the dashboard refuses such
/// forms; a link this gateway never sent is unknown.
pub fn refused_link(state: &AppState, req: &HttpRequest, raw: &[u8]) -> Option<HttpResponse> {
    if req.method() == Method::POST && !same_origin(req, &state.base_url) {
        return Some(link_page(
            StatusCode::FORBIDDEN,
            "Open the link again",
            "The address is confirmed with the button on the page of the link in your \
             email. Open the link again and press its button.",
        ));
    }
    let (kind, token) = link_fields(req, raw);
    let plausible =
        kind.as_deref() == Some("signup") && token.is_some_and(|t| plausible_link_token(&t));
    (!plausible).then(|| {
        link_page(
            StatusCode::BAD_REQUEST,
            "Unknown link",
            "This link is not one this service sent.",
        )
    })
}

pub(crate) fn link_refusal(e: &AuthError) -> HttpResponse {
    match e {
        AuthError::LinkInvalid => link_page(
            StatusCode::FORBIDDEN,
            "Link expired",
            "This link has expired, was already used, or a newer sign-up replaced it. Sign \
             up again to get a new one.",
        ),
        AuthError::LinkPasswordWrong { tries_left: 0 } => link_page(
            StatusCode::FORBIDDEN,
            "Too many tries",
            "The password was wrong too many times, so this link no longer works. Sign up \
             again to get a new one.",
        ),
        AuthError::RateLimited { .. } => link_page(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many links",
            "Too many links were opened from this address. Try again in a few minutes.",
        ),
        e => {
            tracing::error!(error = %e, "a confirmation link could not be checked");
            link_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong",
                "The address could not be confirmed now. Open the link again in a minute.",
            )
        }
    }
}

/// The confirmation link's page: plain HTML with a password field and one button, which
/// posts the token back with the password. Opening it spends nothing, so mail scanners
/// that fetch links confirm nothing. No redirect: the link's `redirect_to` would be an open
/// one.
pub(super) async fn confirmation_page(
    auth: &TenantAuth,
    client: &str,
    req: &HttpRequest,
) -> HttpResponse {
    let token = query_value(req, "token").unwrap_or_default();
    if let Err(e) = auth.confirmation_page(client, &token).await {
        return link_refusal(&e);
    }
    confirmation_form(StatusCode::OK, &token, None)
}

/// The page with the form, `notice` above it (a wrong password's). `token` has the links'
/// shape (base64url, checked before): nothing to escape.
fn confirmation_form(status: StatusCode, token: &str, notice: Option<&str>) -> HttpResponse {
    let notice = notice.map_or_else(String::new, |n| {
        format!("<p role=\"alert\" style=\"color: #b91c1c; font-weight: 600\">{n}</p>")
    });
    // `verify` is relative, so the form posts back to this path whatever the proxy's.
    let form = format!(
        "{notice}<form method=\"post\" action=\"verify\">\
         <input type=\"hidden\" name=\"type\" value=\"signup\">\
         <input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <label for=\"password\" style=\"display: block; font-weight: 600; margin-bottom: \
         0.25rem\">Password</label>\
         <input id=\"password\" name=\"password\" type=\"password\" \
         autocomplete=\"current-password\" required style=\"font: inherit; display: block; \
         width: 100%; max-width: 20rem; box-sizing: border-box; padding: 0.6rem; border: 1px \
         solid #6b7280; border-radius: 0.5rem; margin-bottom: 1rem\">\
         <button type=\"submit\" style=\"font: inherit; font-weight: 600; padding: 0.75rem \
         1.5rem; border-radius: 0.5rem; border: 0; background: #2563eb; color: #fff; \
         width: 100%; max-width: 20rem\">Confirm my address</button></form>\
         <p>If you did not sign up, close this page: nothing happens without the password.</p>"
    );
    let mut page = page(
        status,
        "Confirm your address",
        "To finish signing up, enter the password you chose when you signed up and press \
         the button.",
        &form,
    );
    // Not `no-referrer` here: under it a browser posts the form with `Origin: null`, which
    // the same-origin check must refuse. `same-origin` keeps the token in this page's
    // address from every other origin, which is what the policy is for (the dashboard's
    // pages with one-time links do the same).
    page.headers_mut().insert(
        header::REFERRER_POLICY,
        header::HeaderValue::from_static("same-origin"),
    );
    page
}

/// The button: with the sign-up's password, the address confirmed and the token spent;
/// with another, the page again, saying so.
pub(super) async fn confirmed(auth: &TenantAuth, client: &str, raw: &[u8]) -> HttpResponse {
    let field = |name: &str| {
        url::form_urlencoded::parse(raw)
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    let token = field("token");
    match auth.verify(client, &token, field("password")).await {
        Ok(_) => link_page(
            StatusCode::OK,
            "Address confirmed",
            "Your address is confirmed. You can close this page and sign in.",
        ),
        Err(AuthError::LinkPasswordWrong { tries_left }) if tries_left > 0 => {
            let tries = if tries_left == 1 {
                "1 try left".to_owned()
            } else {
                format!("{tries_left} tries left")
            };
            // Said plainly: the victim of a sign-up in their name, whose password this
            // cannot be, is told what to do.
            let notice = format!(
                "That is not the password this address signed up with ({tries}). If you are \
                 sure it is the one you chose, someone may have signed up with your address \
                 after you: sign up again to get a new link."
            );
            confirmation_form(StatusCode::BAD_REQUEST, &token, Some(&notice))
        }
        Err(e) => link_refusal(&e),
    }
}

fn link_page(status: StatusCode, title: &str, text: &str) -> HttpResponse {
    page(status, title, text, "")
}

/// A page of the link: `title`, `text`, then `extra` markup; readable on a phone, nothing
/// to load, never cached, framed by nobody, its address sent to nobody.
fn page(status: StatusCode, title: &str, text: &str, extra: &str) -> HttpResponse {
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title></head><body style=\"font-family: system-ui, sans-serif; \
         max-width: 32rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5\">\
         <h1>{title}</h1><p>{text}</p>{extra}</body></html>"
    );
    HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .body(page)
}
