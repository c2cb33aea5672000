//! Password reset: a neutral request, a link valid an hour, a new password; every session
//! of the account ends, nobody is signed in, and the owner gets a notice.

use quire_kernel::{Email, InfraError};

use crate::address_key;
use crate::messages::Letterhead;
use crate::password_rules::{self, PasswordRule};
use crate::ports::SignupPorts;
use crate::signup::LIMIT_WINDOW;
use crate::tokens::{AccountToken, LinkPurpose, LinkToken};

/// Reset requests allowed per address, and per client address, in [`LIMIT_WINDOW`].
pub const RESETS_PER_ADDRESS: u32 = 3;
pub const RESETS_PER_CLIENT: u32 = 10;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResetError {
    #[error("{0}")]
    InvalidEmail(String),
    #[error("too many reset requests from here or for this address; try again in an hour")]
    RateLimited { retry_after_secs: u64 },
    #[error("this link is not valid: it was used already, or it expired. Ask for a new one.")]
    LinkRefused,
    #[error(transparent)]
    Password(#[from] PasswordRule),
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Password reset.
#[derive(Debug, Clone)]
pub struct PasswordReset {
    ports: SignupPorts,
    letterhead: Letterhead,
}

impl PasswordReset {
    #[must_use]
    pub fn new(ports: SignupPorts, letterhead: Letterhead) -> Self {
        Self { ports, letterhead }
    }

    /// Asks for a reset link for `email` from `client`. `Ok` whether or not an account has
    /// the address: only an account's owner gets a message.
    ///
    /// # Errors
    /// `InvalidEmail` (nothing counted), then `RateLimited` past [`RESETS_PER_CLIENT`]
    /// from the client or [`RESETS_PER_ADDRESS`] for the address in an hour (known or
    /// not alike).
    pub async fn request(&self, email: &str, client: &str) -> Result<(), ResetError> {
        let email = Email::parse(email).map_err(|e| ResetError::InvalidEmail(e.0))?;
        let now = self.ports.clock.now();
        let by_client = self
            .ports
            .limiter
            .hit("reset_client", client, LIMIT_WINDOW, RESETS_PER_CLIENT, now)
            .await?;
        let by_address = self
            .ports
            .limiter
            .hit(
                "reset_address",
                &address_key(&email),
                LIMIT_WINDOW,
                RESETS_PER_ADDRESS,
                now,
            )
            .await?;
        if !(by_client && by_address) {
            return Err(ResetError::RateLimited {
                retry_after_secs: LIMIT_WINDOW.as_secs(),
            });
        }
        let Some(account) = self.ports.accounts.account_by_login(email.as_str()).await? else {
            return Ok(());
        };
        // `account_by_login` also matches handles; only the address itself may ask.
        if account.email != email {
            return Ok(());
        }
        let (token, stored) =
            AccountToken::issue(LinkPurpose::ResetPassword, Some(account.id), now);
        self.ports.store.issue_link(&stored).await?;
        if let Some(mail) = self.letterhead.reset_password(&account, &token) {
            self.ports.mail.dispatch(mail);
        }
        Ok(())
    }

    /// Whether `token` is a live reset link (the new-password page says so before the
    /// person types a password).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn link_is_live(&self, token: &str) -> Result<bool, InfraError> {
        let hash = LinkToken::received(token).hash();
        Ok(self
            .ports
            .store
            .live_link(&hash, self.ports.clock.now())
            .await?
            .is_some_and(|t| t.purpose == LinkPurpose::ResetPassword))
    }

    /// Sets `password` on the account the link `token` was sent to, ends every session of
    /// the account, and mails its owner a notice. Nobody is signed in.
    ///
    /// # Errors
    /// `LinkRefused` for an unknown, used or expired link; `Password`; nothing changes on
    /// error.
    pub async fn reset(&self, token: &str, password: &str) -> Result<(), ResetError> {
        let hash = LinkToken::received(token).hash();
        let now = self.ports.clock.now();
        let account_id = self
            .ports
            .store
            .live_link(&hash, now)
            .await?
            .filter(|t| t.purpose == LinkPurpose::ResetPassword)
            .and_then(|t| t.account_id)
            .ok_or(ResetError::LinkRefused)?;
        let account = self
            .ports
            .accounts
            .account_by_id(account_id)
            .await?
            .ok_or(ResetError::LinkRefused)?;
        password_rules::check(password, account.handle.as_str(), account.email.as_str())?;
        let password_hash = password_rules::hash(self.ports.offload.as_ref(), password).await?;
        if self
            .ports
            .store
            .reset_password(&hash, &password_hash, now)
            .await?
            .is_none()
        {
            return Err(ResetError::LinkRefused);
        }
        if let Some(mail) = self.letterhead.password_changed(&account) {
            self.ports.mail.dispatch(mail);
        }
        Ok(())
    }
}
