//! Accounts, and the account directory the page service reads handles from.

use async_trait::async_trait;
use quire_accounts::{Account, AccountStore, CreateAccountStoreError, SealedSecret};
use quire_kernel::{AccountId, Email, Handle, InfraError};
use quire_keys::KeyRecord;
use quire_pages::AccountDirectory;
use quire_projects::Project;
use time::OffsetDateTime;

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

    async fn accounts(&self) -> Result<Vec<Account>, InfraError> {
        self.check(Op::Accounts)?;
        Ok(self.with(|s| {
            let mut all = s.accounts.clone();
            all.sort_by(|a, b| {
                (a.created_at, a.handle.as_str()).cmp(&(b.created_at, b.handle.as_str()))
            });
            all
        }))
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
        secret: &SealedSecret,
        step: u64,
        keep_session: &str,
        recovery_hashes: &[String],
        _now: OffsetDateTime,
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
            s.recovery_codes.retain(|(account, _, _)| *account != id);
            s.recovery_codes
                .extend(recovery_hashes.iter().map(|h| (id, h.clone(), false)));
            for session in &mut s.sessions {
                if session.account_id == id {
                    if session.id_hash == keep_session {
                        session.pending_totp = None;
                    } else {
                        session.mfa_satisfied = false;
                    }
                }
            }
            true
        }))
    }

    async fn remove_totp(&self, id: AccountId) -> Result<bool, InfraError> {
        self.check(Op::RemoveTotp)?;
        Ok(self.with(|s| {
            let Some(a) = s
                .accounts
                .iter_mut()
                .find(|a| a.id == id && a.totp_secret.is_some())
            else {
                return false;
            };
            a.totp_secret = None;
            s.totp_steps.remove(&id);
            s.recovery_codes.retain(|(account, _, _)| *account != id);
            for session in s.sessions.iter_mut().filter(|x| x.account_id == id) {
                session.mfa_satisfied = true;
            }
            true
        }))
    }

    async fn replace_recovery_codes(
        &self,
        id: AccountId,
        recovery_hashes: &[String],
        _now: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        self.check(Op::ReplaceRecoveryCodes)?;
        Ok(self.with(|s| {
            if !s
                .accounts
                .iter()
                .any(|a| a.id == id && a.totp_secret.is_some())
            {
                return false;
            }
            s.recovery_codes.retain(|(account, _, _)| *account != id);
            s.recovery_codes
                .extend(recovery_hashes.iter().map(|h| (id, h.clone(), false)));
            true
        }))
    }

    async fn use_recovery_code(
        &self,
        id: AccountId,
        hash: &str,
        _now: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        self.check(Op::UseRecoveryCode)?;
        Ok(self.with(|s| {
            match s
                .recovery_codes
                .iter_mut()
                .find(|(account, h, used)| *account == id && h == hash && !*used)
            {
                Some(code) => {
                    code.2 = true;
                    true
                }
                None => false,
            }
        }))
    }

    async fn recovery_codes_left(&self, id: AccountId) -> Result<u64, InfraError> {
        self.check(Op::RecoveryCodesLeft)?;
        Ok(self.with(|s| {
            s.recovery_codes
                .iter()
                .filter(|(account, _, used)| *account == id && !*used)
                .count() as u64
        }))
    }

    async fn legacy_totp_secrets(&self) -> Result<Vec<(AccountId, SealedSecret)>, InfraError> {
        self.check(Op::LegacyTotpSecrets)?;
        Ok(self.with(|s| {
            s.accounts
                .iter()
                .filter_map(|a| Some((a.id, a.totp_secret.clone()?)))
                .filter(|(_, secret)| secret.is_legacy())
                .collect()
        }))
    }

    async fn reseal_totp(
        &self,
        id: AccountId,
        old: &SealedSecret,
        new: &SealedSecret,
    ) -> Result<bool, InfraError> {
        self.check(Op::ResealTotp)?;
        Ok(self.with(|s| {
            match s
                .accounts
                .iter_mut()
                .find(|a| a.id == id && a.totp_secret.as_ref() == Some(old))
            {
                Some(a) => {
                    a.totp_secret = Some(new.clone());
                    true
                }
                None => false,
            }
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
