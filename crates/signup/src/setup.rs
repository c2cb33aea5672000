//! The first run: on a server with no account, a link printed in the server's log at
//! start-up creates the first account, a platform admin. The link dies when used, and every
//! other setup link with it.

use quire_accounts::{Account, CreateAccountStoreError, new_account};
use quire_kernel::{Email, Handle, InfraError};

use crate::messages::Letterhead;
use crate::password_rules::{self, PasswordRule};
use crate::ports::{FirstAccount, SignupPorts};
use crate::signup::NewAccount;
use crate::tokens::{AccountToken, LinkPurpose, LinkToken};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("this server has an account already; sign in instead")]
    AlreadySetUp,
    #[error(
        "this setup link is not valid: it was used, or it expired (restart the server for a new one)"
    )]
    LinkRefused,
    #[error("{0}")]
    InvalidEmail(String),
    #[error("{0}")]
    InvalidHandle(String),
    #[error(transparent)]
    Password(#[from] PasswordRule),
    #[error("that handle is taken")]
    HandleTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The first-run setup.
#[derive(Debug, Clone)]
pub struct FirstRun {
    ports: SignupPorts,
    letterhead: Letterhead,
}

impl FirstRun {
    #[must_use]
    pub fn new(ports: SignupPorts, letterhead: Letterhead) -> Self {
        Self { ports, letterhead }
    }

    /// Whether the server still waits for its first account.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn needed(&self) -> Result<bool, InfraError> {
        Ok(!self.ports.store.has_accounts().await?)
    }

    /// At start-up: a new setup link (valid a day) when the server has no account, to be
    /// printed in full in the log; `None` once it has one.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn start_up_link(&self) -> Result<Option<String>, InfraError> {
        if !self.needed().await? {
            return Ok(None);
        }
        let (token, stored) = AccountToken::issue(LinkPurpose::Setup, None, self.ports.clock.now());
        self.ports.store.issue_link(&stored).await?;
        Ok(Some(self.letterhead.link(crate::SETUP_PATH, &token)))
    }

    /// Whether `token` is a live setup link (the setup page asks before showing its form).
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
            .is_some_and(|t| t.purpose == LinkPurpose::Setup))
    }

    /// Creates the first account (platform admin, address vouched for by whoever reads the
    /// server's log, activated) with the setup link `token`. It has no key yet: its holder
    /// signs in and creates one.
    ///
    /// # Errors
    /// `AlreadySetUp`, `InvalidEmail`, `InvalidHandle`, `Password`, `LinkRefused`; nothing
    /// changes on error.
    pub async fn create_first_account(
        &self,
        token: &str,
        input: &NewAccount,
    ) -> Result<Account, SetupError> {
        if !self.needed().await? {
            return Err(SetupError::AlreadySetUp);
        }
        let email = Email::parse(&input.email).map_err(|e| SetupError::InvalidEmail(e.0))?;
        let handle = Handle::parse(&input.handle).map_err(|e| SetupError::InvalidHandle(e.0))?;
        password_rules::check(&input.password, handle.as_str(), email.as_str())?;
        let password_hash =
            password_rules::hash(self.ports.offload.as_ref(), &input.password).await?;
        let now = self.ports.clock.now();
        let (mut account, project) = new_account(email, handle, Some(password_hash), now);
        account.email_verified_at = Some(now);
        account.activated_at = Some(now);
        account.is_platform_admin = true;
        let hash = LinkToken::received(token).hash();
        match self
            .ports
            .store
            .create_first_account(&hash, &account, &project, now)
            .await
        {
            Ok(FirstAccount::Created) => Ok(account),
            Ok(FirstAccount::LinkRefused) => Err(SetupError::LinkRefused),
            Ok(FirstAccount::AlreadySetUp) => Err(SetupError::AlreadySetUp),
            Err(CreateAccountStoreError::HandleTaken | CreateAccountStoreError::EmailTaken) => {
                Err(SetupError::HandleTaken)
            }
            Err(CreateAccountStoreError::Infra(e)) => Err(e.into()),
        }
    }
}
