//! Changing the password from the dashboard: the current password first, the same rules
//! as at sign-up, every other session of the account ended in the same write, and a
//! notice by mail (someone with the session alone must not lock the owner out unnoticed).

use std::time::Duration;

use quire_accounts::Account;
use quire_kernel::InfraError;
use quire_kernel::password::verify_password;

use crate::messages::Letterhead;
use crate::password_rules::{self, PasswordRule};
use crate::ports::SignupPorts;

/// Password changes tried per account in [`CHANGE_WINDOW`], right or wrong: the current
/// password is checked here, so this is a guessing surface like sign-in.
pub const CHANGES_PER_ACCOUNT: u32 = 10;
pub const CHANGE_WINDOW: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordChangeError {
    #[error("the current password is not right")]
    WrongPassword,
    #[error("too many tries; wait a few minutes")]
    Throttled { retry_after_secs: u64 },
    #[error(transparent)]
    Password(#[from] PasswordRule),
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The dashboard's password change.
#[derive(Debug, Clone)]
pub struct PasswordChange {
    ports: SignupPorts,
    letterhead: Letterhead,
}

impl PasswordChange {
    #[must_use]
    pub fn new(ports: SignupPorts, letterhead: Letterhead) -> Self {
        Self { ports, letterhead }
    }

    /// Replaces `account`'s password with `new` given its `current` one, and ends every
    /// session of the account but `keep_session`. Returns how many sessions ended.
    ///
    /// # Errors
    /// `Throttled` past [`CHANGES_PER_ACCOUNT`] tries in [`CHANGE_WINDOW`], then
    /// `WrongPassword`, then `Password` for a new password the rules refuse; nothing
    /// changes on error.
    pub async fn change(
        &self,
        account: &Account,
        keep_session: &str,
        current: &str,
        new: &str,
    ) -> Result<u64, PasswordChangeError> {
        let now = self.ports.clock.now();
        let allowed = self
            .ports
            .limiter
            .hit(
                "password_change_account",
                &account.id.0.to_string(),
                CHANGE_WINDOW,
                CHANGES_PER_ACCOUNT,
                now,
            )
            .await?;
        if !allowed {
            return Err(PasswordChangeError::Throttled {
                retry_after_secs: CHANGE_WINDOW.as_secs(),
            });
        }
        let right = account
            .password_hash
            .as_deref()
            .is_some_and(|stored| verify_password(current, stored));
        if !right {
            return Err(PasswordChangeError::WrongPassword);
        }
        password_rules::check(new, account.handle.as_str(), account.email.as_str())?;
        let hash = password_rules::hash(new)?;
        let ended = self
            .ports
            .store
            .change_password(account.id, &hash, keep_session)
            .await?;
        if let Some(mail) = self.letterhead.password_changed_by_owner(account) {
            self.ports.mail.dispatch(mail);
        }
        Ok(ended)
    }
}
