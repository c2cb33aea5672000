//! `quire-smtp`: the adapters of `quire-mail`'s `Mailer` port. [`SmtpMailer`] hands each
//! message to a relay through `mail-send` (implicit TLS, STARTTLS, or plain to a loopback
//! relay only), within one 15 s deadline; [`OutboxMailer`] writes each message as an `.eml`
//! file, atomically, for instances without a relay. Both build the same message: From the
//! operator's address, Reply-To the account holder, `text/plain; charset=utf-8`, a
//! `Message-ID` made of the mail id. [`BackgroundDispatch`] sends through either off the
//! request path, for the account flows.
//!
//! It may depend on `quire-mail`, `mail-send` (with its message builder), tokio, url and
//! `metrics` (the queue of messages sent off the request path).

mod dispatch;
mod message;
mod outbox;
mod relay;

pub use dispatch::BackgroundDispatch;
pub use message::build;
pub use outbox::OutboxMailer;
pub use relay::{RELAY_DEADLINE, RelayConfig, RelayConfigError, Security, SmtpMailer};
