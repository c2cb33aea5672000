//! `/api/platform/v1/email`: a message from the operator's address, with the caller as
//! Reply-To, under the account's rolling quota. The text is never echoed, stored or logged.

use actix_web::{post, web};
use quire_mail::{MailRequest, MailService};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::schema;
use quire_edge::ApiError;
use quire_edge::AppState;
use quire_edge::answer::Answer;
use quire_edge::auth::Authenticated;
use quire_edge::body::BodyUpTo;
use quire_edge::json::{RequestBody, parse};

/// The largest body the route reads: 64 KiB of text may take six bytes a character once
/// JSON-escaped (`\u0001`), with room for the other fields.
const EMAIL_BODY_LIMIT: usize = 6 * quire_mail::MAX_TEXT_BYTES + 4 * 1024;

/// One message to one address.
#[derive(Deserialize, ToSchema)]
#[schema(example = crate::examples::send_email_request)]
pub struct SendEmailRequest {
    /// One plain ASCII address, at most 254 characters.
    #[schema(schema_with = schema::email_to)]
    pub to: String,
    #[schema(schema_with = schema::email_subject)]
    pub subject: String,
    /// Plain text, at most 64 KiB; never stored or logged.
    #[schema(schema_with = schema::email_text)]
    pub text: String,
}

impl std::fmt::Debug for SendEmailRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendEmailRequest").finish_non_exhaustive()
    }
}

impl RequestBody for SendEmailRequest {}

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::sent_email)]
pub struct SentEmail {
    /// `true`: the relay (or the outbox) took the message.
    pub sent: bool,
    /// The message's id, in the relay's log or the outbox file's name.
    #[schema(format = Uuid)]
    pub mail_id: String,
    /// Sends left in the rolling 24 hours.
    pub remaining_today: u32,
}

/// Send a message (master key only; 10 per rolling 24 hours per account).
#[utoipa::path(tag = "email",
    security(("bearer" = [])),
    request_body = SendEmailRequest,
    responses(
        (status = 200, body = SentEmail),
        (status = 400, description = "invalid_json, invalid_body (a missing or mistyped field), invalid_email_input (naming the field)"),
        (status = 403, description = "insufficient_scope (app keys, bearer tokens), not_activated"),
        (status = 413, description = "payload_too_large: a body over 388 KiB, which no valid message needs"),
        (status = 429, description = "email_quota_exceeded, with retry_after_hours"),
        (status = 502, description = "send_failed: the relay refused the message or could not be reached; `message` says what it answered")))]
#[post("/email")]
pub async fn send(
    state: web::Data<AppState>,
    auth: Authenticated,
    body: BodyUpTo<EMAIL_BODY_LIMIT>,
) -> Result<Answer<SentEmail>, ApiError> {
    MailService::authorize(&auth.0)?;
    let body: SendEmailRequest = parse(&body.0)?;
    let sent = state
        .mail
        .send(
            &auth.0,
            &MailRequest {
                to: body.to,
                subject: body.subject,
                text: body.text,
            },
        )
        .await?;
    Ok(Answer::ok(SentEmail {
        sent: true,
        mail_id: sent.mail_id.to_string(),
        remaining_today: sent.remaining_today,
    }))
}
