//! The auth subset at `/auth/v1/*`: GoTrue's paths, bodies and answers, so supabase-js and
//! supabase-py sign users up and in unchanged. The keys are checked as for the REST subset
//! (the `apikey`); the bearer token of `user` and `logout` is the user's access token,
//! verified by the use case, and refusals keep GoTrue's shape
//! (`{code, error_code, msg}`). Here sign-up, the token grants, the user and sign-out; the
//! mails that sign users in (`recover`, `otp`, `resend`) and `verify` with JSON in
//! `flows.rs`; the `service_role`'s admin API in `admin.rs`. The sign-up confirmation link
//! is the exception, opened from an email with no key: its page and button in `link.rs`.

mod admin;
mod flows;
mod link;

use actix_web::http::{Method, StatusCode, header};
use actix_web::{HttpRequest, HttpResponse};
use quire_databases::{AuthError, SignOutScope, SignedUp, TenantAuth};
use quire_edge::AppState;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::credentials::bearer;
use crate::errors::cors;

pub(crate) use link::{is_link, link_refusal, refused_link};

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
            tracing::warn!(error = %cause, "an end user's email was not sent");
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
        AuthError::RateLimited { retry_after_secs }
        | AuthError::MailTooSoon { retry_after_secs } => Some(*retry_after_secs),
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

/// `raw` as JSON of `T`, or GoTrue's refusal of a body it cannot read.
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

fn settings_json(auth_settings: &quire_databases::AuthSettings) -> Value {
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
        (&Method::GET, "verify") => link::confirmation_page(&auth, &client, req).await,
        (&Method::POST, "verify") if is_link(req, "verify") => {
            link::confirmed(&auth, &client, raw).await
        }
        (&Method::POST, "verify") => answer(flows::verify(&auth, &client, raw).await),
        (&Method::POST, "recover") => answer(flows::recover(&auth, &client, req, raw).await),
        (&Method::POST, "otp") => answer(flows::otp(&auth, &client, req, raw).await),
        (&Method::POST, "resend") => answer(flows::resend(&auth, &client, raw).await),
        (_, route) if route == "admin" || route.starts_with("admin/") => {
            admin::serve(state, req, &auth, route, raw).await
        }
        (&Method::GET, "settings") => answer(auth.settings().await.map(|s| settings_json(&s))),
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
