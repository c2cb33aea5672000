//! In-memory implementations of every store port.
//!
//! Every method first consults the failure switch: [`MemoryStore::fail`] makes the named
//! operation (or `"*"`, every operation) return an infrastructure error without touching
//! the state, so domain tests can prove that a failed step leaves nothing behind.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use async_trait::async_trait;
use quire_accounts::{
    Account, AccountStore, CreateAccountStoreError, Session, SessionStore, TotpSecret,
};
use quire_device_auth::ports::InsertGrantError;
use quire_device_auth::{DeviceGrant, DeviceGrantStore, GrantState, RateLimiter};
use quire_kernel::{
    AccountId, Email, Handle, InfraError, KeyId, LinkId, PageId, ProjectId, ProjectSlug, Tier,
};
use quire_keys::{CredentialOwner, KeyHash, KeyRecord, KeyStore};
use quire_links::{AllowEntry, Link, LinkStore, LinkWriteError};
use quire_pages::{
    AccountDirectory, BundleStore, FileEntry, InsertPageError, Page, PageStatus, PageStore,
    UpdatePageStoreError,
};
use quire_projects::{
    AssignStoreError, DeleteProjectStoreError, Grant, GrantLevel, Project, ProjectStore,
    ProjectWriteError, ResourceEntry, ResourceType, Resources,
};
use time::OffsetDateTime;
use uuid::Uuid;

/// The port operations of the fakes, for their failure switches: a name that does not exist
/// does not compile (a misspelt string would never fire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    AccountByHandle,
    AccountById,
    AccountByLogin,
    AddViews,
    AssignResource,
    Claim,
    ClaimView,
    CreateAccount,
    Decide,
    DefaultProjectOf,
    Delete,
    DeleteExpiredSessions,
    DeleteGrant,
    DeleteGrantsExpiredBefore,
    DeleteLinkOfPage,
    DeletePage,
    DeleteProject,
    DeleteSession,
    EnrollTotp,
    Exists,
    Files,
    FindByHash,
    ForgetWindowsBefore,
    Get,
    GrantByDeviceHash,
    GrantByUserCode,
    GrantLevel,
    HandleAndEmail,
    Hit,
    InsertGrant,
    InsertKey,
    InsertLink,
    InsertPending,
    InsertProject,
    InsertSession,
    KeyAccount,
    KeyById,
    KeysOfAccount,
    LapsedSlugHolder,
    LinkByCode,
    LinkOfPage,
    LinksOfPages,
    MarkMfaSatisfied,
    MarkReady,
    Page,
    PageBySlug,
    PageExists,
    Pages,
    PagesByIds,
    PagesInProject,
    ProjectById,
    ProjectBySlug,
    ProjectsOfAccount,
    Put,
    PutFiles,
    PutGrant,
    RecordPoll,
    RenewLease,
    Resources,
    RevokeKey,
    SessionByHash,
    SetPasswordHash,
    SharedWith,
    StalePending,
    SweepLeftovers,
    UpdateLink,
    UpdatePage,
    UpdateProject,
    UseTotpStep,
}

/// Which operations fail.
#[derive(Debug, Default)]
struct Failing {
    ops: HashSet<Op>,
    everything: bool,
}

impl Failing {
    fn covers(&self, op: Op) -> bool {
        self.everything || self.ops.contains(&op)
    }
}

/// Everything the fake holds; comparable, so a test can assert "unchanged".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    pub accounts: Vec<Account>,
    pub projects: Vec<Project>,
    pub keys: Vec<KeyRecord>,
    pub grants: Vec<Grant>,
    /// Pages with whether they are ready (visible).
    pub pages: Vec<(Page, bool)>,
    /// When the lease of each pending page ends.
    pub leases: HashMap<PageId, OffsetDateTime>,
    pub files: HashMap<PageId, Vec<FileEntry>>,
    pub links: Vec<Link>,
    /// When each allow entry of each link was shared.
    pub shared_since: HashMap<(LinkId, AllowEntry), OffsetDateTime>,
    pub device_grants: Vec<DeviceGrant>,
    pub sessions: Vec<Session>,
    /// The last TOTP step accepted per account.
    pub totp_steps: HashMap<AccountId, u64>,
    /// (bucket, client, window start in seconds) → requests counted.
    pub rate_windows: HashMap<(String, String, i64), u32>,
}

#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Mutex<State>,
    failing: Mutex<Failing>,
}

