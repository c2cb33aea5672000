//! In-memory implementations of every store port.
//!
//! Every method first consults the failure switch: [`MemoryStore::fail`] makes the named
//! operation (or `"*"`, every operation) return an infrastructure error without touching
//! the state, so domain tests can prove that a failed step leaves nothing behind.

use std::collections::HashSet;
use std::sync::Mutex;

use async_trait::async_trait;
use quire_accounts::{Account, AccountStore, CreateAccountStoreError};
use quire_kernel::{AccountId, InfraError, KeyId, ProjectId, ProjectSlug, Tier};
use quire_keys::{CredentialOwner, KeyHash, KeyRecord, KeyStore};
use quire_projects::{
    AssignStoreError, DeleteProjectStoreError, Grant, GrantLevel, Project, ProjectStore,
    ProjectWriteError, ResourceEntry, ResourceType, Resources,
};
use time::OffsetDateTime;
use uuid::Uuid;

/// Everything the fake holds; comparable, so a test can assert "unchanged".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    pub accounts: Vec<Account>,
    pub projects: Vec<Project>,
    pub keys: Vec<KeyRecord>,
    pub grants: Vec<Grant>,
}

#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Mutex<State>,
    failing: Mutex<HashSet<&'static str>>,
}

impl MemoryStore {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes operation `op` (a port method name, or `"*"` for all) fail until [`heal`].
    ///
    /// [`heal`]: MemoryStore::heal
    pub fn fail(&self, op: &'static str) {
        self.failing.lock().expect("lock").insert(op);
    }

    /// Clears every failure switch.
    pub fn heal(&self) {
        self.failing.lock().expect("lock").clear();
    }

    /// A copy of the whole state.
    #[must_use]
    pub fn snapshot(&self) -> State {
        self.state.lock().expect("lock").clone()
    }

    fn check(&self, op: &'static str) -> Result<(), InfraError> {
        let failing = self.failing.lock().expect("lock");
        if failing.contains(op) || failing.contains("*") {
            Err(InfraError::new(format!("injected failure in {op}")))
        } else {
            Ok(())
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state.lock().expect("lock"))
    }
}

fn slug_clash(state: &State, p: &Project) -> Option<ProjectWriteError> {
    let others = state.projects.iter().filter(|o| o.id != p.id);
    for o in others {
        if o.slug == p.slug {
            return Some(ProjectWriteError::SlugTaken);
        }
        if o.oauth_client_id.is_some() && o.oauth_client_id == p.oauth_client_id {
            return Some(ProjectWriteError::ClientAlreadyAttached);
        }
    }
    None
}

fn live_app_keys_in(state: &State, project: ProjectId) -> impl Iterator<Item = &KeyRecord> {
    state
        .keys
        .iter()
        .filter(move |k| k.project_id == Some(project) && k.revoked_at.is_none())
}

#[async_trait]
impl ProjectStore for MemoryStore {
    async fn insert_project(&self, project: &Project) -> Result<(), ProjectWriteError> {
        self.check("insert_project")?;
        self.with(|s| {
            if let Some(e) = slug_clash(s, project) {
                return Err(e);
            }
            s.projects.push(project.clone());
            Ok(())
        })
    }

    async fn update_project(&self, project: &Project) -> Result<(), ProjectWriteError> {
        self.check("update_project")?;
        self.with(|s| {
            if let Some(e) = slug_clash(s, project) {
                return Err(e);
            }
            if let Some(p) = s.projects.iter_mut().find(|p| p.id == project.id) {
                *p = project.clone();
            }
            Ok(())
        })
    }

    async fn project_by_id(&self, id: ProjectId) -> Result<Option<Project>, InfraError> {
        self.check("project_by_id")?;
        Ok(self.with(|s| s.projects.iter().find(|p| p.id == id).cloned()))
    }

    async fn project_by_slug(&self, slug: &ProjectSlug) -> Result<Option<Project>, InfraError> {
        self.check("project_by_slug")?;
        Ok(self.with(|s| s.projects.iter().find(|p| &p.slug == slug).cloned()))
    }

    async fn projects_of_account(&self, account: AccountId) -> Result<Vec<Project>, InfraError> {
        self.check("projects_of_account")?;
        Ok(self.with(|s| {
            let mut v: Vec<Project> = s
                .projects
                .iter()
                .filter(|p| p.account_id == account)
                .cloned()
                .collect();
            v.sort_by_key(|p| (p.created_at, p.id));
            v
        }))
    }

    async fn default_project_of(
        &self,
        account: AccountId,
    ) -> Result<Option<ProjectId>, InfraError> {
        self.check("default_project_of")?;
        Ok(self.with(|s| {
            s.accounts
                .iter()
                .find(|a| a.id == account)
                .map(|a| a.default_project_id)
        }))
    }

    async fn resources(&self, project: ProjectId) -> Result<Resources, InfraError> {
        self.check("resources")?;
        Ok(self.with(|s| Resources {
            keys: live_app_keys_in(s, project)
                .map(|k| ResourceEntry {
                    id: k.id.0,
                    name: k.name.clone(),
                    created_at: k.created_at,
                })
                .collect(),
            ..Resources::default()
        }))
    }

