//! Accounts made without an operator, and the one-time links.

use async_trait::async_trait;
use quire_accounts::{Account, CreateAccountStoreError};
use quire_kernel::{AccountId, InfraError};
use quire_projects::Project;
use quire_signup::{AccountToken, FirstAccount, LinkPurpose, SignupStore};
use time::OffsetDateTime;

use super::accounts::admit;
use super::{MemoryStore, Op, State};

/// Spends the live link `hash` of `purpose`: its account column, or `None`.
fn spend(
    s: &mut State,
    hash: &str,
    purpose: LinkPurpose,
    now: OffsetDateTime,
) -> Option<Option<AccountId>> {
    let (token, used) = s.account_links.iter_mut().find(|(t, used)| {
        t.hash == hash && t.purpose == purpose && used.is_none() && t.expires_at > now
    })?;
    *used = Some(now);
    Some(token.account_id)
}

#[async_trait]
impl SignupStore for MemoryStore {
    async fn has_accounts(&self) -> Result<bool, InfraError> {
        self.check(Op::HasAccounts)?;
        Ok(self.with(|s| !s.accounts.is_empty()))
    }

    async fn live_link(
        &self,
        hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<AccountToken>, InfraError> {
        self.check(Op::LiveLink)?;
        Ok(self.with(|s| {
            s.account_links
                .iter()
                .find(|(t, used)| t.hash == hash && used.is_none() && t.expires_at > now)
                .map(|(t, _)| t.clone())
        }))
    }

    async fn issue_link(&self, token: &AccountToken) -> Result<(), InfraError> {
        self.check(Op::IssueLink)?;
        self.with(|s| {
            if token.account_id.is_some() {
                for (older, used) in &mut s.account_links {
                    if older.account_id == token.account_id
                        && older.purpose == token.purpose
                        && used.is_none()
                    {
                        *used = Some(token.created_at);
                    }
                }
            }
            s.account_links.push((token.clone(), None));
        });
        Ok(())
    }

    async fn create_first_account(
        &self,
        setup_hash: &str,
        account: &Account,
        default_project: &Project,
        now: OffsetDateTime,
    ) -> Result<FirstAccount, CreateAccountStoreError> {
        self.check(Op::CreateFirstAccount)?;
        self.with(|s| {
            let before = s.clone();
            if spend(s, setup_hash, LinkPurpose::Setup, now).is_none() {
                return Ok(FirstAccount::LinkRefused);
            }
            if !s.accounts.is_empty() {
                *s = before;
                return Ok(FirstAccount::AlreadySetUp);
            }
            if let Err(e) = admit(s, account, default_project) {
                *s = before;
                return Err(e);
            }
            s.account_links
                .retain(|(t, _)| t.purpose != LinkPurpose::Setup);
            Ok(FirstAccount::Created)
        })
    }

    async fn sign_up(
        &self,
        account: &Account,
        default_project: &Project,
        verification: &AccountToken,
    ) -> Result<(), CreateAccountStoreError> {
        self.check(Op::SignUp)?;
        self.with(|s| {
            admit(s, account, default_project)?;
            s.account_links.push((verification.clone(), None));
            Ok(())
        })
    }

    async fn verify_email(
        &self,
        hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<AccountId>, InfraError> {
        self.check(Op::VerifyEmail)?;
        Ok(self.with(|s| {
            let account = spend(s, hash, LinkPurpose::VerifyEmail, now)??;
            if let Some(a) = s.accounts.iter_mut().find(|a| a.id == account) {
                a.email_verified_at.get_or_insert(now);
            }
            Some(account)
        }))
    }

    async fn reset_password(
        &self,
        hash: &str,
        password_hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<AccountId>, InfraError> {
        self.check(Op::ResetPassword)?;
        Ok(self.with(|s| {
            let account = spend(s, hash, LinkPurpose::ResetPassword, now)??;
            if let Some(a) = s.accounts.iter_mut().find(|a| a.id == account) {
                a.password_hash = Some(password_hash.to_owned());
                a.email_verified_at.get_or_insert(now);
            }
            s.sessions.retain(|session| session.account_id != account);
            Some(account)
        }))
    }

    async fn change_password(
        &self,
        account: AccountId,
        password_hash: &str,
        keep_session: &str,
    ) -> Result<u64, InfraError> {
        self.check(Op::ChangePassword)?;
        Ok(self.with(|s| {
            if let Some(a) = s.accounts.iter_mut().find(|a| a.id == account) {
                a.password_hash = Some(password_hash.to_owned());
            }
            let before = s.sessions.len();
            s.sessions
                .retain(|x| x.account_id != account || x.id_hash == keep_session);
            (before - s.sessions.len()) as u64
        }))
    }

    async fn forget_links_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError> {
        self.check(Op::ForgetLinksBefore)?;
        Ok(self.with(|s| {
            let before = s.account_links.len();
            s.account_links.retain(|(t, _)| t.expires_at >= cutoff);
            (before - s.account_links.len()) as u64
        }))
    }
}
