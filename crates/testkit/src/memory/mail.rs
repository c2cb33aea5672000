//! The email quota.

use async_trait::async_trait;
use quire_kernel::{AccountId, InfraError};
use quire_mail::{MailQuota, Reservation};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::{MemoryStore, Op};

#[async_trait]
impl MailQuota for MemoryStore {
    async fn reserve(
        &self,
        account: AccountId,
        mail_id: Uuid,
        now: OffsetDateTime,
        window: Duration,
        limit: u32,
    ) -> Result<Reservation, InfraError> {
        self.check(Op::ReserveMail)?;
        Ok(self.with(|s| {
            let in_window: Vec<OffsetDateTime> = s
                .email_sends
                .iter()
                .filter(|(_, a, at)| *a == account && *at > now - window)
                .map(|(_, _, at)| *at)
                .collect();
            if in_window.len() >= limit as usize {
                return Reservation::Full {
                    oldest: in_window.into_iter().min().unwrap_or(now),
                };
            }
            s.email_sends.push((mail_id, account, now));
            Reservation::Reserved {
                used: u32::try_from(in_window.len() + 1).unwrap_or(u32::MAX),
            }
        }))
    }

    async fn release(&self, mail_id: Uuid) -> Result<(), InfraError> {
        self.check(Op::ReleaseMail)?;
        self.with(|s| s.email_sends.retain(|(id, _, _)| *id != mail_id));
        Ok(())
    }

    async fn forget_sends_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError> {
        self.check(Op::ForgetSendsBefore)?;
        Ok(self.with(|s| {
            let before = s.email_sends.len();
            s.email_sends.retain(|(_, _, at)| *at >= cutoff);
            (before - s.email_sends.len()) as u64
        }))
    }
}
