//! The invitation list and the spent captcha solutions.

use async_trait::async_trait;
use quire_accounts::{Binding, CaptchaLedger, Invitation, InvitationStore, PhoneNumber};
use quire_kernel::{AccountId, InfraError};
use time::OffsetDateTime;

use super::{MemoryStore, Op};

/// A number on the fake's invitation list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvitedNumber {
    pub number: PhoneNumber,
    pub added_at: OffsetDateTime,
    pub bound: Option<(AccountId, OffsetDateTime)>,
}

#[async_trait]
impl InvitationStore for MemoryStore {
    async fn add_invitations(
        &self,
        numbers: &[PhoneNumber],
        now: OffsetDateTime,
    ) -> Result<u64, InfraError> {
        self.check(Op::AddInvitations)?;
        Ok(self.with(|s| {
            let mut added = 0;
            for number in numbers {
                if !s.invitations.iter().any(|i| &i.number == number) {
                    s.invitations.push(InvitedNumber {
                        number: number.clone(),
                        added_at: now,
                        bound: None,
                    });
                    added += 1;
                }
            }
            added
        }))
    }

    async fn remove_invitation(&self, number: &PhoneNumber) -> Result<bool, InfraError> {
        self.check(Op::RemoveInvitation)?;
        Ok(self.with(|s| {
            let before = s.invitations.len();
            s.invitations.retain(|i| &i.number != number);
            s.invitations.len() < before
        }))
    }

    async fn invitations(&self) -> Result<Vec<Invitation>, InfraError> {
        self.check(Op::Invitations)?;
        Ok(self.with(|s| {
            let mut list: Vec<Invitation> = s
                .invitations
                .iter()
                .map(|i| Invitation {
                    number: i.number.clone(),
                    added_at: i.added_at,
                    bound_to: i.bound.and_then(|(id, _)| {
                        s.accounts
                            .iter()
                            .find(|a| a.id == id)
                            .map(|a| (id, a.handle.clone()))
                    }),
                    bound_at: i.bound.map(|(_, at)| at),
                })
                .collect();
            list.sort_by(|a, b| a.number.cmp(&b.number));
            list
        }))
    }

    async fn bind_and_activate(
        &self,
        account: AccountId,
        number: &PhoneNumber,
        now: OffsetDateTime,
    ) -> Result<Binding, InfraError> {
        self.check(Op::BindAndActivate)?;
        Ok(self.with(|s| {
            let Some(holder) = s.accounts.iter().position(|a| a.id == account) else {
                return Binding::AlreadyActivated;
            };
            if s.accounts[holder].activated_at.is_some()
                || s.invitations
                    .iter()
                    .any(|i| i.number != *number && i.bound.is_some_and(|(a, _)| a == account))
            {
                return Binding::AlreadyActivated;
            }
            let Some(entry) = s
                .invitations
                .iter_mut()
                .find(|i| i.number == *number && i.bound.is_none_or(|(a, _)| a == account))
            else {
                return Binding::NotEligible;
            };
            entry.bound = Some((account, now));
            s.accounts[holder].activated_at = Some(now);
            Binding::Activated
        }))
    }
}

#[async_trait]
impl CaptchaLedger for MemoryStore {
    async fn spend_captcha(
        &self,
        nonce_hash: &str,
        expires_at: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        self.check(Op::SpendCaptcha)?;
        Ok(self.with(|s| {
            s.spent_captchas
                .insert(nonce_hash.to_owned(), expires_at)
                .is_none()
        }))
    }

    async fn forget_captchas_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError> {
        self.check(Op::ForgetCaptchasBefore)?;
        Ok(self.with(|s| {
            let before = s.spent_captchas.len();
            s.spent_captchas.retain(|_, expires| *expires >= cutoff);
            (before - s.spent_captchas.len()) as u64
        }))
    }
}