impl MemoryStore {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes the port operation `op` fail until [`heal`].
    ///
    /// [`heal`]: MemoryStore::heal
    pub fn fail(&self, op: Op) {
        self.failing.lock().expect("lock").ops.insert(op);
    }

    /// Makes every operation fail until [`heal`].
    ///
    /// [`heal`]: MemoryStore::heal
    pub fn fail_everything(&self) {
        self.failing.lock().expect("lock").everything = true;
    }

    /// Clears every failure switch.
    pub fn heal(&self) {
        *self.failing.lock().expect("lock") = Failing::default();
    }

    /// A copy of the whole state.
    #[must_use]
    pub fn snapshot(&self) -> State {
        self.state.lock().expect("lock").clone()
    }

    fn check(&self, op: Op) -> Result<(), InfraError> {
        if self.failing.lock().expect("lock").covers(op) {
            Err(InfraError::new(format!("injected failure in {op:?}")))
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
        Ok(self.with(|s| Resources {
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
                .filter(|l| l.project_id == project)
                .map(|l| ResourceEntry {
                    id: l.id.0,
                    name: l.alias.clone().unwrap_or_else(|| l.public_id.clone()),
                    created_at: l.created_at,
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
        self.check(Op::DeleteProject)?;
        self.with(|s| {
            let holds_pages = s.pages.iter().any(|(p, _)| p.project_id == project.id)
                || s.links.iter().any(|l| l.project_id == project.id);
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
                        if l.page_id.0 == resource_id {
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
                        .find(|l| l.id.0 == resource_id && l.account_id == account)
                        .ok_or(AssignStoreError::NotFound)?;
                    link.project_id = dest;
                    Ok(())
                });
            }
            ResourceType::Object | ResourceType::Database => {
                return Err(AssignStoreError::NotFound);
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

#[async_trait]
impl KeyStore for MemoryStore {
    async fn insert_key(&self, key: &KeyRecord) -> Result<(), InfraError> {
        self.check(Op::InsertKey)?;
        self.with(|s| s.keys.push(key.clone()));
        Ok(())
    }

    async fn find_by_hash(&self, hash: &KeyHash) -> Result<Option<CredentialOwner>, InfraError> {
        self.check(Op::FindByHash)?;
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
        self.check(Op::KeysOfAccount)?;
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
        self.check(Op::KeyById)?;
        Ok(self.with(|s| s.keys.iter().find(|k| k.id == id).cloned()))
    }

    async fn revoke_key(&self, id: KeyId, at: OffsetDateTime) -> Result<(), InfraError> {
        self.check(Op::RevokeKey)?;
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
        self.check(Op::CreateAccount)?;
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
        self.check(Op::AccountById)?;
        Ok(self.with(|s| s.accounts.iter().find(|a| a.id == id).cloned()))
    }

    async fn account_by_login(&self, login: &str) -> Result<Option<Account>, InfraError> {
        self.check(Op::AccountByLogin)?;
        Ok(self.with(|s| {
            s.accounts
                .iter()
                .find(|a| a.email.as_str() == login || a.handle.as_str() == login)
                .cloned()
        }))
    }

    async fn set_password_hash(&self, id: AccountId, hash: &str) -> Result<bool, InfraError> {
        self.check(Op::SetPasswordHash)?;
        Ok(
            self.with(|s| match s.accounts.iter_mut().find(|a| a.id == id) {
                Some(a) => {
                    a.password_hash = Some(hash.to_owned());
                    true
                }
                None => false,
            }),
        )
    }

    async fn enroll_totp(
        &self,
        id: AccountId,
        secret: &TotpSecret,
        step: u64,
        keep_session: &str,
    ) -> Result<bool, InfraError> {
        self.check(Op::EnrollTotp)?;
        Ok(self.with(|s| {
            let Some(a) = s
                .accounts
                .iter_mut()
                .find(|a| a.id == id && a.totp_secret.is_none())
            else {
                return false;
            };
            a.totp_secret = Some(secret.clone());
            s.totp_steps.insert(id, step);
            for session in &mut s.sessions {
                if session.account_id == id && session.id_hash != keep_session {
                    session.mfa_satisfied = false;
                }
            }
            true
        }))
    }

    async fn use_totp_step(&self, id: AccountId, step: u64) -> Result<bool, InfraError> {
        self.check(Op::UseTotpStep)?;
        Ok(self.with(|s| {
            let enrolled = s
                .accounts
                .iter()
                .any(|a| a.id == id && a.totp_secret.is_some());
            if !enrolled || s.totp_steps.get(&id).is_some_and(|last| *last >= step) {
                return false;
            }
            s.totp_steps.insert(id, step);
            true
        }))
    }
}

fn link_codes(link: &Link) -> impl Iterator<Item = &str> {
    std::iter::once(link.public_id.as_str()).chain(link.alias.as_deref())
}

fn code_taken(state: &State, code: &str, except: Option<quire_kernel::LinkId>) -> bool {
    state
        .links
        .iter()
        .filter(|l| Some(l.id) != except)
        .any(|l| link_codes(l).any(|c| c == code))
}

#[async_trait]
impl PageStore for MemoryStore {
    async fn insert_pending(
        &self,
        page: &Page,
        files: &[FileEntry],
        lease_until: OffsetDateTime,
    ) -> Result<(), InsertPageError> {
        self.check(Op::InsertPending)?;
        self.with(|s| {
            if s.pages.iter().any(|(p, _)| p.public_id == page.public_id)
                || code_taken(s, &page.public_id, None)
            {
                return Err(InsertPageError::PublicIdTaken);
            }
            if s.pages
                .iter()
                .any(|(p, _)| p.account_id == page.account_id && p.slug == page.slug)
            {
                return Err(InsertPageError::SlugTaken);
            }
            s.pages.push((page.clone(), false));
            s.leases.insert(page.id, lease_until);
            s.files.insert(page.id, files.to_vec());
            Ok(())
        })
    }

    async fn renew_lease(&self, id: PageId, until: OffsetDateTime) -> Result<bool, InfraError> {
        self.check(Op::RenewLease)?;
        Ok(self.with(|s| match s.leases.get_mut(&id) {
            Some(lease) => {
                *lease = until;
                true
            }
            None => false,
        }))
    }

    async fn mark_ready(&self, id: PageId) -> Result<(), InfraError> {
        self.check(Op::MarkReady)?;
        self.with(|s| {
            if s.leases.remove(&id).is_none() {
                return Err(InfraError::new("no pending record to mark ready"));
            }
            for (p, ready) in &mut s.pages {
                if p.id == id {
                    *ready = true;
                }
            }
            Ok(())
        })
    }

    async fn delete_page(&self, id: PageId) -> Result<(), InfraError> {
        self.check(Op::DeletePage)?;
        self.with(|s| {
            s.pages.retain(|(p, _)| p.id != id);
            s.leases.remove(&id);
            s.files.remove(&id);
        });
        Ok(())
    }

    async fn page(&self, id: PageId) -> Result<Option<Page>, InfraError> {
        self.check(Op::Page)?;
        Ok(self.with(|s| {
            s.pages
                .iter()
                .find(|(p, ready)| *ready && p.id == id)
                .map(|(p, _)| p.clone())
        }))
    }

    async fn page_by_slug(&self, owner: AccountId, slug: &str) -> Result<Option<Page>, InfraError> {
        self.check(Op::PageBySlug)?;
        Ok(self.with(|s| {
            s.pages
                .iter()
                .find(|(p, ready)| *ready && p.account_id == owner && p.slug == slug)
                .map(|(p, _)| p.clone())
        }))
    }

    async fn pages_in_project(
        &self,
        project: ProjectId,
        status: PageStatus,
    ) -> Result<Vec<Page>, InfraError> {
        self.check(Op::PagesInProject)?;
        Ok(self.with(|s| {
            let mut v: Vec<Page> = s
                .pages
                .iter()
                .filter(|(p, ready)| *ready && p.project_id == project && p.status == status)
                .map(|(p, _)| p.clone())
                .collect();
            v.sort_by_key(|p| (std::cmp::Reverse(p.created_at), p.id));
            v
        }))
    }

    async fn pages_by_ids(&self, ids: &[PageId]) -> Result<Vec<Page>, InfraError> {
        self.check(Op::PagesByIds)?;
        Ok(self.with(|s| {
            s.pages
                .iter()
                .filter(|(p, ready)| *ready && ids.contains(&p.id))
                .map(|(p, _)| p.clone())
                .collect()
        }))
    }

    async fn update_page(&self, page: &Page) -> Result<(), UpdatePageStoreError> {
        self.check(Op::UpdatePage)?;
        self.with(|s| {
            if s.pages.iter().any(|(p, _)| {
                p.id != page.id && p.account_id == page.account_id && p.slug == page.slug
            }) {
                return Err(UpdatePageStoreError::SlugTaken);
            }
            for (p, _) in &mut s.pages {
                if p.id == page.id {
                    p.slug = page.slug.clone();
                    p.title = page.title.clone();
                    p.status = page.status;
                    p.updated_at = page.updated_at;
                    p.archived_at = page.archived_at;
                }
            }
            Ok(())
        })
    }

    async fn files(&self, id: PageId) -> Result<Vec<FileEntry>, InfraError> {
        self.check(Op::Files)?;
        Ok(self.with(|s| {
            let mut v = s.files.get(&id).cloned().unwrap_or_default();
            v.sort_by(|a, b| a.path.cmp(&b.path));
            v
        }))
    }

    async fn put_files(
        &self,
        id: PageId,
        files: &[FileEntry],
        size_bytes: u64,
        file_count: u64,
        updated_at: OffsetDateTime,
    ) -> Result<(), InfraError> {
        self.check(Op::PutFiles)?;
        self.with(|s| {
            let manifest = s.files.entry(id).or_default();
            for f in files {
                manifest.retain(|e| e.path != f.path);
                manifest.push(f.clone());
            }
            for (p, _) in &mut s.pages {
                if p.id == id {
                    p.size_bytes = size_bytes;
                    p.file_count = file_count;
                    p.updated_at = updated_at;
                }
            }
        });
        Ok(())
    }

    async fn stale_pending(&self, now: OffsetDateTime) -> Result<Vec<PageId>, InfraError> {
        self.check(Op::StalePending)?;
        Ok(self.with(|s| {
            s.leases
                .iter()
                .filter(|(_, lease)| **lease < now)
                .map(|(id, _)| *id)
                .collect()
        }))
    }

    async fn lapsed_slug_holder(
        &self,
        owner: AccountId,
        slug: &str,
        now: OffsetDateTime,
    ) -> Result<Option<PageId>, InfraError> {
        self.check(Op::LapsedSlugHolder)?;
        Ok(self.with(|s| {
            s.pages
                .iter()
                .find(|(p, _)| {
                    p.account_id == owner
                        && p.slug == slug
                        && s.leases.get(&p.id).is_some_and(|lease| *lease < now)
                })
                .map(|(p, _)| p.id)
        }))
    }

    async fn page_exists(&self, id: PageId) -> Result<bool, InfraError> {
        self.check(Op::PageExists)?;
        Ok(self.with(|s| s.pages.iter().any(|(p, _)| p.id == id)))
    }
}

#[async_trait]
impl LinkStore for MemoryStore {
    async fn insert_link(&self, link: &Link) -> Result<(), LinkWriteError> {
        self.check(Op::InsertLink)?;
        self.with(|s| {
            if link_codes(link).any(|c| code_taken(s, c, None)) {
                return Err(LinkWriteError::CodeTaken);
            }
            for entry in &link.policy.allow {
                s.shared_since
                    .insert((link.id, entry.clone()), link.created_at);
            }
            s.links.push(link.clone());
            Ok(())
        })
    }

    async fn update_link(&self, link: &Link) -> Result<(), LinkWriteError> {
        self.check(Op::UpdateLink)?;
        self.with(|s| {
            if link_codes(link).any(|c| code_taken(s, c, Some(link.id))) {
                return Err(LinkWriteError::CodeTaken);
            }
            for l in &mut s.links {
                if l.id == link.id {
                    // Views are counted only through claim_view and add_views.
                    let view_count = l.view_count;
                    *l = link.clone();
                    l.view_count = view_count;
                }
            }
            s.shared_since
                .retain(|(id, entry), _| *id != link.id || link.policy.allow.contains(entry));
            for entry in &link.policy.allow {
                s.shared_since
                    .entry((link.id, entry.clone()))
                    .or_insert(link.updated_at);
            }
            Ok(())
        })
    }

    async fn link_of_page(&self, page: PageId) -> Result<Option<Link>, InfraError> {
        self.check(Op::LinkOfPage)?;
        Ok(self.with(|s| s.links.iter().find(|l| l.page_id == page).cloned()))
    }

    async fn links_of_pages(&self, pages: &[PageId]) -> Result<Vec<Link>, InfraError> {
        self.check(Op::LinksOfPages)?;
        Ok(self.with(|s| {
            s.links
                .iter()
                .filter(|l| pages.contains(&l.page_id))
                .cloned()
                .collect()
        }))
    }

    async fn link_by_code(&self, code: &str) -> Result<Option<Link>, InfraError> {
        self.check(Op::LinkByCode)?;
        Ok(self.with(|s| {
            s.links
                .iter()
                .find(|l| link_codes(l).any(|c| c == code))
                .cloned()
        }))
    }

    async fn claim_view(&self, link: LinkId) -> Result<bool, InfraError> {
        self.check(Op::ClaimView)?;
        Ok(self.with(|s| {
            let Some(l) = s.links.iter_mut().find(|l| l.id == link) else {
                return false;
            };
            if l.policy.max_views.is_some_and(|max| l.view_count >= max) {
                return false;
            }
            l.view_count += 1;
            true
        }))
    }

    async fn add_views(&self, counts: &[(LinkId, u64)]) -> Result<(), InfraError> {
        self.check(Op::AddViews)?;
        self.with(|s| {
            for (id, n) in counts {
                if let Some(l) = s.links.iter_mut().find(|l| l.id == *id) {
                    l.view_count += n;
                }
            }
        });
        Ok(())
    }

    async fn delete_link_of_page(&self, page: PageId) -> Result<(), InfraError> {
        self.check(Op::DeleteLinkOfPage)?;
        self.with(|s| {
            let gone: Vec<LinkId> = s
                .links
                .iter()
                .filter(|l| l.page_id == page)
                .map(|l| l.id)
                .collect();
            s.links.retain(|l| l.page_id != page);
            s.shared_since.retain(|(id, _), _| !gone.contains(id));
        });
        Ok(())
    }

    async fn shared_with(
        &self,
        account: AccountId,
        email: Option<&Email>,
    ) -> Result<Vec<(PageId, OffsetDateTime)>, InfraError> {
        self.check(Op::SharedWith)?;
        Ok(self.with(|s| {
            s.links
                .iter()
                .filter_map(|l| {
                    l.policy
                        .allow
                        .iter()
                        .filter(|entry| match entry {
                            AllowEntry::Account(a) => *a == account,
                            AllowEntry::Email(e) => Some(e) == email,
                        })
                        .filter_map(|entry| s.shared_since.get(&(l.id, entry.clone())).copied())
                        .min()
                        .map(|at| (l.page_id, at))
                })
                .collect()
        }))
    }
}

#[async_trait]
impl AccountDirectory for MemoryStore {
    async fn account_by_handle(&self, handle: &Handle) -> Result<Option<AccountId>, InfraError> {
        self.check(Op::AccountByHandle)?;
        Ok(self.with(|s| {
            s.accounts
                .iter()
                .find(|a| &a.handle == handle)
                .map(|a| a.id)
        }))
    }

    async fn accounts_by_handles(
        &self,
        handles: &[Handle],
    ) -> Result<std::collections::HashMap<Handle, AccountId>, InfraError> {
        self.check(Op::AccountByHandle)?;
        Ok(self.with(|s| {
            s.accounts
                .iter()
                .filter(|a| handles.contains(&a.handle))
                .map(|a| (a.handle.clone(), a.id))
                .collect()
        }))
    }

    async fn handle_and_email(
        &self,
        account: AccountId,
    ) -> Result<Option<(Handle, Email)>, InfraError> {
        self.check(Op::HandleAndEmail)?;
        Ok(self.with(|s| {
            s.accounts
                .iter()
                .find(|a| a.id == account)
                .map(|a| (a.handle.clone(), a.email.clone()))
        }))
    }
}

/// An in-memory `BundleStore` with failure switches: [`MemoryBundles::fail`] (by operation
/// name or `"*"`) and [`MemoryBundles::fail_puts_after`] (the next `n` puts succeed, then
/// every put fails), for interrupting an upload halfway, and [`MemoryBundles::stall_puts`]
/// (puts wait until released), for a publish that is still running, or dies mid-upload.
#[derive(Debug)]
pub struct MemoryBundles {
    objects: Mutex<HashMap<(PageId, String), Vec<u8>>>,
    failing: Mutex<Failing>,
    puts_left: Mutex<Option<usize>>,
    stalled: tokio::sync::watch::Sender<bool>,
}

impl Default for MemoryBundles {
    fn default() -> Self {
        Self {
            objects: Mutex::default(),
            failing: Mutex::default(),
            puts_left: Mutex::default(),
            stalled: tokio::sync::watch::channel(false).0,
        }
    }
}

impl MemoryBundles {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    pub fn fail(&self, op: Op) {
        self.failing.lock().expect("lock").ops.insert(op);
    }

    pub fn fail_everything(&self) {
        self.failing.lock().expect("lock").everything = true;
    }

    pub fn fail_puts_after(&self, n: usize) {
        *self.puts_left.lock().expect("lock") = Some(n);
    }

    /// While `on`, every put waits (before writing anything) until it is set off again.
    pub fn stall_puts(&self, on: bool) {
        self.stalled.send_replace(on);
    }

    pub fn heal(&self) {
        *self.failing.lock().expect("lock") = Failing::default();
        *self.puts_left.lock().expect("lock") = None;
    }

    /// Every stored object key, sorted.
    #[must_use]
    pub fn keys(&self) -> Vec<(PageId, String)> {
        let mut k: Vec<(PageId, String)> =
            self.objects.lock().expect("lock").keys().cloned().collect();
        k.sort();
        k
    }

    fn check(&self, op: Op) -> Result<(), InfraError> {
        if self.failing.lock().expect("lock").covers(op) {
            return Err(InfraError::new(format!(
                "injected failure in bundles {op:?}"
            )));
        }
        Ok(())
    }
}

#[async_trait]
impl BundleStore for MemoryBundles {
    async fn put(&self, page: PageId, sha256: &str, bytes: Vec<u8>) -> Result<(), InfraError> {
        let mut stalled = self.stalled.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = stalled.wait_for(|on| !*on).await;
        self.check(Op::Put)?;
        {
            let mut left = self.puts_left.lock().expect("lock");
            if let Some(n) = left.as_mut() {
                if *n == 0 {
                    return Err(InfraError::new(
                        "injected failure in bundles.put (budget spent)",
                    ));
                }
                *n -= 1;
            }
        }
        self.objects
            .lock()
            .expect("lock")
            .insert((page, sha256.to_owned()), bytes);
        Ok(())
    }

    async fn get(&self, page: PageId, sha256: &str) -> Result<Option<Vec<u8>>, InfraError> {
        self.check(Op::Get)?;
        Ok(self
            .objects
            .lock()
            .expect("lock")
            .get(&(page, sha256.to_owned()))
            .cloned())
    }

    async fn exists(&self, page: PageId, sha256: &str) -> Result<bool, InfraError> {
        self.check(Op::Exists)?;
        Ok(self
            .objects
            .lock()
            .expect("lock")
            .contains_key(&(page, sha256.to_owned())))
    }

    async fn delete(&self, page: PageId, sha256: &str) -> Result<(), InfraError> {
        self.check(Op::Delete)?;
        self.objects
            .lock()
            .expect("lock")
            .remove(&(page, sha256.to_owned()));
        Ok(())
    }

    async fn delete_page(&self, page: PageId) -> Result<(), InfraError> {
        self.check(Op::DeletePage)?;
        self.objects
            .lock()
            .expect("lock")
            .retain(|(p, _), _| *p != page);
        Ok(())
    }

    async fn pages(&self) -> Result<Vec<PageId>, InfraError> {
        self.check(Op::Pages)?;
        let set: HashSet<PageId> = self
            .objects
            .lock()
            .expect("lock")
            .keys()
            .map(|(p, _)| *p)
            .collect();
        Ok(set.into_iter().collect())
    }

    async fn sweep_leftovers(&self, _older_than: std::time::Duration) -> Result<usize, InfraError> {
        // Memory writes are whole or absent: nothing is ever left behind.
        self.check(Op::SweepLeftovers)?;
        Ok(0)
    }
}

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
        let len = i64::try_from(window.as_secs().max(1)).unwrap_or(i64::MAX);
        let start = now.unix_timestamp().div_euclid(len) * len;
        Ok(self.with(|s| {
            let count = s
                .rate_windows
                .entry((bucket.to_owned(), client.to_owned(), start))
                .or_insert(0);
            *count += 1;
            *count <= limit
        }))
    }

    async fn forget_windows_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError> {
        self.check(Op::ForgetWindowsBefore)?;
        Ok(self.with(|s| {
            let before = s.rate_windows.len();
            s.rate_windows
                .retain(|(_, _, start), _| *start >= cutoff.unix_timestamp());
            (before - s.rate_windows.len()) as u64
        }))
    }
}

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

    async fn delete_expired_sessions(&self, now: OffsetDateTime) -> Result<u64, InfraError> {
        self.check(Op::DeleteExpiredSessions)?;
        Ok(self.with(|s| {
            let before = s.sessions.len();
            s.sessions.retain(|x| x.expires_at > now);
            (before - s.sessions.len()) as u64
        }))
    }
}
