//! The OAuth client registry, grants with their refresh tokens, and signing keys.

use async_trait::async_trait;
use quire_kernel::{AccountId, InfraError};
use quire_oauth::{
    Approval, ClientId, ClientKey, ClientStore, Grant, GrantStage, GrantStore, InsertClientError,
    LiveGrant, OAuthClient, RefreshRecord, Registration, SigningKey, SigningKeyStore,
};
use time::OffsetDateTime;

use super::{MemoryStore, Op};

#[async_trait]
impl ClientStore for MemoryStore {
    async fn insert_client(&self, client: &OAuthClient) -> Result<(), InsertClientError> {
        self.check(Op::InsertClient)?;
        self.with(|s| {
            if s.oauth_clients.iter().any(|c| c.id == client.id) {
                return Err(InsertClientError::IdTaken);
            }
            s.oauth_clients.push(client.clone());
            Ok(())
        })
    }

    async fn client(&self, id: &ClientId) -> Result<Option<OAuthClient>, InfraError> {
        self.check(Op::Client)?;
        Ok(self.with(|s| s.oauth_clients.iter().find(|c| &c.id == id).cloned()))
    }

    async fn live_clients(&self) -> Result<Vec<OAuthClient>, InfraError> {
        self.check(Op::LiveClients)?;
        let mut live: Vec<OAuthClient> = self.with(|s| {
            s.oauth_clients
                .iter()
                .filter(|c| c.is_live())
                .cloned()
                .collect()
        });
        live.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(live)
    }

    async fn live_clients_after(
        &self,
        after: Option<&ClientKey>,
        limit: u32,
    ) -> Result<Vec<OAuthClient>, InfraError> {
        let live = self.live_clients().await?;
        Ok(live
            .into_iter()
            .filter(|c| after.is_none_or(|k| (c.created_at, c.id.as_str()) > (k.at, &*k.id)))
            .take(limit as usize)
            .collect())
    }

    async fn set_client_secret(&self, id: &ClientId, hash: &str) -> Result<bool, InfraError> {
        self.check(Op::SetClientSecret)?;
        Ok(self.with(|s| {
            match s
                .oauth_clients
                .iter_mut()
                .find(|c| &c.id == id && c.is_live())
            {
                Some(c) => {
                    c.secret_hash = Some(hash.to_owned());
                    true
                }
                None => false,
            }
        }))
    }

    async fn delete_client(&self, id: &ClientId, at: OffsetDateTime) -> Result<bool, InfraError> {
        self.check(Op::DeleteClient)?;
        Ok(self.with(|s| {
            let Some(c) = s
                .oauth_clients
                .iter_mut()
                .find(|c| &c.id == id && c.is_live())
            else {
                return false;
            };
            c.deleted_at = Some(at);
            for g in &mut s.oauth_grants {
                if &g.client_id == id && g.revoked_at.is_none() {
                    g.revoked_at = Some(at);
                }
            }
            for p in &mut s.projects {
                if p.oauth_client_id.as_deref() == Some(id.as_str()) {
                    p.oauth_client_id = None;
                }
            }
            true
        }))
    }

    async fn touch_client(&self, id: &ClientId, at: OffsetDateTime) -> Result<(), InfraError> {
        self.check(Op::TouchClient)?;
        self.with(|s| {
            if let Some(c) = s.oauth_clients.iter_mut().find(|c| &c.id == id) {
                c.last_used_at = Some(at);
            }
        });
        Ok(())
    }

    async fn idle_dynamic_clients(
        &self,
        before: OffsetDateTime,
    ) -> Result<Vec<ClientId>, InfraError> {
        self.check(Op::IdleDynamicClients)?;
        Ok(self.with(|s| {
            s.oauth_clients
                .iter()
                .filter(|c| {
                    c.is_live()
                        && c.registration == Registration::Dynamic
                        && c.last_used_at.unwrap_or(c.created_at) < before
                })
                .map(|c| c.id.clone())
                .collect()
        }))
    }
}

fn code_hash(g: &Grant) -> Option<&str> {
    match &g.stage {
        GrantStage::Approved { code_hash, .. } | GrantStage::Redeemed { code_hash, .. } => {
            Some(code_hash)
        }
        GrantStage::Pending { .. } => None,
    }
}

#[async_trait]
impl GrantStore for MemoryStore {
    async fn insert_oauth_grant(&self, grant: &Grant) -> Result<(), InfraError> {
        self.check(Op::InsertOAuthGrant)?;
        self.with(|s| s.oauth_grants.push(grant.clone()));
        Ok(())
    }

