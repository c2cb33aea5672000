//! Email to a database's end users, counted in its account's daily quota.

use std::fmt::Debug;

use async_trait::async_trait;
use quire_kernel::{AccountId, InfraError};
use uuid::Uuid;

/// Why a message to an end user was not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndUserMailError {
    /// The account has used its daily quota.
    #[error("the account's email quota is used up")]
    QuotaExceeded,
    /// The message could not be made or its slot held; the text says why (no address, no
    /// message text).
    #[error("the message was not sent: {0}")]
    Failed(String),
}

/// A slot held in an account's daily mail quota for one message, with what the message
/// needs of the account (its address and handle, for Reply-To).
#[derive(Clone, PartialEq, Eq)]
pub struct MailSlot {
    pub mail_id: Uuid,
    pub reply_to: String,
    pub reply_to_name: String,
}

impl Debug for MailSlot {
    /// Without the account's address, which stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailSlot")
            .field("mail_id", &self.mail_id)
            .finish_non_exhaustive()
    }
}

/// Email to a database's end users, sent on behalf of the database's account and counted
/// in its quota: a slot is held first, in the request, and the message then leaves off the
/// request path, so that a request that sends and one that does not take the same time.
#[async_trait]
pub trait EndUserMail: Send + Sync + Debug {
    /// Holds a slot for one message in `account`'s daily quota. It stays taken whether or
    /// not a message is sent in it, until [`Self::release`].
    ///
    /// # Errors
    /// `QuotaExceeded`; `Failed` when the quota could not be read (nothing held).
    async fn reserve(&self, account: AccountId) -> Result<MailSlot, EndUserMailError>;

    /// Gives back a slot no message will use.
    ///
    /// # Errors
    /// Storage failures (the slot stays taken: one send counted too many).
    async fn release(&self, slot: &MailSlot) -> Result<(), InfraError>;

    /// Queues `text` under `subject` to `to` in `slot`, from the operator's address with
    /// the account's as Reply-To, and returns at once: it is sent off the request path, and
    /// a relay's failure is logged with the mail id and not retried (its slot stays taken).
    ///
    /// # Errors
    /// `Failed` when the message cannot be made (an address or text the mailer refuses);
    /// nothing is queued.
    fn send(
        &self,
        slot: MailSlot,
        to: &str,
        subject: &str,
        text: &str,
    ) -> Result<(), EndUserMailError>;
}
