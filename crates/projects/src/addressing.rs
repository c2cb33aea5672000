//! The project addressing rules of the spec, as one function every route taking `project`
//! goes through:
//!
//! 1. `project` is a slug, never an id.
//! 2. Omitted, it is the calling key's home project.
//! 3. A write needs the home project or a `full` grant; a `read` grant covers list and fetch.
//! 4. A project that cannot be reached at all is `insufficient_scope`, never "not found".

use quire_kernel::{AccountId, InfraError, Principal, ProjectSlug};

use crate::model::{GrantLevel, Project};
use crate::ports::ProjectStore;

/// What the caller wants to do with the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectAccess {
    /// List and fetch.
    Read,
    /// Create, update, delete, provision.
    Write,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error("this credential cannot reach that project")]
    InsufficientScope,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The pure decision for a project that exists: may `principal` have `access` to it, given
/// the key's grant on it (if any)?
#[must_use]
pub fn decide_access(
    principal: &Principal,
    project: &Project,
    grant: Option<GrantLevel>,
    access: ProjectAccess,
) -> bool {
    if project.account_id != principal.account_id {
        return false;
    }
    if project.id == principal.home_project_id || principal.is_master() {
        return true;
    }
    match (access, grant) {
        (ProjectAccess::Read, Some(_)) | (ProjectAccess::Write, Some(GrantLevel::Full)) => true,
        (_, None) | (ProjectAccess::Write, Some(GrantLevel::Read)) => false,
    }
}

/// Resolves the `project` a request names (or its absence) to the project it may act on.
///
/// # Errors
/// [`AddressError::InsufficientScope`] when the slug is malformed, unknown, another
/// account's, or not covered by the key's home project or grants for `access`;
/// [`AddressError::Infra`] on storage failure.
pub async fn address_project(
    store: &dyn ProjectStore,
    principal: &Principal,
    slug: Option<&str>,
    access: ProjectAccess,
) -> Result<Project, AddressError> {
    let project = match slug {
        None => store.project_by_id(principal.home_project_id).await?,
        Some(raw) => match ProjectSlug::parse(raw) {
            Ok(slug) => store.project_by_slug(&slug).await?,
            Err(_) => None,
        },
    };
    let project = project.ok_or(AddressError::InsufficientScope)?;
    authorize_loaded(store, principal, project, access).await
}

/// The same rules for a project known by id (the project of an existing resource such as a
/// page): an unknown, foreign or uncovered project is `InsufficientScope`.
///
/// # Errors
/// As [`address_project`].
pub async fn authorize_project(
    store: &dyn ProjectStore,
    principal: &Principal,
    project: quire_kernel::ProjectId,
    access: ProjectAccess,
) -> Result<Project, AddressError> {
    let project = store
        .project_by_id(project)
        .await?
        .ok_or(AddressError::InsufficientScope)?;
    authorize_loaded(store, principal, project, access).await
}

/// The account whose quotas count the `project` a request names (omitted: the key's home
/// project), once `principal` may read it: whose use a service's `usage` shows.
///
/// # Errors
/// As [`address_project`].
pub async fn quota_account(
    store: &dyn ProjectStore,
    principal: &Principal,
    slug: Option<&str>,
) -> Result<AccountId, AddressError> {
    let project = address_project(store, principal, slug, ProjectAccess::Read).await?;
    Ok(project.account_id)
}

/// The same rules for a project already read (with the resource that names it).
///
/// # Errors
/// As [`address_project`].
pub async fn authorize_loaded(
    store: &dyn ProjectStore,
    principal: &Principal,
    project: Project,
    access: ProjectAccess,
) -> Result<Project, AddressError> {
    let grant = match principal.key_id() {
        Some(key)
            if project.account_id == principal.account_id
                && project.id != principal.home_project_id
                && !principal.is_master() =>
        {
            store.grant_level(key, project.id).await?
        }
        _ => None,
    };
    if decide_access(principal, &project, grant, access) {
        Ok(project)
    } else {
        Err(AddressError::InsufficientScope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ProjectStatus;
    use quire_kernel::{App, Apps, Color, KeyId, PrincipalKind, ProjectId, Tier};
    use time::OffsetDateTime;

    fn project(account: AccountId) -> Project {
        Project {
            id: ProjectId::new(),
            account_id: account,
            name: "p".into(),
            tag: String::new(),
            color: Color::Gray,
            slug: ProjectSlug::parse("some_project").unwrap(),
            oauth_client_id: None,
            status: ProjectStatus::Active,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn app_key(account: AccountId, home: ProjectId) -> Principal {
        Principal {
            account_id: account,
            kind: PrincipalKind::Key {
                key_id: KeyId::new(),
                tier: Tier::App(Apps::new([App::Page]).unwrap()),
            },
            home_project_id: home,
            is_platform_admin: false,
        }
    }

    #[test]
    fn home_project_allows_everything() {
        let account = AccountId::new();
        let p = project(account);
        let key = app_key(account, p.id);
        assert!(decide_access(&key, &p, None, ProjectAccess::Read));
        assert!(decide_access(&key, &p, None, ProjectAccess::Write));
    }

    #[test]
    fn grants_decide_other_projects_of_the_account() {
        let account = AccountId::new();
        let other = project(account);
        let key = app_key(account, ProjectId::new());
        assert!(!decide_access(&key, &other, None, ProjectAccess::Read));
        assert!(!decide_access(&key, &other, None, ProjectAccess::Write));
        assert!(decide_access(
            &key,
            &other,
            Some(GrantLevel::Read),
            ProjectAccess::Read
        ));
        assert!(!decide_access(
            &key,
            &other,
            Some(GrantLevel::Read),
            ProjectAccess::Write
        ));
        assert!(decide_access(
            &key,
            &other,
            Some(GrantLevel::Full),
            ProjectAccess::Read
        ));
        assert!(decide_access(
            &key,
            &other,
            Some(GrantLevel::Full),
            ProjectAccess::Write
        ));
    }

    #[test]
    fn master_keys_reach_every_project_of_their_account_only() {
        let account = AccountId::new();
        let mut master = app_key(account, ProjectId::new());
        master.kind = PrincipalKind::Key {
            key_id: KeyId::new(),
            tier: Tier::Master,
        };
        assert!(decide_access(
            &master,
            &project(account),
            None,
            ProjectAccess::Write
        ));
        let foreign = project(AccountId::new());
        assert!(!decide_access(&master, &foreign, None, ProjectAccess::Read));
        // A grant cannot open another account's project either.
        let key = app_key(account, ProjectId::new());
        assert!(!decide_access(
            &key,
            &foreign,
            Some(GrantLevel::Full),
            ProjectAccess::Read
        ));
    }
}
