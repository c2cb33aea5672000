//! The auth subset at `/auth/v1/*`: GoTrue's paths, bodies and answers, so supabase-js and
//! supabase-py sign users up and in unchanged. The keys are checked as for the REST subset
//! (the `apikey`); the bearer token of `user` and `logout` is the user's access token,
//! verified by the use case, and refusals keep GoTrue's shape
//! (`{code, error_code, msg}`). The confirmation link is the exception, opened from an email
//! with no key: its page (`GET verify`) spends nothing and asks for the password chosen at
//! sign-up, and its button posts the token and that password back (`POST verify`, from the
//! API origin's own page only, as the dashboard's forms); a wrong password answers the page
//! again.

use actix_web::http::{Method, StatusCode, header};
use actix_web::{HttpRequest, HttpResponse};
use quire_databases::{AuthError, SignOutScope, SignedUp, TenantAuth, plausible_link_token};
use quire_edge::AppState;
use quire_edge::origin::same_origin;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::credentials::bearer;
use crate::errors::cors;

#[cfg(test)]
mod bodies;

/// `POST signup`'s body (supabase-js also sends `gotrue_meta_security`, which is ignored).
#[derive(Debug, Deserialize)]
struct SignUpBody {
    email: Option<String>,
    password: Option<String>,
    data: Option<Value>,
}

/// `POST token`'s body, for either grant.
#[derive(Debug, Deserialize)]
struct TokenBody {
    email: Option<String>,
    password: Option<String>,
    refresh_token: Option<String>,
}

/// `PUT user`'s body.
#[derive(Debug, Deserialize)]
struct UserBody {
    email: Option<String>,
    password: Option<String>,
    data: Option<Value>,
}

fn json_answer(status: StatusCode, body: &Value) -> HttpResponse {
    cors(
        HttpResponse::build(status)
            .insert_header((header::CONTENT_TYPE, "application/json"))
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .body(body.to_string()),
    )
}