    async fn pending_grant(
        &self,
        request_hash: &str,
        session_hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<Grant>, InfraError> {
        self.check(Op::SettlePending)?;
        Ok(self.with(|s| {
            s.oauth_grants
                .iter()
                .find(|g| {
                    matches!(&g.stage, GrantStage::Pending { request_hash: r, session_hash: h, expires_at }
                        if r == request_hash && h == session_hash && *expires_at > now)
                })
                .cloned()
        }))
    }

    async fn settle_pending(
        &self,
        request_hash: &str,
        session_hash: &str,
        now: OffsetDateTime,
        approval: Option<&Approval>,
    ) -> Result<Option<Grant>, InfraError> {
        self.check(Op::SettlePending)?;
        Ok(self.with(|s| {
            let index = s.oauth_grants.iter().position(|g| {
                matches!(&g.stage, GrantStage::Pending { request_hash: r, session_hash: h, expires_at }
                    if r == request_hash && h == session_hash && *expires_at > now)
            })?;
            let before = s.oauth_grants[index].clone();
            match approval {
                Some(approval) => {
                    let grant = &mut s.oauth_grants[index];
                    grant.stage = GrantStage::Approved {
                        code_hash: approval.code_hash.clone(),
                        code_expires_at: approval.code_expires_at,
                    };
                    grant.project_id = Some(approval.project_id);
                    grant.scopes = approval.scopes.clone();
                }
                None => {
                    s.oauth_grants.remove(index);
                }
            }
            Some(before)
        }))
    }

    async fn grant_by_code(&self, hash: &str) -> Result<Option<Grant>, InfraError> {
        self.check(Op::GrantByCode)?;
        Ok(self.with(|s| {
            s.oauth_grants
                .iter()
                .find(|g| code_hash(g) == Some(hash))
                .cloned()
        }))
    }

    async fn redeem_code(
        &self,
        grant_id: &str,
        now: OffsetDateTime,
        first: &RefreshRecord,
    ) -> Result<bool, InfraError> {
        self.check(Op::RedeemCode)?;
        Ok(self.with(|s| {
            let Some(g) = s.oauth_grants.iter_mut().find(|g| {
                g.id == grant_id
                    && g.revoked_at.is_none()
                    && matches!(g.stage, GrantStage::Approved { .. })
            }) else {
                return false;
            };
            let GrantStage::Approved { code_hash, .. } = &g.stage else {
                return false;
            };
            g.stage = GrantStage::Redeemed {
                code_hash: code_hash.clone(),
                redeemed_at: now,
            };
            s.refresh_tokens.push(first.clone());
            true
        }))
    }

    async fn refresh_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<(RefreshRecord, Grant)>, InfraError> {
        self.check(Op::RefreshToken)?;
        Ok(self.with(|s| {
            let record = s
                .refresh_tokens
                .iter()
                .find(|r| r.token_hash == token_hash)?;
            let grant = s.oauth_grants.iter().find(|g| g.id == record.grant_id)?;
            Some((record.clone(), grant.clone()))
        }))
    }

    async fn rotate_refresh(
        &self,
        old_hash: &str,
        now: OffsetDateTime,
        reusable_after: OffsetDateTime,
        next: &RefreshRecord,
    ) -> Result<bool, InfraError> {
        self.check(Op::RotateRefresh)?;
        Ok(self.with(|s| {
            let Some(index) = s.refresh_tokens.iter().position(|r| {
                r.token_hash == old_hash && r.rotated_at.is_none_or(|t| t > reusable_after)
            }) else {
                return false;
            };
            let grant_id = s.refresh_tokens[index].grant_id.clone();
            let live = s
                .oauth_grants
                .iter()
                .any(|g| g.id == grant_id && g.revoked_at.is_none());
            if !live {
                return false;
            }
            let old = &mut s.refresh_tokens[index];
            old.rotated_at = Some(old.rotated_at.unwrap_or(now));
            s.refresh_tokens.push(next.clone());
            true
        }))
    }

    async fn revoke_grant(&self, grant_id: &str, at: OffsetDateTime) -> Result<(), InfraError> {
        self.check(Op::RevokeOAuthGrant)?;
        self.with(|s| {
            for g in &mut s.oauth_grants {
                if g.id == grant_id && g.revoked_at.is_none() {
                    g.revoked_at = Some(at);
                }
            }
        });
        Ok(())
    }

    async fn live_grants(
        &self,
        account: AccountId,
        now: OffsetDateTime,
    ) -> Result<Vec<LiveGrant>, InfraError> {
        self.check(Op::LiveGrants)?;
        Ok(self.with(|s| {
            s.oauth_grants
                .iter()
                .filter(|g| {
                    g.account_id == account
                        && g.revoked_at.is_none()
                        && matches!(g.stage, GrantStage::Redeemed { .. })
                })
                .filter_map(|g| {
                    let last_issued_at = s
                        .refresh_tokens
                        .iter()
                        .filter(|r| {
                            r.grant_id == g.id && r.rotated_at.is_none() && r.expires_at > now
                        })
                        .map(|r| r.created_at)
                        .max()?;
                    Some(LiveGrant {
                        grant: g.clone(),
                        last_issued_at,
                    })
                })
                .collect()
        }))
    }
}

#[async_trait]
impl SigningKeyStore for MemoryStore {
    async fn signing_keys(&self) -> Result<Vec<SigningKey>, InfraError> {
        self.check(Op::SigningKeys)?;
        Ok(self.with(|s| s.signing_keys.clone()))
    }

    async fn insert_signing_key(&self, key: &SigningKey) -> Result<(), InfraError> {
        self.check(Op::InsertSigningKey)?;
        self.with(|s| s.signing_keys.push(key.clone()));
        Ok(())
    }

    async fn delete_signing_keys(&self, kids: &[String]) -> Result<(), InfraError> {
        self.check(Op::DeleteSigningKeys)?;
        self.with(|s| s.signing_keys.retain(|k| !kids.contains(&k.kid)));
        Ok(())
    }
}
