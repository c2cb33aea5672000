//! The send use case and its quota.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::{AccountId, Clock, InfraError, Principal};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::message::{OutboundMail, Recipient, check_subject, check_text};
use crate::ports::{MailQuota, Mailer, Reservation, SendFailure};

/// Sends per account per rolling window.
pub const DAILY_QUOTA: u32 = 10;
/// The rolling window of the quota.
pub const QUOTA_WINDOW: Duration = Duration::hours(24);

/// A send request, with fields already known to be strings.
#[derive(Clone, PartialEq, Eq)]
pub struct MailRequest {
    pub to: String,
    pub subject: String,
    pub text: String,
}

impl std::fmt::Debug for MailRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailRequest").finish_non_exhaustive()
    }
}

/// A message the relay accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub mail_id: Uuid,
    pub remaining_today: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailError {
    #[error("sending email needs a master key")]
    InsufficientScope,
    /// A field is wrong; the text names it.
    #[error("{0}")]
    InvalidInput(String),
    #[error(
        "this account has sent {DAILY_QUOTA} messages in the last 24 hours; try again in {retry_after_hours} hours"
    )]
    QuotaExceeded { retry_after_hours: i64 },
    #[error("{0}")]
    SendFailed(SendFailure),
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Hours until the oldest send of a full window leaves it, rounded up, at least 1.
#[must_use]
pub fn retry_after_hours(oldest: OffsetDateTime, now: OffsetDateTime) -> i64 {
    let left = (oldest + QUOTA_WINDOW - now).whole_seconds().max(0);
    ((left + 3599) / 3600).max(1)
}

/// The send use case.
#[derive(Debug, Clone)]
pub struct MailService {
    mailer: Arc<dyn Mailer>,
    quota: Arc<dyn MailQuota>,
    accounts: Arc<dyn AccountStore>,
    clock: Arc<dyn Clock>,
}

impl MailService {
    #[must_use]
    pub fn new(
        mailer: Arc<dyn Mailer>,
        quota: Arc<dyn MailQuota>,
        accounts: Arc<dyn AccountStore>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            mailer,
            quota,
            accounts,
            clock,
        }
    }

    /// Refuses anyone but a master key, before the body is read.
    ///
    /// # Errors
    /// [`MailError::InsufficientScope`].
    pub fn authorize(principal: &Principal) -> Result<(), MailError> {
        if principal.is_master() {
            Ok(())
        } else {
            Err(MailError::InsufficientScope)
        }
    }

    /// Forgets the sends that left every window: the janitor's work.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn sweep(&self) -> Result<u64, InfraError> {
        self.quota
            .forget_sends_before(self.clock.now() - QUOTA_WINDOW)
            .await
    }

    /// Checks, reserves a slot, sends, and keeps the slot only if the relay accepted.
    ///
    /// # Errors
    /// See [`MailError`]; a refused message uses no quota.
    pub async fn send(
        &self,
        principal: &Principal,
        request: &MailRequest,
    ) -> Result<Sent, MailError> {
        Self::authorize(principal)?;
        self.send_for_account(principal.account_id, request).await
    }

    /// [`Self::send`] for `account` without a credential: a message Quire sends on the
    /// account's behalf, counted in its quota.
    ///
    /// # Errors
    /// As [`Self::send`], but never `InsufficientScope`.
    pub async fn send_for_account(
        &self,
        account: AccountId,
        request: &MailRequest,
    ) -> Result<Sent, MailError> {
        checked(request)?;
        let held = self.hold_for_account(account).await?;
        let mail = held.compose(request)?;
        match self.mailer.send(&mail).await {
            Ok(_) => Ok(Sent {
                mail_id: held.mail_id,
                remaining_today: DAILY_QUOTA.saturating_sub(held.used),
            }),
            Err(failure) => {
                self.quota.release(held.mail_id).await?;
                Err(MailError::SendFailed(failure))
            }
        }
    }

    /// Holds a slot of `account`'s quota for one message, which the caller sends (or not:
    /// the slot stays taken until [`Self::release`]). For a caller that must pay alike
    /// whether or not it sends (a database's sign-up of a registered address) and sends off
    /// the request path.
    ///
    /// # Errors
    /// `QuotaExceeded`; `Infra` on storage failure (nothing held).
    pub async fn hold_for_account(&self, account: AccountId) -> Result<Held, MailError> {
        let account = self
            .accounts
            .account_by_id(account)
            .await?
            .ok_or_else(|| InfraError::new("a message for an account that does not exist"))?;
        let mail_id = Uuid::now_v7();
        let now = self.clock.now();
        match self
            .quota
            .reserve(account.id, mail_id, now, QUOTA_WINDOW, DAILY_QUOTA)
            .await?
        {
            Reservation::Reserved { used } => Ok(Held {
                mail_id,
                used,
                reply_to: account.email.as_str().to_owned(),
                reply_to_name: account.handle.as_str().to_owned(),
            }),
            Reservation::Full { oldest } => Err(MailError::QuotaExceeded {
                retry_after_hours: retry_after_hours(oldest, now),
            }),
        }
    }

    /// Gives back the slot of a message that will not be sent.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn release(&self, mail_id: Uuid) -> Result<(), InfraError> {
        self.quota.release(mail_id).await
    }
}

/// A slot held in an account's quota ([`MailService::hold_for_account`]), with what a
/// message in it needs of the account: its address and handle, for Reply-To.
#[derive(Clone, PartialEq, Eq)]
pub struct Held {
    pub mail_id: Uuid,
    /// The sends in the window, this one included.
    pub used: u32,
    pub reply_to: String,
    pub reply_to_name: String,
}

impl std::fmt::Debug for Held {
    /// Without the account's address, which stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held")
            .field("mail_id", &self.mail_id)
            .finish_non_exhaustive()
    }
}

impl Held {
    /// The message `request` in this slot, checked as every message is.
    ///
    /// # Errors
    /// `InvalidInput` naming the field.
    pub fn compose(&self, request: &MailRequest) -> Result<OutboundMail, MailError> {
        let (to, subject, text) = checked(request)?;
        Ok(OutboundMail {
            mail_id: self.mail_id,
            to,
            reply_to: self.reply_to.clone(),
            reply_to_name: self.reply_to_name.clone(),
            subject,
            text,
        })
    }
}

/// The recipient, subject and text of `request`, as a message carries them.
fn checked(request: &MailRequest) -> Result<(Recipient, String, String), MailError> {
    let to = Recipient::parse(&request.to).map_err(MailError::InvalidInput)?;
    let subject = check_subject(&request.subject).map_err(MailError::InvalidInput)?;
    let text = check_text(&request.text).map_err(MailError::InvalidInput)?;
    Ok((to, subject, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_up_to_whole_hours_and_is_at_least_one() {
        let now = OffsetDateTime::UNIX_EPOCH + Duration::days(1000);
        let at = |ago: Duration| now - ago;
        assert_eq!(retry_after_hours(at(Duration::hours(1)), now), 23);
        assert_eq!(retry_after_hours(at(Duration::minutes(61)), now), 23);
        assert_eq!(retry_after_hours(at(Duration::minutes(59)), now), 24);
        assert_eq!(
            retry_after_hours(at(Duration::hours(23) + Duration::minutes(59)), now),
            1
        );
        assert_eq!(retry_after_hours(at(Duration::hours(24)), now), 1);
    }
}
