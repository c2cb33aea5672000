//! The auth subset at `/auth/v1/*`: GoTrue's paths, bodies and answers, so supabase-js and
//! supabase-py sign users up and in unchanged. The keys are checked as for the REST subset
//! (the `apikey`); the bearer token of `user` and `logout` is the user's access token,
//! verified by the use case, and refusals keep GoTrue's shape
//! (`{code, error_code, msg}`).

use actix_web::http::{Method, StatusCode, header};
use actix_web::{HttpRequest, HttpResponse};
use quire_databases::{AuthError, SignOutScope, SignedUp, TenantAuth, plausible_link_token};
use quire_edge::AppState;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::credentials::bearer;
use crate::errors::cors;

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
    match e {
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
    if let AuthError::RateLimited { retry_after_secs } = e
        && let Ok(value) = header::HeaderValue::from_str(&retry_after_secs.to_string())
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
        (&Method::GET, "verify") => verified(&auth, &client, req).await,
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

/// Whether the request is a confirmation link this gateway could have sent.
pub fn plausible_link(req: &HttpRequest) -> bool {
    query_value(req, "type").as_deref() == Some("signup")
        && query_value(req, "token").is_some_and(|t| plausible_link_token(&t))
}

/// The page for a link this gateway never sent.
pub fn unknown_link() -> HttpResponse {
    link_page(
        StatusCode::BAD_REQUEST,
        "Unknown link",
        "This link is not one this service sent.",
    )
}

/// The confirmation link's page: plain HTML that says what happened and what to do next,
/// with nothing to load (no redirect: the link's `redirect_to` would be an open one).
async fn verified(auth: &TenantAuth, client: &str, req: &HttpRequest) -> HttpResponse {
    let token = query_value(req, "token").unwrap_or_default();
    match auth.verify(client, &token).await {
        Ok(_) => link_page(
            StatusCode::OK,
            "Address confirmed",
            "Your address is confirmed. You can close this page and sign in.",
        ),
        Err(AuthError::LinkInvalid) => link_page(
            StatusCode::FORBIDDEN,
            "Link expired",
            "This link has expired or was already used. Sign up again to get a new one.",
        ),
        Err(AuthError::RateLimited { .. }) => link_page(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many links",
            "Too many links were opened from this address. Try again in a few minutes.",
        ),
        Err(e) => {
            tracing::error!(error = %e, "a confirmation link could not be checked");
            link_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong",
                "The address could not be confirmed now. Open the link again in a minute.",
            )
        }
    }
}

fn link_page(status: StatusCode, title: &str, text: &str) -> HttpResponse {
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title></head><body style=\"font-family: system-ui, sans-serif; \
         max-width: 32rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5\">\
         <h1>{title}</h1><p>{text}</p></body></html>"
    );
    HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
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
