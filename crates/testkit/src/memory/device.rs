//! Device-login grants, and the rate limiter's windows.

use async_trait::async_trait;
use quire_device_auth::ports::InsertGrantError;
use quire_device_auth::{DeviceGrant, DeviceGrantStore, GrantState, RateLimiter};
use quire_kernel::{Budget, InfraError, Slot, Take};
use quire_keys::KeyRecord;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{MemoryStore, Op};

#[async_trait]
impl DeviceGrantStore for MemoryStore {
    async fn insert_grant(&self, grant: &DeviceGrant) -> Result<(), InsertGrantError> {
        self.check(Op::InsertGrant)?;
        self.with(|s| {
            if s.device_grants
                .iter()
                .any(|g| g.user_code == grant.user_code)
            {
                return Err(InsertGrantError::UserCodeTaken);
            }
            s.device_grants.push(grant.clone());
            Ok(())
        })
    }

    async fn grant_by_device_hash(&self, hash: &str) -> Result<Option<DeviceGrant>, InfraError> {
        self.check(Op::GrantByDeviceHash)?;
        Ok(self.with(|s| {
            s.device_grants
                .iter()
                .find(|g| g.device_code_hash == hash)
                .cloned()
        }))
    }

    async fn grant_by_user_code(&self, code: &str) -> Result<Option<DeviceGrant>, InfraError> {
        self.check(Op::GrantByUserCode)?;
        Ok(self.with(|s| {
            s.device_grants
                .iter()
                .find(|g| g.user_code == code)
                .cloned()
        }))
    }

    async fn record_poll(
        &self,
        id: Uuid,
        at: OffsetDateTime,
        interval_secs: u32,
    ) -> Result<(), InfraError> {
        self.check(Op::RecordPoll)?;
        self.with(|s| {
            if let Some(g) = s.device_grants.iter_mut().find(|g| g.id == id) {
                g.last_polled_at = Some(at);
                g.interval_secs = interval_secs;
            }
        });
        Ok(())
    }

    async fn decide(
        &self,
        id: Uuid,
        state: GrantState,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        self.check(Op::Decide)?;
        Ok(self.with(|s| {
            match s
                .device_grants
                .iter_mut()
                .find(|g| g.id == id && g.state == GrantState::Pending)
            {
                Some(g) => {
                    g.state = state;
                    g.decided_at = Some(at);
                    true
                }
                None => false,
            }
        }))
    }

    async fn claim(&self, id: Uuid, key: &KeyRecord) -> Result<bool, InfraError> {
        self.check(Op::Claim)?;
        Ok(self.with(|s| {
            let Some(g) = s
                .device_grants
                .iter_mut()
                .find(|g| g.id == id && matches!(g.state, GrantState::Approved { .. }))
            else {
                return false;
            };
            g.state = GrantState::Claimed { key: key.id };
            s.keys.push(key.clone());
            true
        }))
    }

    async fn delete_grants_expired_before(
        &self,
        cutoff: OffsetDateTime,
    ) -> Result<u64, InfraError> {
        self.check(Op::DeleteGrantsExpiredBefore)?;
        Ok(self.with(|s| {
            let before = s.device_grants.len();
            s.device_grants.retain(|g| g.expires_at >= cutoff);
            (before - s.device_grants.len()) as u64
        }))
    }
}

#[async_trait]
impl RateLimiter for MemoryStore {
    async fn hit(
        &self,
        bucket: &str,
        client: &str,
        window: std::time::Duration,
        limit: u32,
        now: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        self.check(Op::Hit)?;
        let since = now - window;
        Ok(self.with(|s| {
            let log = s
                .rate_events
                .entry((bucket.to_owned(), client.to_owned()))
                .or_default();
            let allowed = log.iter().filter(|(_, at)| *at > since).count();
            if allowed >= limit as usize {
                return false;
            }
            log.push((0, now));
            true
        }))
    }

    async fn take(
        &self,
        bucket: &str,
        client: &str,
        budget: &Budget,
        now: OffsetDateTime,
    ) -> Result<Take, InfraError> {
        self.check(Op::Take)?;
        Ok(self.with(|s| {
            s.rate_slots += 1;
            let id = s.rate_slots;
            let log = s
                .rate_events
                .entry((bucket.to_owned(), client.to_owned()))
                .or_default();
            let taken: Vec<OffsetDateTime> = log.iter().map(|(_, at)| *at).collect();
            if let Some(retry_at) = budget.opens_at(&taken, now) {
                return Take::Refused { retry_at };
            }
            log.push((id, now));
            Take::Taken(Slot(id))
        }))
    }

    async fn give_back(&self, bucket: &str, client: &str, slot: Slot) -> Result<(), InfraError> {
        self.check(Op::GiveBack)?;
        self.with(|s| {
            if let Some(log) = s
                .rate_events
                .get_mut(&(bucket.to_owned(), client.to_owned()))
            {
                log.retain(|(id, _)| *id != slot.0);
            }
        });
        Ok(())
    }

    async fn forget_windows_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError> {
        self.check(Op::ForgetWindowsBefore)?;
        Ok(self.with(|s| {
            let mut forgotten = 0;
            for log in s.rate_events.values_mut() {
                let before = log.len();
                log.retain(|(_, at)| *at >= cutoff);
                forgotten += before - log.len();
            }
            s.rate_events.retain(|_, log| !log.is_empty());
            forgotten as u64
        }))
    }
}
