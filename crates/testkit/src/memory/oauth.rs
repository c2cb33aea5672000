//! The OAuth client registry.

use async_trait::async_trait;
use quire_kernel::InfraError;
use quire_oauth::{ClientId, ClientStore, InsertClientError, OAuthClient};
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
            for p in &mut s.projects {
                if p.oauth_client_id.as_deref() == Some(id.as_str()) {
                    p.oauth_client_id = None;
                }
            }
            true
        }))
    }
}
