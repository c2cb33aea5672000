//! Changing the password from the dashboard: the current password first, the same rules
//! as at sign-up, every other session of the account ended in the same write, and a
//! notice by mail (someone with the session alone must not lock the owner out unnoticed).

use std::time::Duration;

use quire_accounts::Account;
use quire_kernel::password::verify_password;
use quire_kernel::{Budget, InfraError, Slot, Take, offloaded};

use crate::messages::Letterhead;
use crate::password_rules::{self, PasswordRule};
use crate::ports::SignupPorts;

/// Wrong current passwords per account in [`CHANGE_WINDOW`]: the current password is checked
/// here, so this is a guessing surface like sign-in. Past it, only a session that has not
/// failed may try, so someone holding one session cannot keep the owner from changing it.
pub const CHANGES_PER_ACCOUNT: u32 = 10;
pub const CHANGE_WINDOW: Duration = Duration::from_secs(15 * 60);

const ACCOUNT_BUCKET: &str = "password_change_account";
const SESSION_BUCKET: &str = "password_change_session";
const ACCOUNT_BUDGET: Budget = Budget::fixed(CHANGES_PER_ACCOUNT, CHANGE_WINDOW);
const SESSION_FIRST_TRY: Budget = Budget::fixed(1, CHANGE_WINDOW);

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
    /// `Throttled` past [`CHANGES_PER_ACCOUNT`] wrong passwords in [`CHANGE_WINDOW`] for a
    /// session that has failed itself, then
    /// `WrongPassword`, then `Password` for a new password the rules refuse; nothing
    /// changes on error.
    pub async fn change(
        &self,
        account: &Account,
        keep_session: &str,
        current: &str,
        new: &str,
    ) -> Result<u64, PasswordChangeError> {
        let mut slots = Vec::new();
        let result = self
            .check_current(account, keep_session, current, &mut slots)
            .await;
        // A wrong password keeps its slots; anything else (the right password, whatever
        // follows, or a storage failure) was no guess.
        if !matches!(result, Err(PasswordChangeError::WrongPassword)) {
            for (bucket, key, slot) in slots {
                self.ports.limiter.give_back(bucket, &key, slot).await?;
            }
        }
        result?;
        password_rules::check(new, account.handle.as_str(), account.email.as_str())?;
        let hash = password_rules::hash(self.ports.offload.as_ref(), new).await?;
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

    /// Takes the slots of a try and checks `current`.
    async fn check_current(
        &self,
        account: &Account,
        session: &str,
        current: &str,
        slots: &mut Vec<(&'static str, String, Slot)>,
    ) -> Result<(), PasswordChangeError> {
        let now = self.ports.clock.now();
        let limiter = &self.ports.limiter;
        let account_key = account.id.0.to_string();
        let session_key = format!("{account_key}|{session}");
        match limiter
            .take(ACCOUNT_BUCKET, &account_key, &ACCOUNT_BUDGET, now)
            .await?
        {
            Take::Taken(slot) => {
                slots.push((ACCOUNT_BUCKET, account_key, slot));
                let session_budget = Budget::fixed(CHANGES_PER_ACCOUNT, CHANGE_WINDOW);
                if let Take::Taken(slot) = limiter
                    .take(SESSION_BUCKET, &session_key, &session_budget, now)
                    .await?
                {
                    slots.push((SESSION_BUCKET, session_key, slot));
                }
            }
            Take::Refused { retry_at } => match limiter
                .take(SESSION_BUCKET, &session_key, &SESSION_FIRST_TRY, now)
                .await?
            {
                Take::Taken(slot) => slots.push((SESSION_BUCKET, session_key, slot)),
                Take::Refused { .. } => {
                    let wait = retry_at - now;
                    let secs = wait.whole_seconds() + i64::from(wait.subsec_nanoseconds() > 0);
                    return Err(PasswordChangeError::Throttled {
                        retry_after_secs: u64::try_from(secs).unwrap_or(1).max(1),
                    });
                }
            },
        }
        let right = match account.password_hash.clone() {
            Some(stored) => {
                let current = current.to_owned();
                offloaded(self.ports.offload.as_ref(), move || {
                    verify_password(&current, &stored)
                })
                .await?
            }
            None => false,
        };
        if right {
            Ok(())
        } else {
            Err(PasswordChangeError::WrongPassword)
        }
    }
}
