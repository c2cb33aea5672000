//! `quire-mail`: outbound email for accounts. The send use case checks the message
//! (one strictly parsed ASCII recipient, a subject that cannot inject headers, a bounded
//! body), reserves a slot of the account's rolling 24-hour quota, hands the message to the
//! relay, and keeps the slot only if the relay accepted it. The text is never stored.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-accounts` (the caller's address, for
//! Reply-To) and `email_address` (parsing only). Its ports: [`ports::Mailer`] (the relay or
//! the outbox), [`ports::MailDispatch`] (the same, off the request path, for the account
//! flows) and [`ports::MailQuota`] (the reservations, shared by replicas).

pub mod message;
pub mod ports;
pub mod service;

pub use message::{MAX_SUBJECT_CHARS, MAX_TEXT_BYTES, MAX_TO_CHARS, OutboundMail, Recipient};
pub use ports::{MailDispatch, MailQuota, Mailer, Reservation, SendFailure};
pub use service::{
    DAILY_QUOTA, Held, MailError, MailRequest, MailService, QUOTA_WINDOW, Sent, retry_after_hours,
};
