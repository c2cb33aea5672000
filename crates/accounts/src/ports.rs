//! Ports of the accounts domain.

use async_trait::async_trait;
use quire_kernel::{AccountId, Handle, InfraError};
use quire_keys::KeyRecord;
use quire_projects::Project;
use time::OffsetDateTime;

use crate::model::Account;
use crate::phone::PhoneNumber;
use crate::sealing::SealedSecret;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateAccountStoreError {
    #[error("handle already taken")]
    HandleTaken,
    #[error("email already registered")]
    EmailTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Persistence of accounts.
#[async_trait]
pub trait AccountStore: Send + Sync + std::fmt::Debug {
    /// Stores the account, its default project and its first key in one transaction.
    ///
    /// # Errors
    /// MUST return [`CreateAccountStoreError::HandleTaken`] when another account has the
    /// handle or any project has the default project's slug,
    /// [`CreateAccountStoreError::EmailTaken`] when another account has the email, and
    /// [`CreateAccountStoreError::Infra`] on storage failure; nothing is stored on error.
    async fn create_account(
        &self,
        account: &Account,
        default_project: &Project,
        first_key: &KeyRecord,
    ) -> Result<(), CreateAccountStoreError>;

    /// # Errors
    /// [`InfraError`] on storage failure; an unknown id is `Ok(None)`.
    async fn account_by_id(&self, id: AccountId) -> Result<Option<Account>, InfraError>;

    /// Every account, oldest first.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn accounts(&self) -> Result<Vec<Account>, InfraError>;

    /// The account whose email or handle is `login` (already lower case).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; unknown is `Ok(None)`.
    async fn account_by_login(&self, login: &str) -> Result<Option<Account>, InfraError>;

    /// Replaces the account's password hash; `Ok(false)` when no account has the id.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn set_password_hash(&self, id: AccountId, hash: &str) -> Result<bool, InfraError>;

    /// Enrolls `secret` as the account's second factor with its recovery codes (by hash),
    /// recording `step` as used; forgets `keep_session`'s pending secret and marks every
    /// other session of the account as not having given the factor. `Ok(false)` when the
    /// account already has a second factor (nothing changes).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; nothing changes on error.
    async fn enroll_totp(
        &self,
        id: AccountId,
        secret: &SealedSecret,
        step: u64,
        keep_session: &str,
        recovery_hashes: &[String],
        now: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Turns the second factor off: forgets the secret, its last step and the recovery
    /// codes, and marks the account's sessions as having given it (the password is all
    /// they need now). `Ok(false)` when the account had no second factor.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; nothing changes on error.
    async fn remove_totp(&self, id: AccountId) -> Result<bool, InfraError>;

    /// Replaces the account's recovery codes with `recovery_hashes`, in one transaction;
    /// `Ok(false)` (nothing changes) when the account has no second factor.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; nothing changes on error.
    async fn replace_recovery_codes(
        &self,
        id: AccountId,
        recovery_hashes: &[String],
        now: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Spends the account's unused recovery code with hash `hash`; `Ok(false)` when it has
    /// none such (unknown, another account's, or used).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn use_recovery_code(
        &self,
        id: AccountId,
        hash: &str,
        now: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// How many of the account's recovery codes are unused.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn recovery_codes_left(&self, id: AccountId) -> Result<u64, InfraError>;

    /// The second-factor secrets stored bare, from before sealing began.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn legacy_totp_secrets(&self) -> Result<Vec<(AccountId, SealedSecret)>, InfraError>;

    /// Replaces the account's stored secret `old` with `new` (the same secret, sealed);
    /// `Ok(false)` when the stored value is no longer `old`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn reseal_totp(
        &self,
        id: AccountId,
        old: &SealedSecret,
        new: &SealedSecret,
    ) -> Result<bool, InfraError>;

    /// Records `step` as the last TOTP step used, only if it is later than the one recorded:
    /// `Ok(false)` means the code's step was already used (a replay), or no account has the id.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn use_totp_step(&self, id: AccountId, step: u64) -> Result<bool, InfraError>;

    /// Marks the account activated at `at`, or not activated (`None`); `Ok(false)` when no
    /// account has the id.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn set_activated(
        &self,
        id: AccountId,
        at: Option<OffsetDateTime>,
    ) -> Result<bool, InfraError>;
}

/// A number on the invitation list, and the account it activated, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    pub number: PhoneNumber,
    pub added_at: OffsetDateTime,
    pub bound_to: Option<(AccountId, Handle)>,
    pub bound_at: Option<OffsetDateTime>,
}

/// What binding a number to an account came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// The number is now bound to the account, and the account is activated.
    Activated,
    /// The number is not on the list, or is bound to another account.
    NotEligible,
    /// The account was activated meanwhile (another request won).
    AlreadyActivated,
}

/// The invitation list, and activation by a number on it.
#[async_trait]
pub trait InvitationStore: Send + Sync + std::fmt::Debug {
    /// Adds the numbers in one transaction; numbers already on the list are left as they
    /// are. Returns how many were new.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; nothing is added on error.
    async fn add_invitations(
        &self,
        numbers: &[PhoneNumber],
        now: OffsetDateTime,
    ) -> Result<u64, InfraError>;

    /// Takes a number off the list (an account it activated stays activated); `Ok(false)`
    /// when it was not on the list.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn remove_invitation(&self, number: &PhoneNumber) -> Result<bool, InfraError>;

    /// The whole list, by number.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn invitations(&self) -> Result<Vec<Invitation>, InfraError>;

    /// In one transaction: binds `number` to `account` if it is on the list and bound to no
    /// other account (a number may be bound to one account, and an account to one number),
    /// and marks the account activated at `now` if it is not.
    ///
    /// # Errors
    /// MUST return [`InfraError`] on storage failure, with nothing bound or activated;
    /// [`Binding::NotEligible`] and [`Binding::AlreadyActivated`] also change nothing.
    async fn bind_and_activate(
        &self,
        account: AccountId,
        number: &PhoneNumber,
        now: OffsetDateTime,
    ) -> Result<Binding, InfraError>;
}

/// The captcha solutions already spent, so each is accepted once.
#[async_trait]
pub trait CaptchaLedger: Send + Sync + std::fmt::Debug {
    /// Records a solution as spent; `Ok(false)` when it already was (on any replica).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; the solution must then be treated as not accepted.
    async fn spend_captcha(
        &self,
        nonce_hash: &str,
        expires_at: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Forgets solutions whose challenge expired before `cutoff` (they can no longer be
    /// presented); returns how many.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn forget_captchas_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError>;
}