/// A refusal in GoTrue's shape.
fn refused(e: &AuthError) -> HttpResponse {
    let busy = e.status() == 503;
    match e {
        // The account's share of connections, or the database's, is in use: the tenant's
        // own load, worth a retry, not an operator's alarm.
        AuthError::Infra(cause) if busy => {
            tracing::warn!(error = %cause, "a data API auth request found no connection free");
        }
        AuthError::Infra(cause) => {
            tracing::error!(error = %cause, "a data API auth request failed");
        }
        AuthError::EmailNotSent(cause) => {
            tracing::warn!(error = %cause, "a confirmation email was not sent");
        }
        _ => {}
    }
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json_answer(
        status,
        &json!({
            "code": e.status(),
            "error_code": e.error_code(),
            "msg": e.public_message(),
        }),
    );
    let retry_after = match e {
        AuthError::RateLimited { retry_after_secs } => Some(*retry_after_secs),
        _ if busy => Some(1),
        _ => None,
    };
    if let Some(secs) = retry_after
        && let Ok(value) = header::HeaderValue::from_str(&secs.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

fn answer(result: Result<Value, AuthError>) -> HttpResponse {
    match result {
        Ok(body) => json_answer(StatusCode::OK, &body),
        Err(e) => refused(&e),
    }
}

fn body<T: serde::de::DeserializeOwned>(raw: &[u8]) -> Result<T, AuthError> {
    serde_json::from_slice(raw)
        .map_err(|_| AuthError::Validation("Could not read the request body as JSON".into()))
}

fn query_value(req: &HttpRequest, name: &str) -> Option<String> {
    url::form_urlencoded::parse(req.query_string().as_bytes())
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.into_owned())
}

fn required(value: Option<String>, what: &str) -> Result<String, AuthError> {
    value
        .filter(|v| !v.is_empty())
        .ok_or_else(|| AuthError::Validation(format!("{what} is required")))
}

fn not_found() -> HttpResponse {
    json_answer(
        StatusCode::NOT_FOUND,
        &json!({"code": 404, "error_code": "not_found", "msg": "Not found"}),
    )
}

fn settings_json(auth_settings: quire_databases::AuthSettings) -> Value {
    json!({
        "external": {"email": true, "phone": false, "anonymous_users": false},
        "disable_signup": auth_settings.disable_signup,
        "mailer_autoconfirm": !auth_settings.confirm_email,
        "phone_autoconfirm": false,
        "sms_provider": "",
        "saml_enabled": false,
    })
}

/// One request under `/auth/v1/`; `path` is what follows it.
pub async fn serve(
    state: &AppState,
    req: &HttpRequest,
    auth: TenantAuth,
    path: &str,
    raw: &[u8],
) -> HttpResponse {
    let client = quire_kernel::address_key(&quire_edge::client_ip::of(req, &state.trusted_proxies));
    let token = bearer(req);
    let method = req.method();
    match (method, path.trim_end_matches('/')) {
        (&Method::GET, "health") => json_answer(
            StatusCode::OK,
            &json!({
                "name": "GoTrue",
                "version": "quire",
                "description": "Quire's auth subset for a database's users",
            }),
        ),
        (&Method::GET, "verify") => confirmation_page(&auth, &client, req).await,
        (&Method::POST, "verify") => confirmed(&auth, &client, raw).await,
        (&Method::GET, "settings") => answer(auth.settings().await.map(settings_json)),
        (&Method::POST, "signup") => answer(sign_up(&auth, &client, raw).await),
        (&Method::POST, "token") => {
            let grant = query_value(req, "grant_type").unwrap_or_default();
            answer(grant_token(&auth, &client, &grant, raw).await)
        }
        (&Method::GET, "user") => answer(auth.user(token.as_deref()).await.map(|u| u.to_json())),
        (&Method::PUT, "user") => answer(update_user(&auth, token.as_deref(), raw).await),
        (&Method::POST, "logout") => {
            let scope = match query_value(req, "scope") {
                None => Some(SignOutScope::Global),
                Some(raw) => SignOutScope::parse(&raw),
            };
            let Some(scope) = scope else {
                return refused(&AuthError::Validation(
                    "scope must be global, local or others".into(),
                ));
            };
            match auth.sign_out(token.as_deref(), scope).await {
                Ok(()) => cors(HttpResponse::NoContent().finish()),
                Err(e) => refused(&e),
            }
        }
        _ => not_found(),
    }
}

/// Whether the request is the confirmation link's (its page, or its button), the one route
/// open without a key.
pub fn is_link(req: &HttpRequest, path: &str) -> bool {
    path == "verify" && matches!(*req.method(), Method::GET | Method::POST)
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
async fn confirmation_page(auth: &TenantAuth, client: &str, req: &HttpRequest) -> HttpResponse {
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
async fn confirmed(auth: &TenantAuth, client: &str, raw: &[u8]) -> HttpResponse {
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

async fn sign_up(auth: &TenantAuth, client: &str, raw: &[u8]) -> Result<Value, AuthError> {
    let body: SignUpBody = body(raw)?;
    let email = required(body.email, "email")?;
    let password = required(body.password, "password")?;
    Ok(
        match auth.sign_up(client, &email, password, body.data).await? {
            SignedUp::Session(session) => session.to_json(),
            SignedUp::Unconfirmed(user) => user.to_json(),
        },
    )
}

async fn grant_token(
    auth: &TenantAuth,
    client: &str,
    grant: &str,
    raw: &[u8],
) -> Result<Value, AuthError> {
    let body: TokenBody = body(raw)?;
    let session = match grant {
        "password" => {
            let email = required(body.email, "email")?;
            let password = required(body.password, "password")?;
            auth.password_grant(client, &email, password).await?
        }
        "refresh_token" => {
            let token = required(body.refresh_token, "refresh_token")?;
            auth.refresh_grant(client, &token).await?
        }
        _ => return Err(AuthError::UnsupportedGrant),
    };
    Ok(session.to_json())
}

async fn update_user(
    auth: &TenantAuth,
    token: Option<&str>,
    raw: &[u8],
) -> Result<Value, AuthError> {
    let body: UserBody = body(raw)?;
    let user = auth
        .update_user(
            token,
            body.email.as_deref(),
            body.password.filter(|p| !p.is_empty()),
            body.data,
        )
        .await?;
    Ok(user.to_json())
}
