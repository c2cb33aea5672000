//! Ports of outbound email.

use async_trait::async_trait;
use quire_kernel::{AccountId, InfraError};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::message::OutboundMail;

/// Why the relay did not take a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendFailure {
    /// The relay answered with a refusal; the text is its reply (code, enhanced code, words).
    #[error("the mail relay refused the message: {0}")]
    Rejected(String),
    /// No answer: connection, TLS, authentication or the deadline failed; the text says which,
    /// without credentials.
    #[error("the mail relay could not be reached: {0}")]
    Unreachable(String),
}

/// Sends one message.
#[async_trait]
pub trait Mailer: Send + Sync + std::fmt::Debug {
    /// Hands `mail` to the relay (or the outbox). `Ok` carries the relay's final reply
    /// ("queued as …"). A message the relay may have accepted is never sent twice.
    ///
    /// # Errors
    /// [`SendFailure::Rejected`] when the relay refused it (nothing was delivered),
    /// [`SendFailure::Unreachable`] when the relay could not be reached in time.
    async fn send(&self, mail: &OutboundMail) -> Result<String, SendFailure>;
}

/// Sends messages off the request path, for the account flows that must answer alike
/// whether or not they caused a message (a sign-up with a known or an unknown address, a
/// password reset for an address with no account).
pub trait MailDispatch: Send + Sync + std::fmt::Debug {
    /// Queues `mail` and returns at once. The adapter sends it through a [`Mailer`] and
    /// logs the outcome with the mail id (never the text); a failed message is not retried
    /// (the person asks again), so nothing here can fail.
    fn dispatch(&self, mail: OutboundMail);
}

/// What a reservation found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservation {
    /// A slot is held; `used` counts the sends in the window, this one included.
    Reserved { used: u32 },
    /// The window is full; `oldest` is when its oldest send was made.
    Full { oldest: OffsetDateTime },
}

/// The account's sends in a rolling window, shared by every replica.
#[async_trait]
pub trait MailQuota: Send + Sync + std::fmt::Debug {
    /// In one unit of work, serialised per account: counts the account's sends made after
    /// `now - window`; below `limit`, records `mail_id` as a send at `now`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure (and then nothing was recorded).
    async fn reserve(
        &self,
        account: AccountId,
        mail_id: Uuid,
        now: OffsetDateTime,
        window: Duration,
        limit: u32,
    ) -> Result<Reservation, InfraError>;

    /// Gives back the slot of a message the relay did not take.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn release(&self, mail_id: Uuid) -> Result<(), InfraError>;

    /// Drops the sends made before `cutoff` (the janitor's work, once they have left every
    /// window); returns how many.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn forget_sends_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError>;
}
