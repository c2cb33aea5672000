//! The mails that sign users in and what their codes and links are spent on: `POST
//! recover` (supabase-js's `resetPasswordForEmail`), `POST otp` (`signInWithOtp`), `POST
//! resend` (`resend`), each answering `{}`, and `POST verify` with JSON (`verifyOtp`),
//! answering a session. `redirect_to` comes in the query, as the clients send it.

use actix_web::HttpRequest;
use quire_databases::{AuthError, OtpVerification, TenantAuth};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{body, query_value};

/// `POST recover`'s, `POST otp`'s and `POST resend`'s bodies (the clients also send
/// `gotrue_meta_security` and PKCE's `code_challenge`, which are ignored: the mails'
/// links carry `token_hash`, which `verifyOtp` takes in either flow).
#[derive(Debug, Deserialize)]
struct MailBody {
    email: Option<String>,
    phone: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    create_user: Option<bool>,
    data: Option<Value>,
}

/// `POST verify`'s JSON body.
#[derive(Debug, Deserialize)]
struct VerifyBody {
    #[serde(rename = "type")]
    kind: Option<String>,
    token: Option<String>,
    token_hash: Option<String>,
    email: Option<String>,
    phone: Option<String>,
}

fn no_phone(phone: Option<&str>) -> Result<(), AuthError> {
    if phone.is_some_and(|p| !p.is_empty()) {
        return Err(AuthError::Validation(
            "Phone numbers are not offered".into(),
        ));
    }
    Ok(())
}

/// The body's address, required.
fn email(body: &MailBody, missing: &str) -> Result<String, AuthError> {
    no_phone(body.phone.as_deref())?;
    body.email
        .clone()
        .filter(|e| !e.is_empty())
        .ok_or_else(|| AuthError::Validation(missing.to_owned()))
}

pub(super) async fn recover(
    auth: &TenantAuth,
    client: &str,
    req: &HttpRequest,
    raw: &[u8],
) -> Result<Value, AuthError> {
    let body: MailBody = body(raw)?;
    let email = email(&body, "Password recovery requires an email")?;
    let redirect_to = query_value(req, "redirect_to");
    auth.recover(client, &email, redirect_to.as_deref()).await?;
    Ok(json!({}))
}

pub(super) async fn otp(
    auth: &TenantAuth,
    client: &str,
    req: &HttpRequest,
    raw: &[u8],
) -> Result<Value, AuthError> {
    let body: MailBody = body(raw)?;
    let email = email(&body, "One of email or phone must be set")?;
    let redirect_to = query_value(req, "redirect_to");
    auth.sign_in_by_mail(
        client,
        &email,
        body.create_user.unwrap_or(true),
        body.data,
        redirect_to.as_deref(),
    )
    .await?;
    Ok(json!({}))
}

pub(super) async fn resend(
    auth: &TenantAuth,
    client: &str,
    raw: &[u8],
) -> Result<Value, AuthError> {
    let body: MailBody = body(raw)?;
    no_phone(body.phone.as_deref())?;
    auth.resend(client, body.kind.as_deref(), body.email.as_deref())
        .await?;
    Ok(json!({}))
}

pub(super) async fn verify(
    auth: &TenantAuth,
    client: &str,
    raw: &[u8],
) -> Result<Value, AuthError> {
    let body: VerifyBody = body(raw)?;
    let verification = OtpVerification::parse(
        body.kind.as_deref(),
        body.token.as_deref(),
        body.token_hash.as_deref(),
        body.email.as_deref(),
        body.phone.as_deref(),
    )?;
    Ok(auth.verify_otp(client, verification).await?.to_json())
}
