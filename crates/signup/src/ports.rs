//! The port of the self-service account flows.

use std::sync::Arc;

use async_trait::async_trait;
use quire_accounts::{Account, AccountStore, CreateAccountStoreError};
use quire_kernel::{AccountId, Clock, InfraError, Offload, RateLimiter};
use quire_mail::MailDispatch;
use quire_projects::Project;
use time::OffsetDateTime;

use crate::tokens::AccountToken;

/// What creating the first account came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstAccount {
    Created,
    /// The setup link is unknown, used or expired.
    LinkRefused,
    /// Some account exists already (another setup won).
    AlreadySetUp,
}

/// Accounts created without an operator, and the one-time links that act on them.
#[async_trait]
pub trait SignupStore: Send + Sync + std::fmt::Debug {
    /// Whether any account exists.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn has_accounts(&self) -> Result<bool, InfraError>;

    /// The link with hash `hash` if it is unused and unexpired at `now` (for any purpose).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn live_link(
        &self,
        hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<AccountToken>, InfraError>;

    /// Stores a link. A link for an account voids that account's unused links of the same
    /// purpose, in the same transaction (the newest mail is the one that works); setup
    /// links void nothing (each replica prints its own).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; nothing changes on error.
    async fn issue_link(&self, token: &AccountToken) -> Result<(), InfraError>;

    /// In one transaction: spends the setup link with hash `setup_hash` (unused, unexpired
    /// at `now`), checks that no account exists, stores `account` and its default project,
    /// and forgets every setup link.
    ///
    /// # Errors
    /// MUST return [`CreateAccountStoreError::HandleTaken`] when a project has the default
    /// project's slug, and [`CreateAccountStoreError::Infra`] on storage failure; nothing
    /// changes on any error, nor on [`FirstAccount::LinkRefused`] or
    /// [`FirstAccount::AlreadySetUp`].
    async fn create_first_account(
        &self,
        setup_hash: &str,
        account: &Account,
        default_project: &Project,
        now: OffsetDateTime,
    ) -> Result<FirstAccount, CreateAccountStoreError>;

    /// In one transaction: stores a signed-up `account`, its default project and the link
    /// that verifies its address.
    ///
    /// # Errors
    /// MUST return [`CreateAccountStoreError::HandleTaken`] when another account has the
    /// handle or a project the slug, [`CreateAccountStoreError::EmailTaken`] when another
    /// account has the email, [`CreateAccountStoreError::Infra`] on storage failure;
    /// nothing is stored on error.
    async fn sign_up(
        &self,
        account: &Account,
        default_project: &Project,
        verification: &AccountToken,
    ) -> Result<(), CreateAccountStoreError>;

    /// In one transaction: spends the email-verification link with hash `hash` (unused,
    /// unexpired at `now`) and marks its account's address verified at `now` (kept if it
    /// already was). `Ok(None)` when the link is unknown, used or expired.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; nothing changes on error.
    async fn verify_email(
        &self,
        hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<AccountId>, InfraError>;

    /// In one transaction: spends the reset link with hash `hash` (unused, unexpired at
    /// `now`), sets its account's password hash, marks the address verified if it was not
    /// (the link proved it), and deletes every session of the account. `Ok(None)` when the
    /// link is unknown, used or expired.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; nothing changes on error.
    async fn reset_password(
        &self,
        hash: &str,
        password_hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<AccountId>, InfraError>;

    /// In one transaction: sets the account's password hash and deletes every session of
    /// the account but `keep_session`. Returns how many sessions ended.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; nothing changes on error.
    async fn change_password(
        &self,
        account: AccountId,
        password_hash: &str,
        keep_session: &str,
    ) -> Result<u64, InfraError>;

    /// Forgets links that expired before `cutoff`, used or not; returns how many.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn forget_links_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError>;
}

/// What the flows run on.
#[derive(Debug, Clone)]
pub struct SignupPorts {
    pub store: Arc<dyn SignupStore>,
    pub accounts: Arc<dyn AccountStore>,
    pub limiter: Arc<dyn RateLimiter>,
    pub mail: Arc<dyn MailDispatch>,
    pub clock: Arc<dyn Clock>,
    /// Where passwords are hashed and verified, so that no async worker waits on argon2id.
    pub offload: Arc<dyn Offload>,
}
