//! Account use cases.

use std::sync::Arc;

use quire_kernel::{
    AccountId, Clock, Color, Email, Handle, InfraError, ProjectId, ProjectSlug, Tier,
};
use quire_keys::{PlaintextKey, new_key};
use quire_projects::{Project, ProjectStatus};

use crate::model::Account;
use crate::ports::{AccountStore, CreateAccountStoreError};
use quire_kernel::password::{PasswordError, hash_password};

/// What an operator supplies to create an account.
#[derive(Debug, Clone)]
pub struct CreateAccount {
    pub email: String,
    pub handle: String,
    pub password: Option<String>,
    pub platform_admin: bool,
    pub activated: bool,
}

/// The result of creating an account: the only place its first master key is readable.
#[derive(Debug, Clone)]
pub struct CreatedAccount {
    pub account: Account,
    pub project: Project,
    pub master_key: PlaintextKey,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateAccountError {
    #[error("{0}")]
    InvalidEmail(String),
    #[error("{0}")]
    InvalidHandle(String),
    #[error(transparent)]
    InvalidPassword(#[from] PasswordError),
    #[error("handle already taken (by an account or a project slug)")]
    HandleTaken,
    #[error("email already registered")]
    EmailTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetPasswordError {
    #[error("no account has that email or handle")]
    UnknownAccount,
    #[error(transparent)]
    InvalidPassword(#[from] PasswordError),
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The account use cases.
#[derive(Debug, Clone)]
pub struct AccountService {
    store: Arc<dyn AccountStore>,
    clock: Arc<dyn Clock>,
}

impl AccountService {
    pub fn new(store: Arc<dyn AccountStore>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock }
    }

    /// Creates an account with its default project (slug = handle) and a master key.
    ///
    /// # Errors
    /// See [`CreateAccountError`]; nothing is stored on error.
    pub async fn create(&self, input: CreateAccount) -> Result<CreatedAccount, CreateAccountError> {
        let email =
            Email::parse(&input.email).map_err(|e| CreateAccountError::InvalidEmail(e.0))?;
        let handle =
            Handle::parse(&input.handle).map_err(|e| CreateAccountError::InvalidHandle(e.0))?;
        let password_hash = input.password.as_deref().map(hash_password).transpose()?;
        let now = self.clock.now();
        let account_id = AccountId::new();
        let project = Project {
            id: ProjectId::new(),
            account_id,
            name: "Default".into(),
            tag: "default".into(),
            color: Color::Gray,
            slug: ProjectSlug::from(handle.clone()),
            oauth_client_id: None,
            status: ProjectStatus::Active,
            created_at: now,
            updated_at: now,
        };
        let account = Account {
            id: account_id,
            email,
            handle,
            password_hash,
            activated_at: input.activated.then_some(now),
            is_platform_admin: input.platform_admin,
            default_project_id: project.id,
            created_at: now,
            totp_secret: None,
        };
        let (master_key, key) = new_key(account_id, "master".into(), Tier::Master, None, now);
        self.store
            .create_account(&account, &project, &key)
            .await
            .map_err(|e| match e {
                CreateAccountStoreError::HandleTaken => CreateAccountError::HandleTaken,
                CreateAccountStoreError::EmailTaken => CreateAccountError::EmailTaken,
                CreateAccountStoreError::Infra(e) => CreateAccountError::Infra(e),
            })?;
        Ok(CreatedAccount {
            account,
            project,
            master_key,
        })
    }

    /// Sets the dashboard password of the account with this email or handle (operators).
    ///
    /// # Errors
    /// See [`SetPasswordError`]; nothing changes on error.
    pub async fn set_password(&self, login: &str, password: &str) -> Result<(), SetPasswordError> {
        let hash = hash_password(password)?;
        let account = self
            .store
            .account_by_login(&login.trim().to_lowercase())
            .await?
            .ok_or(SetPasswordError::UnknownAccount)?;
        if self.store.set_password_hash(account.id, &hash).await? {
            Ok(())
        } else {
            Err(SetPasswordError::UnknownAccount)
        }
    }
}
