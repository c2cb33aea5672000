//! The agents an account connected through OAuth, as its holder sees and ends them: one
//! entry per (client, project: the grant's, picked at consent, or for a grant made before
//! the picker the client's home project) with the scopes granted, when the connection was made and
//! when it last took a token, and revocation of every grant behind an entry at once.
//!
//! "Last used" is the newest refresh token's issue time (the code's redemption or the last
//! refresh): an agent at work refreshes at least every access token lifetime (15 minutes),
//! so this is its last activity to within that, at no cost on the request path.

use std::collections::BTreeMap;
use std::sync::Arc;

use quire_kernel::{AccountId, Clock, InfraError, ProjectId};
use quire_projects::{Project, ProjectStore};
use time::OffsetDateTime;

use crate::consent::home_project;
use crate::grant::{LiveGrant, scope_string};
use crate::model::ClientId;
use crate::ports::{ClientStore, GrantStore};

/// One connected agent: a client holding live grants of the account in one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectedAgent {
    pub client_id: ClientId,
    /// The client's registered name.
    pub client_name: String,
    /// The project its tokens act in.
    pub project: Project,
    /// Every scope word its live grants hold, each once, in the order of the oldest grant's
    /// `scope` (then any new word of a later grant).
    pub scopes: Vec<String>,
    /// When its oldest live grant was made (the consent).
    pub connected_at: OffsetDateTime,
    /// When it last took a token (see the module's note).
    pub last_used_at: OffsetDateTime,
    /// Its live grants.
    pub grant_ids: Vec<String>,
}

/// Why a connection could not be ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DisconnectError {
    /// No live grant of that client in that project for this account (never connected,
    /// already revoked, or another account's).
    #[error("this agent is not connected to your account (it may already be disconnected)")]
    NotConnected,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The dashboard's use cases for connected agents.
#[derive(Debug, Clone)]
pub struct ConnectedAgents {
    clients: Arc<dyn ClientStore>,
    grants: Arc<dyn GrantStore>,
    projects: Arc<dyn ProjectStore>,
    clock: Arc<dyn Clock>,
}

impl ConnectedAgents {
    #[must_use]
    pub fn new(
        clients: Arc<dyn ClientStore>,
        grants: Arc<dyn GrantStore>,
        projects: Arc<dyn ProjectStore>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            clients,
            grants,
            projects,
            clock,
        }
    }

    /// The agents connected to `account`, the most recently used first.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn list(&self, account: AccountId) -> Result<Vec<ConnectedAgent>, InfraError> {
        let live = self.grants.live_grants(account, self.clock.now()).await?;
        let projects = self.projects.projects_of_account(account).await?;
        let mut by_client: BTreeMap<ClientId, Vec<LiveGrant>> = BTreeMap::new();
        for g in live {
            by_client
                .entry(g.grant.client_id.clone())
                .or_default()
                .push(g);
        }
        let mut agents = Vec::new();
        for (client_id, grants) in by_client {
            // A deleted client's grants are revoked with it; one deleted since is not shown.
            let Some(client) = self
                .clients
                .client(&client_id)
                .await?
                .filter(crate::OAuthClient::is_live)
            else {
                continue;
            };
            // Each grant acts in its own project; one made before the picker, in the
            // client's home project.
            let home = home_project(self.projects.as_ref(), account, &client_id).await?;
            let mut by_project: BTreeMap<ProjectId, Vec<LiveGrant>> = BTreeMap::new();
            for g in grants {
                by_project
                    .entry(g.grant.project_id.unwrap_or(home.id))
                    .or_default()
                    .push(g);
            }
            for (project_id, grants) in by_project {
                // A deleted project takes its grants along; one gone since is not shown.
                let Some(project) = projects.iter().find(|p| p.id == project_id) else {
                    continue;
                };
                agents.push(Self::entry(
                    client_id.clone(),
                    client.name.clone(),
                    project.clone(),
                    &grants,
                ));
            }
        }
        agents.sort_by(|a, b| {
            (b.last_used_at, &a.client_name, &a.client_id).cmp(&(
                a.last_used_at,
                &b.client_name,
                &b.client_id,
            ))
        });
        Ok(agents)
    }

    /// Ends every live grant of `client` in `project` for `account`, and so their refresh
    /// tokens: the agent can refresh no more and must be authorized again. An access token
    /// it holds already expires on its own (15 minutes at most). Returns the entry ended.
    ///
    /// # Errors
    /// [`DisconnectError::NotConnected`] (and nothing changed) when no such agent is
    /// connected to `account`; [`DisconnectError::Infra`].
    pub async fn disconnect(
        &self,
        account: AccountId,
        client: &str,
        project: ProjectId,
    ) -> Result<ConnectedAgent, DisconnectError> {
        let ended = self
            .list(account)
            .await?
            .into_iter()
            .find(|a| a.client_id.as_str() == client && a.project.id == project)
            .ok_or(DisconnectError::NotConnected)?;
        let now = self.clock.now();
        for id in &ended.grant_ids {
            self.grants.revoke_grant(id, now).await?;
        }
        Ok(ended)
    }

    fn entry(
        client_id: ClientId,
        client_name: String,
        project: Project,
        grants: &[LiveGrant],
    ) -> ConnectedAgent {
        let mut oldest_first: Vec<&LiveGrant> = grants.iter().collect();
        oldest_first.sort_by_key(|g| g.grant.created_at);
        let mut scopes: Vec<String> = Vec::new();
        for g in oldest_first {
            for word in scope_string(&g.grant.scopes).split(' ') {
                if !scopes.iter().any(|s| s == word) {
                    scopes.push(word.to_owned());
                }
            }
        }
        ConnectedAgent {
            client_id,
            client_name,
            project,
            scopes,
            connected_at: grants
                .iter()
                .map(|g| g.grant.created_at)
                .min()
                .unwrap_or(OffsetDateTime::UNIX_EPOCH),
            last_used_at: grants
                .iter()
                .map(|g| g.last_issued_at)
                .max()
                .unwrap_or(OffsetDateTime::UNIX_EPOCH),
            grant_ids: grants.iter().map(|g| g.grant.id.clone()).collect(),
        }
    }
}
