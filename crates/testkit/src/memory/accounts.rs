//! Accounts, and the account directory the page service reads handles from.

use async_trait::async_trait;
use quire_accounts::{Account, AccountStore, CreateAccountStoreError, TotpSecret};
use quire_kernel::{AccountId, Email, Handle, InfraError};
use quire_keys::KeyRecord;
use quire_pages::AccountDirectory;
use quire_projects::Project;

use super::{MemoryStore, Op, State};

/// Stores `account` and its default project if neither its handle (nor the project's slug)
/// nor its email is taken, as the database's unique constraints do.
pub(super) fn admit(
    s: &mut State,
    account: &Account,
    default_project: &Project,
) -> Result<(), CreateAccountStoreError> {
    if s.accounts.iter().any(|a| a.handle == account.handle)
        || s.projects.iter().any(|p| p.slug == default_project.slug)
    {
        return Err(CreateAccountStoreError::HandleTaken);
    }
    if s.accounts.iter().any(|a| a.email == account.email) {
        return Err(CreateAccountStoreError::EmailTaken);
    }
    s.accounts.push(account.clone());
    s.projects.push(default_project.clone());
    Ok(())
}

#[async_trait]
impl AccountStore for MemoryStore {
    async fn create_account(
        &self,
        account: &Account,
        default_project: &Project,
        first_key: &KeyRecord,
    ) -> Result<(), CreateAccountStoreError> {
        self.check(Op::CreateAccount)?;
        self.with(|s| {
            admit(s, account, default_project)?;
            s.keys.push(first_key.clone());
            Ok(())
        })
    }

    async fn account_by_id(&self, id: AccountId) -> Result<Option<Account>, InfraError> {
        self.check(Op::AccountById)?;
        Ok(self.with(|s| s.accounts.iter().find(|a| a.id == id).cloned()))
    }

    async fn account_by_login(&self, login: &str) -> Result<Option<Account>, InfraError> {
        self.check(Op::AccountByLogin)?;
        Ok(self.with(|s| {
            s.accounts
                .iter()
                .find(|a| a.email.as_str() == login || a.handle.as_str() == login)
                .cloned()
        }))
    }

    async fn set_password_hash(&self, id: AccountId, hash: &str) -> Result<bool, InfraError> {
        self.check(Op::SetPasswordHash)?;
        Ok(
            self.with(|s| match s.accounts.iter_mut().find(|a| a.id == id) {
                Some(a) => {
                    a.password_hash = Some(hash.to_owned());
                    true
                }
                None => false,
            }),
        )
    }

    async fn set_activated(
        &self,
        id: AccountId,
        at: Option<time::OffsetDateTime>,
    ) -> Result<bool, InfraError> {
        self.check(Op::SetActivated)?;
        Ok(
            self.with(|s| match s.accounts.iter_mut().find(|a| a.id == id) {
                Some(a) => {
                    a.activated_at = at;
                    true
                }
                None => false,
            }),
        )
    }

    async fn enroll_totp(
        &self,
        id: AccountId,
        secret: &TotpSecret,
        step: u64,
        keep_session: &str,
    ) -> Result<bool, InfraError> {
        self.check(Op::EnrollTotp)?;
        Ok(self.with(|s| {
            let Some(a) = s
                .accounts
                .iter_mut()
                .find(|a| a.id == id && a.totp_secret.is_none())
            else {
                return false;
            };
            a.totp_secret = Some(secret.clone());
            s.totp_steps.insert(id, step);
            for session in &mut s.sessions {
                if session.account_id == id && session.id_hash != keep_session {
                    session.mfa_satisfied = false;
                }
            }
            true
        }))
    }

    async fn use_totp_step(&self, id: AccountId, step: u64) -> Result<bool, InfraError> {
        self.check(Op::UseTotpStep)?;
        Ok(self.with(|s| {
            let enrolled = s
                .accounts
                .iter()
                .any(|a| a.id == id && a.totp_secret.is_some());
            if !enrolled || s.totp_steps.get(&id).is_some_and(|last| *last >= step) {
                return false;
            }
            s.totp_steps.insert(id, step);
            true
        }))
    }
}

#[async_trait]
impl AccountDirectory for MemoryStore {
    async fn account_by_handle(&self, handle: &Handle) -> Result<Option<AccountId>, InfraError> {
        self.check(Op::AccountByHandle)?;
        Ok(self.with(|s| {
            s.accounts
                .iter()
                .find(|a| &a.handle == handle)
                .map(|a| a.id)
        }))
    }

    async fn accounts_by_handles(
        &self,
        handles: &[Handle],
    ) -> Result<std::collections::HashMap<Handle, AccountId>, InfraError> {
        self.check(Op::AccountByHandle)?;
        Ok(self.with(|s| {
            s.accounts
                .iter()
                .filter(|a| handles.contains(&a.handle))
                .map(|a| (a.handle.clone(), a.id))
                .collect()
        }))
    }

    async fn handle_and_email(
        &self,
        account: AccountId,
    ) -> Result<Option<(Handle, Email)>, InfraError> {
        self.check(Op::HandleAndEmail)?;
        Ok(self.with(|s| {
            s.accounts
                .iter()
                .find(|a| a.id == account)
                .map(|a| (a.handle.clone(), a.email.clone()))
        }))
    }
}
