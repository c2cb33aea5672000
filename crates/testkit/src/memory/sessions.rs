//! Dashboard sessions and second-factor steps.

use async_trait::async_trait;
use quire_accounts::{SealedSecret, Session, SessionStore};
use quire_kernel::{AccountId, InfraError};
use time::OffsetDateTime;

use super::{MemoryStore, Op};

#[async_trait]
impl SessionStore for MemoryStore {
    async fn insert_session(&self, session: &Session) -> Result<(), InfraError> {
        self.check(Op::InsertSession)?;
        self.with(|s| s.sessions.push(session.clone()));
        Ok(())
    }

    async fn session_by_hash(&self, id_hash: &str) -> Result<Option<Session>, InfraError> {
        self.check(Op::SessionByHash)?;
        Ok(self.with(|s| s.sessions.iter().find(|x| x.id_hash == id_hash).cloned()))
    }

    async fn delete_session(&self, id_hash: &str) -> Result<(), InfraError> {
        self.check(Op::DeleteSession)?;
        self.with(|s| s.sessions.retain(|x| x.id_hash != id_hash));
        Ok(())
    }

    async fn mark_mfa_satisfied(&self, id_hash: &str) -> Result<(), InfraError> {
        self.check(Op::MarkMfaSatisfied)?;
        self.with(|s| {
            for x in &mut s.sessions {
                if x.id_hash == id_hash {
                    x.mfa_satisfied = true;
                }
            }
        });
        Ok(())
    }

    async fn set_pending_totp(
        &self,
        id_hash: &str,
        secret: Option<&SealedSecret>,
    ) -> Result<(), InfraError> {
        self.check(Op::SetPendingTotp)?;
        self.with(|s| {
            for x in &mut s.sessions {
                if x.id_hash == id_hash {
                    x.pending_totp = secret.cloned();
                }
            }
        });
        Ok(())
    }

    async fn delete_other_sessions(
        &self,
        account: AccountId,
        keep: &str,
    ) -> Result<u64, InfraError> {
        self.check(Op::DeleteOtherSessions)?;
        Ok(self.with(|s| {
            let before = s.sessions.len();
            s.sessions
                .retain(|x| x.account_id != account || x.id_hash == keep);
            (before - s.sessions.len()) as u64
        }))
    }

    async fn delete_expired_sessions(&self, now: OffsetDateTime) -> Result<u64, InfraError> {
        self.check(Op::DeleteExpiredSessions)?;
        Ok(self.with(|s| {
            let before = s.sessions.len();
            s.sessions.retain(|x| x.expires_at > now);
            (before - s.sessions.len()) as u64
        }))
    }
}
