//! Ports of the accounts domain.

use async_trait::async_trait;
use quire_kernel::{AccountId, InfraError};
use quire_keys::KeyRecord;
use quire_projects::Project;

use crate::mfa::TotpSecret;
use crate::model::Account;

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

    /// Enrolls `secret` as the account's second factor, recording `step` as used, and
    /// marks every other session of the account (all but `keep_session`) as not having
    /// given it; `Ok(false)` when the account already has a second factor (nothing changes).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; nothing changes on error.
    async fn enroll_totp(
        &self,
        id: AccountId,
        secret: &TotpSecret,
        step: u64,
        keep_session: &str,
    ) -> Result<bool, InfraError>;

    /// Records `step` as the last TOTP step used, only if it is later than the one recorded:
    /// `Ok(false)` means the code's step was already used (a replay), or no account has the id.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn use_totp_step(&self, id: AccountId, step: u64) -> Result<bool, InfraError>;
}
