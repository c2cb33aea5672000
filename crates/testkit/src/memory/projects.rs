//! Projects, grants and resource assignments.

use async_trait::async_trait;
use quire_databases::DatabaseStatus;
use quire_kernel::{AccountId, InfraError, KeyId, ProjectId, ProjectSlug, Tier, TimeKey};
use quire_keys::KeyRecord;
use quire_projects::{
    AssignStoreError, DeleteProjectStoreError, Grant, GrantLevel, Project, ProjectStore,
    ProjectWriteError, ResourceEntry, ResourceType, Resources,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{MemoryStore, Op, State};

fn slug_clash(state: &State, p: &Project) -> Option<ProjectWriteError> {
    if let Some(client) = &p.oauth_client_id {
        let live = state
            .oauth_clients
            .iter()
            .any(|c| c.id.as_str() == client && c.is_live());
        if !live {
            return Some(ProjectWriteError::UnknownClient);
        }
    }
    let others = state.projects.iter().filter(|o| o.id != p.id);
    for o in others {
        if o.slug == p.slug {
            return Some(ProjectWriteError::SlugTaken);
        }
        if o.account_id == p.account_id
            && o.oauth_client_id.is_some()
            && o.oauth_client_id == p.oauth_client_id
        {
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

/// What the project holds, each kind in the fake's own order.
fn resources_in(s: &State, project: ProjectId) -> Resources {
    Resources {
        keys: live_app_keys_in(s, project)
            .map(|k| ResourceEntry {
                id: k.id.0,
                name: k.name.clone(),
                created_at: k.created_at,
            })
            .collect(),
        pages: s
            .pages
            .iter()
            .filter(|(p, ready)| *ready && p.project_id == project)
            .map(|(p, _)| ResourceEntry {
                id: p.id.0,
                name: p.title.clone(),
                created_at: p.created_at,
            })
            .collect(),
        links: s
            .links
            .iter()
            .filter(|l| l.project_id == project && l.url().is_some())
            .map(|l| ResourceEntry {
                id: l.id.0,
                name: l.alias.clone().unwrap_or_else(|| l.public_id.clone()),
                created_at: l.created_at,
            })
            .collect(),
        objects: s
            .objects
            .iter()
            .filter(|(o, ready)| *ready && o.project_id == project)
            .map(|(o, _)| ResourceEntry {
                id: o.id.0,
                name: o.title.clone(),
                created_at: o.created_at,
            })
            .collect(),
        databases: s
            .databases
            .iter()
            .filter(|d| d.status == DatabaseStatus::Ready && d.project_id == project)
            .map(|d| ResourceEntry {
                id: d.id.0,
                name: d.name.clone(),
                created_at: d.created_at,
            })
            .collect(),
    }
}

#[async_trait]
impl ProjectStore for MemoryStore {
    async fn insert_project(&self, project: &Project) -> Result<(), ProjectWriteError> {
        self.check(Op::InsertProject)?;
        self.with(|s| {
            if let Some(e) = slug_clash(s, project) {
                return Err(e);
            }
            s.projects.push(project.clone());
            Ok(())
        })
    }

    async fn update_project(&self, project: &Project) -> Result<(), ProjectWriteError> {
        self.check(Op::UpdateProject)?;
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
        self.check(Op::ProjectById)?;
        Ok(self.with(|s| s.projects.iter().find(|p| p.id == id).cloned()))
    }

    async fn project_by_slug(&self, slug: &ProjectSlug) -> Result<Option<Project>, InfraError> {
        self.check(Op::ProjectBySlug)?;
        Ok(self.with(|s| s.projects.iter().find(|p| &p.slug == slug).cloned()))
    }

    async fn projects_after(
        &self,
        account: AccountId,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<Project>, InfraError> {
        let mut all = self.projects_of_account(account).await?;
        all.retain(|p| after.is_none_or(|a| (p.created_at, p.id.0) > (a.at, a.id)));
        all.truncate(limit as usize);
        Ok(all)
    }

    async fn projects_of_account(&self, account: AccountId) -> Result<Vec<Project>, InfraError> {
        self.check(Op::ProjectsOfAccount)?;
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
        self.check(Op::DefaultProjectOf)?;
        Ok(self.with(|s| {
            s.accounts
                .iter()
                .find(|a| a.id == account)
                .map(|a| a.default_project_id)
        }))
    }

    async fn resources(&self, project: ProjectId) -> Result<Resources, InfraError> {
        self.check(Op::Resources)?;
        Ok(self.with(|s| resources_in(s, project)))
    }

    async fn resources_after(
        &self,
        project: ProjectId,
        kind: ResourceType,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<ResourceEntry>, InfraError> {
        self.check(Op::Resources)?;
        let all = self.with(|s| resources_in(s, project));
        let mut v = match kind {
            ResourceType::Page => all.pages,
            ResourceType::Object => all.objects,
            ResourceType::Link => all.links,
            ResourceType::Database => all.databases,
            ResourceType::Key => all.keys,
        };
        v.sort_by_key(|e| (e.created_at, e.id));
        Ok(v.into_iter()
            .filter(|e| after.is_none_or(|k| (e.created_at, e.id) > (k.at, k.id)))
            .take(limit as usize)
            .collect())
    }

    async fn delete_project(
        &self,
        project: &Project,
        move_to: Option<ProjectId>,
    ) -> Result<(), DeleteProjectStoreError> {
        self.check(Op::DeleteProject)?;
        self.with(|s| {
            // Records in any state hold their project, as their foreign keys do in SQL.
            let holds_pages = s.pages.iter().any(|(p, _)| p.project_id == project.id)
                || s.objects.iter().any(|(o, _)| o.project_id == project.id)
                || s.links.iter().any(|l| l.project_id == project.id)
                || s.databases.iter().any(|d| d.project_id == project.id);
            if move_to.is_none()
                && (live_app_keys_in(s, project.id).next().is_some() || holds_pages)
            {
                return Err(DeleteProjectStoreError::NotEmpty);
            }
            if let Some(dest) = move_to {
                for (p, _) in &mut s.pages {
                    if p.project_id == project.id {
                        p.project_id = dest;
                    }
                }
                for l in &mut s.links {
                    if l.project_id == project.id {
                        l.project_id = dest;
                    }
                }
                for (o, _) in &mut s.objects {
                    if o.project_id == project.id {
                        o.project_id = dest;
                    }
                }
                for d in &mut s.databases {
                    if d.project_id == project.id {
                        d.project_id = dest;
                    }
                }
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
            // OAuth grants acting in it go, with their refresh tokens (a cascade in SQL).
            let ended: Vec<String> = s
                .oauth_grants
                .iter()
                .filter(|g| g.project_id == Some(project.id))
                .map(|g| g.id.clone())
                .collect();
            s.oauth_grants.retain(|g| g.project_id != Some(project.id));
            s.refresh_tokens.retain(|r| !ended.contains(&r.grant_id));
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
        self.check(Op::AssignResource)?;
        match resource_type {
            ResourceType::Key => {}
            ResourceType::Page => {
                return self.with(|s| {
                    let (page, _) = s
                        .pages
                        .iter_mut()
                        .find(|(p, ready)| {
                            *ready && p.id.0 == resource_id && p.account_id == account
                        })
                        .ok_or(AssignStoreError::NotFound)?;
                    page.project_id = dest;
                    for l in &mut s.links {
                        if l.page().is_some_and(|p| p.0 == resource_id) {
                            l.project_id = dest;
                        }
                    }
                    Ok(())
                });
            }
            ResourceType::Link => {
                return self.with(|s| {
                    let link = s
                        .links
                        .iter_mut()
                        .find(|l| {
                            l.id.0 == resource_id && l.account_id == account && l.url().is_some()
                        })
                        .ok_or(AssignStoreError::NotFound)?;
                    link.project_id = dest;
                    Ok(())
                });
            }
            ResourceType::Object => {
                return self.with(|s| {
                    let (object, _) = s
                        .objects
                        .iter_mut()
                        .find(|(o, ready)| {
                            *ready && o.id.0 == resource_id && o.account_id == account
                        })
                        .ok_or(AssignStoreError::NotFound)?;
                    object.project_id = dest;
                    for l in &mut s.links {
                        if l.object().is_some_and(|o| o.0 == resource_id) {
                            l.project_id = dest;
                        }
                    }
                    Ok(())
                });
            }
            ResourceType::Database => {
                return self.with(|s| {
                    let database = s
                        .databases
                        .iter_mut()
                        .find(|d| {
                            d.status == DatabaseStatus::Ready
                                && d.id.0 == resource_id
                                && d.account_id == account
                        })
                        .ok_or(AssignStoreError::NotFound)?;
                    database.project_id = dest;
                    Ok(())
                });
            }
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
        self.check(Op::KeyAccount)?;
        Ok(self.with(|s| s.keys.iter().find(|k| k.id == key).map(|k| k.account_id)))
    }

    async fn grant_level(
        &self,
        key: KeyId,
        project: ProjectId,
    ) -> Result<Option<GrantLevel>, InfraError> {
        self.check(Op::GrantLevel)?;
        Ok(self.with(|s| {
            s.grants
                .iter()
                .find(|g| g.key_id == key && g.project_id == project)
                .map(|g| g.level)
        }))
    }

    async fn put_grant(&self, grant: &Grant) -> Result<Grant, InfraError> {
        self.check(Op::PutGrant)?;
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
        self.check(Op::DeleteGrant)?;
        Ok(self.with(|s| {
            let before = s.grants.len();
            s.grants
                .retain(|g| !(g.key_id == key && g.project_id == project));
            s.grants.len() != before
        }))
    }
}