    async fn delete_project(
        &self,
        project: &Project,
        move_to: Option<ProjectId>,
    ) -> Result<(), DeleteProjectStoreError> {
        self.check("delete_project")?;
        self.with(|s| {
            if move_to.is_none() && live_app_keys_in(s, project.id).next().is_some() {
                return Err(DeleteProjectStoreError::NotEmpty);
            }
            for k in &mut s.keys {
                if k.project_id == Some(project.id) {
                    k.project_id = if k.revoked_at.is_none() {
                        move_to
                    } else {
                        None
                    };
                }
            }
            s.grants.retain(|g| g.project_id != project.id);
            s.projects.retain(|p| p.id != project.id);
            let mut remaining: Vec<&Project> = s
                .projects
                .iter()
                .filter(|p| p.account_id == project.account_id)
                .collect();
            remaining.sort_by_key(|p| (p.created_at, p.id));
            let oldest = remaining.first().map(|p| p.id);
            if let (Some(oldest), Some(account)) = (
                oldest,
                s.accounts.iter_mut().find(|a| a.id == project.account_id),
            ) && account.default_project_id == project.id
            {
                account.default_project_id = oldest;
            }
            Ok(())
        })
    }

    async fn assign_resource(
        &self,
        account: AccountId,
        resource_type: ResourceType,
        resource_id: Uuid,
        dest: ProjectId,
        _now: OffsetDateTime,
    ) -> Result<(), AssignStoreError> {
        self.check("assign_resource")?;
        if resource_type != ResourceType::Key {
            return Err(AssignStoreError::NotFound);
        }
        self.with(|s| {
            let key = s
                .keys
                .iter_mut()
                .find(|k| k.id.0 == resource_id && k.account_id == account)
                .ok_or(AssignStoreError::NotFound)?;
            if key.tier == Tier::Master {
                return Err(AssignStoreError::MasterKey);
            }
            key.project_id = Some(dest);
            Ok(())
        })
    }

    async fn key_account(&self, key: KeyId) -> Result<Option<AccountId>, InfraError> {
        self.check("key_account")?;
        Ok(self.with(|s| s.keys.iter().find(|k| k.id == key).map(|k| k.account_id)))
    }

    async fn grant_level(
        &self,
        key: KeyId,
        project: ProjectId,
    ) -> Result<Option<GrantLevel>, InfraError> {
        self.check("grant_level")?;
        Ok(self.with(|s| {
            s.grants
                .iter()
                .find(|g| g.key_id == key && g.project_id == project)
                .map(|g| g.level)
        }))
    }

    async fn put_grant(&self, grant: &Grant) -> Result<Grant, InfraError> {
        self.check("put_grant")?;
        Ok(self.with(|s| {
            if let Some(g) = s
                .grants
                .iter_mut()
                .find(|g| g.key_id == grant.key_id && g.project_id == grant.project_id)
            {
                g.level = grant.level;
                g.clone()
            } else {
                s.grants.push(grant.clone());
                grant.clone()
            }
        }))
    }

    async fn delete_grant(&self, key: KeyId, project: ProjectId) -> Result<bool, InfraError> {
        self.check("delete_grant")?;
        Ok(self.with(|s| {
            let before = s.grants.len();
            s.grants
                .retain(|g| !(g.key_id == key && g.project_id == project));
            s.grants.len() != before
        }))
    }
}

#[async_trait]
impl KeyStore for MemoryStore {
    async fn insert_key(&self, key: &KeyRecord) -> Result<(), InfraError> {
        self.check("insert_key")?;
        self.with(|s| s.keys.push(key.clone()));
        Ok(())
    }

    async fn find_by_hash(&self, hash: &KeyHash) -> Result<Option<CredentialOwner>, InfraError> {
        self.check("find_by_hash")?;
        Ok(self.with(|s| {
            let key = s.keys.iter().find(|k| &k.key_hash == hash)?;
            let account = s.accounts.iter().find(|a| a.id == key.account_id)?;
            Some(CredentialOwner {
                key: key.clone(),
                account_activated: account.activated_at.is_some(),
                is_platform_admin: account.is_platform_admin,
                default_project_id: account.default_project_id,
            })
        }))
    }

    async fn keys_of_account(&self, account: AccountId) -> Result<Vec<KeyRecord>, InfraError> {
        self.check("keys_of_account")?;
        Ok(self.with(|s| {
            let mut v: Vec<KeyRecord> = s
                .keys
                .iter()
                .filter(|k| k.account_id == account)
                .cloned()
                .collect();
            v.sort_by_key(|k| (k.created_at, k.id));
            v
        }))
    }

    async fn key_by_id(&self, id: KeyId) -> Result<Option<KeyRecord>, InfraError> {
        self.check("key_by_id")?;
        Ok(self.with(|s| s.keys.iter().find(|k| k.id == id).cloned()))
    }

    async fn revoke_key(&self, id: KeyId, at: OffsetDateTime) -> Result<(), InfraError> {
        self.check("revoke_key")?;
        self.with(|s| {
            if let Some(k) = s.keys.iter_mut().find(|k| k.id == id)
                && k.revoked_at.is_none()
            {
                k.revoked_at = Some(at);
            }
        });
        Ok(())
    }
}

#[async_trait]
impl AccountStore for MemoryStore {
    async fn create_account(
        &self,
        account: &Account,
        default_project: &Project,
        first_key: &KeyRecord,
    ) -> Result<(), CreateAccountStoreError> {
        self.check("create_account")?;
        self.with(|s| {
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
            s.keys.push(first_key.clone());
            Ok(())
        })
    }

    async fn account_by_id(&self, id: AccountId) -> Result<Option<Account>, InfraError> {
        self.check("account_by_id")?;
        Ok(self.with(|s| s.accounts.iter().find(|a| a.id == id).cloned()))
    }
}
