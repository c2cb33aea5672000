//! Account use cases.

use std::sync::Arc;

use quire_kernel::{
    AccountId, Clock, Color, Email, Handle, InfraError, Offload, Principal, ProjectId, ProjectSlug,
    Tier, offloaded,
};
use quire_keys::{PlaintextKey, new_key};
use quire_projects::{Project, ProjectStatus};
use time::OffsetDateTime;

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

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetActivatedError {
    #[error("no account has that email or handle")]
    UnknownAccount,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Why the platform admin's account management refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdminAccountsError {
    #[error("only the platform admin manages accounts")]
    Forbidden,
    #[error("no such account")]
    NotFound,
    #[error("you cannot deactivate your own account")]
    OwnAccount,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// A new account with its default project (slug = handle, so a page URL can name it):
/// address not verified, not activated, not a platform admin, no second factor. The
/// callers that create accounts set what they vouch for.
#[must_use]
pub fn new_account(
    email: Email,
    handle: Handle,
    password_hash: Option<String>,
    now: OffsetDateTime,
) -> (Account, Project) {
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
        email_verified_at: None,
        activated_at: None,
        is_platform_admin: false,
        default_project_id: project.id,
        created_at: now,
        totp_secret: None,
    };
    (account, project)
}

/// [`hash_password`] on `offload`: argon2id's tens of milliseconds would hold an async
/// worker.
async fn hashed(
    offload: &dyn Offload,
    password: String,
) -> Result<Result<String, PasswordError>, InfraError> {
    offloaded(offload, move || hash_password(&password)).await
}

/// The account use cases.
#[derive(Debug, Clone)]
pub struct AccountService {
    store: Arc<dyn AccountStore>,
    clock: Arc<dyn Clock>,
    /// Where passwords are hashed.
    offload: Arc<dyn Offload>,
}

impl AccountService {
    pub fn new(
        store: Arc<dyn AccountStore>,
        clock: Arc<dyn Clock>,
        offload: Arc<dyn Offload>,
    ) -> Self {
        Self {
            store,
            clock,
            offload,
        }
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
        let password_hash = match input.password {
            Some(password) => Some(hashed(self.offload.as_ref(), password).await??),
            None => None,
        };
        let now = self.clock.now();
        let (mut account, project) = new_account(email, handle, password_hash, now);
        // The operator vouches for the address they typed.
        account.email_verified_at = Some(now);
        account.activated_at = input.activated.then_some(now);
        account.is_platform_admin = input.platform_admin;
        let account_id = account.id;
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
        let hash = hashed(self.offload.as_ref(), password.to_owned()).await??;
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

    /// Activates (`activated`) or deactivates the account with this email or handle
    /// (operators): a deactivated account's keys and tokens answer `not_activated` again.
    /// Activating an active account keeps its first activation time. Returns the account
    /// as it now stands.
    ///
    /// # Errors
    /// See [`SetActivatedError`]; nothing changes on error.
    pub async fn set_activated(
        &self,
        login: &str,
        activated: bool,
    ) -> Result<Account, SetActivatedError> {
        let mut account = self
            .store
            .account_by_login(&login.trim().to_lowercase())
            .await?
            .ok_or(SetActivatedError::UnknownAccount)?;
        let at = if activated {
            Some(account.activated_at.unwrap_or_else(|| self.clock.now()))
        } else {
            None
        };
        if !self.store.set_activated(account.id, at).await? {
            return Err(SetActivatedError::UnknownAccount);
        }
        account.activated_at = at;
        Ok(account)
    }

    /// Every account, oldest first, for the platform admin.
    ///
    /// # Errors
    /// `Forbidden` for anyone else (a full-scope principal of the platform admin account
    /// only), `Infra`.
    pub async fn list(&self, principal: &Principal) -> Result<Vec<Account>, AdminAccountsError> {
        admin_only(principal)?;
        Ok(self.store.accounts().await?)
    }

    /// Activates or deactivates another account, for the platform admin; activating keeps
    /// the first activation time. Returns the account as it now stands.
    ///
    /// # Errors
    /// `Forbidden`, `OwnAccount` (deactivating oneself would lock the admin out),
    /// `NotFound`, `Infra`; nothing changes on error.
    pub async fn set_activated_by_admin(
        &self,
        principal: &Principal,
        id: AccountId,
        activated: bool,
    ) -> Result<Account, AdminAccountsError> {
        admin_only(principal)?;
        if id == principal.account_id && !activated {
            return Err(AdminAccountsError::OwnAccount);
        }
        let mut account = self
            .store
            .account_by_id(id)
            .await?
            .ok_or(AdminAccountsError::NotFound)?;
        let at = if activated {
            Some(account.activated_at.unwrap_or_else(|| self.clock.now()))
        } else {
            None
        };
        if !self.store.set_activated(id, at).await? {
            return Err(AdminAccountsError::NotFound);
        }
        account.activated_at = at;
        Ok(account)
    }
}

fn admin_only(principal: &Principal) -> Result<(), AdminAccountsError> {
    if principal.is_master() && principal.is_platform_admin {
        Ok(())
    } else {
        Err(AdminAccountsError::Forbidden)
    }
}
