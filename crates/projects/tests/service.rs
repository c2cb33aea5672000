//! Project use cases against the in-memory store: the addressing rules end to end, grant
//! levels, delete with and without `move_to`, and what a failing store leaves behind.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::sync::Arc;

use quire_kernel::{AccountId, App, Clock, KeyId, Principal, ProjectId};
use quire_keys::{KeyStore, new_key};
use quire_projects::{
    AddressError, DeleteProjectError, GetProjectError, GrantError, GrantLevel, ListProjectsError,
    NewProject, ProjectAccess, ProjectPatch, ProjectService, WriteProjectError,
};
use quire_testkit::fixtures::{app_key, create_account, master};
use quire_testkit::memory::Op;
use quire_testkit::{FixedClock, MemoryStore};

struct World {
    store: Arc<MemoryStore>,
    clock: Arc<FixedClock>,
    projects: ProjectService,
}

struct Owner {
    account: AccountId,
    default_project: ProjectId,
    master: Principal,
}

impl World {
    fn new() -> Self {
        let store = Arc::new(MemoryStore::new());
        let clock = Arc::new(FixedClock::new());
        let projects = ProjectService::new(
            store.clone(),
            clock.clone(),
            Arc::new(quire_kernel::NoListener),
        );
        Self {
            store,
            clock,
            projects,
        }
    }

    async fn account(&self, handle: &str) -> Owner {
        let created = create_account(self.store.clone(), self.clock.clone(), handle).await;
        Owner {
            account: created.account.id,
            default_project: created.project.id,
            master: master(created.account.id, created.project.id),
        }
    }

    async fn project(&self, owner: &Owner, slug: &str) -> ProjectId {
        self.clock.advance(time::Duration::seconds(1));
        self.projects
            .create(
                &owner.master,
                NewProject {
                    name: slug.into(),
                    tag: String::new(),
                    color: "blue".into(),
                    slug: slug.into(),
                    oauth_client_id: None,
                },
            )
            .await
            .unwrap()
            .id
    }

    /// Stores an app key homed in `home` and returns the principal it authenticates as.
    async fn app_key(&self, owner: &Owner, home: ProjectId) -> Principal {
        let (_, record) = new_key(
            owner.account,
            "k".into(),
            quire_kernel::Tier::App(quire_kernel::Apps::new([App::Page]).unwrap()),
            Some(home),
            self.clock.now(),
        );
        self.store.insert_key(&record).await.unwrap();
        app_key(owner.account, record.id, home, &[App::Page])
    }
}

#[tokio::test]
async fn addressing_defaults_to_home_and_follows_grants() {
    let w = World::new();
    let ann = w.account("ann").await;
    let bob = w.account("bob").await;
    let other = w.project(&ann, "ann_other").await;
    let key = w.app_key(&ann, ann.default_project).await;
    let key_id = key.key_id().unwrap();

    // Rule 2: no slug means the home project.
    let home = w
        .projects
        .address(&key, None, ProjectAccess::Write)
        .await
        .unwrap();
    assert_eq!(home.id, ann.default_project);
    // Rules 3 and 4: another project needs a grant; without one it is 403, never 404.
    for access in [ProjectAccess::Read, ProjectAccess::Write] {
        assert_eq!(
            w.projects
                .address(&key, Some("ann_other"), access)
                .await
                .unwrap_err(),
            AddressError::InsufficientScope
        );
    }
    w.projects
        .put_grant(&ann.master, other, key_id, GrantLevel::Read)
        .await
        .unwrap();
    assert_eq!(
        w.projects
            .address(&key, Some("ann_other"), ProjectAccess::Read)
            .await
            .unwrap()
            .id,
        other
    );
    assert_eq!(
        w.projects
            .address(&key, Some("ann_other"), ProjectAccess::Write)
            .await
            .unwrap_err(),
        AddressError::InsufficientScope
    );
    w.projects
        .put_grant(&ann.master, other, key_id, GrantLevel::Full)
        .await
        .unwrap();
    assert!(
        w.projects
            .address(&key, Some("ann_other"), ProjectAccess::Write)
            .await
            .is_ok()
    );
    // Rule 1: a slug, never an id; and other accounts' or unknown slugs are 403 too.
    for slug in [
        other.to_string(),
        "bob".to_owned(),
        "nobody".to_owned(),
        "BAD SLUG".to_owned(),
    ] {
        assert_eq!(
            w.projects
                .address(&key, Some(&slug), ProjectAccess::Read)
                .await
                .unwrap_err(),
            AddressError::InsufficientScope,
            "{slug}"
        );
    }
    // A master key reaches every project of its own account, none of another's.
    assert!(
        w.projects
            .address(&ann.master, Some("ann_other"), ProjectAccess::Write)
            .await
            .is_ok()
    );
    assert_eq!(
        w.projects
            .address(&bob.master, Some("ann_other"), ProjectAccess::Read)
            .await
            .unwrap_err(),
        AddressError::InsufficientScope
    );
}

#[tokio::test]
async fn grants_need_master_and_owned_key_and_project() {
    let w = World::new();
    let ann = w.account("ann").await;
    let bob = w.account("bob").await;
    let key = w.app_key(&ann, ann.default_project).await;
    let bob_key = w.app_key(&bob, bob.default_project).await;
    let key_id = key.key_id().unwrap();
    assert_eq!(
        w.projects
            .put_grant(&key, ann.default_project, key_id, GrantLevel::Read)
            .await,
        Err(GrantError::InsufficientScope)
    );
    let oauth = Principal {
        kind: quire_kernel::PrincipalKind::OAuthClient {
            client_id: "c".into(),
            scopes: quire_kernel::Apps::new(quire_kernel::App::ALL)
                .unwrap()
                .into(),
        },
        ..ann.master.clone()
    };
    assert_eq!(
        w.projects
            .put_grant(&oauth, ann.default_project, key_id, GrantLevel::Read)
            .await,
        Err(GrantError::InsufficientScope)
    );
    assert_eq!(
        w.projects
            .delete_grant(&oauth, ann.default_project, key_id)
            .await,
        Err(GrantError::InsufficientScope)
    );
    assert_eq!(
        w.projects
            .put_grant(
                &ann.master,
                ann.default_project,
                bob_key.key_id().unwrap(),
                GrantLevel::Read
            )
            .await,
        Err(GrantError::NotFound)
    );
    assert_eq!(
        w.projects
            .put_grant(&ann.master, bob.default_project, key_id, GrantLevel::Read)
            .await,
        Err(GrantError::NotFound)
    );
    assert_eq!(
        w.projects
            .put_grant(
                &ann.master,
                ann.default_project,
                KeyId::new(),
                GrantLevel::Read
            )
            .await,
        Err(GrantError::NotFound)
    );
    assert_eq!(
        w.projects
            .delete_grant(&ann.master, ann.default_project, key_id)
            .await,
        Err(GrantError::NotFound)
    );
}

#[tokio::test]
async fn list_and_get_follow_the_tier_rules() {
    let w = World::new();
    let ann = w.account("ann").await;
    let other = w.project(&ann, "ann_other").await;
    let key = w.app_key(&ann, ann.default_project).await;
    assert_eq!(
        w.projects.list(&key).await,
        Err(ListProjectsError::InsufficientScope)
    );
    assert_eq!(w.projects.list(&ann.master).await.unwrap().len(), 2);
    assert!(w.projects.get(&key, ann.default_project).await.is_ok());
    assert_eq!(
        w.projects.get(&key, other).await,
        Err(GetProjectError::NotFound)
    );
    assert!(w.projects.get(&ann.master, other).await.is_ok());
}

#[tokio::test]
async fn delete_without_move_to_refuses_a_project_holding_keys() {
    let w = World::new();
    let ann = w.account("ann").await;
    let doomed = w.project(&ann, "doomed").await;
    let key = w.app_key(&ann, doomed).await;
    let before = w.store.snapshot();
    let id = doomed.to_string();
    assert_eq!(
        w.projects.delete(&ann.master, doomed, &id, None).await,
        Err(DeleteProjectError::NotEmpty)
    );
    assert_eq!(
        w.projects.delete(&ann.master, doomed, "wrong", None).await,
        Err(DeleteProjectError::ConfirmMismatch)
    );
    assert!(matches!(
        w.projects
            .delete(&ann.master, doomed, &id, Some("doomed"))
            .await,
        Err(DeleteProjectError::InvalidMoveTo(_))
    ));
    assert_eq!(
        w.projects.delete(&key, doomed, &id, None).await,
        Err(DeleteProjectError::InsufficientScope)
    );
    assert_eq!(w.store.snapshot(), before, "refused deletes changed state");

    w.projects
        .delete(&ann.master, doomed, &id, Some("ann"))
        .await
        .unwrap();
    let after = w.store.snapshot();
    assert!(after.projects.iter().all(|p| p.id != doomed));
    let moved = after
        .keys
        .iter()
        .find(|k| Some(k.id) == key.key_id())
        .unwrap();
    assert_eq!(moved.project_id, Some(ann.default_project));
}

#[tokio::test]
async fn the_last_project_stays() {
    let w = World::new();
    let ann = w.account("ann").await;
    let id = ann.default_project.to_string();
    assert_eq!(
        w.projects
            .delete(&ann.master, ann.default_project, &id, None)
            .await,
        Err(DeleteProjectError::LastProject)
    );
}

#[tokio::test]
async fn a_failing_store_leaves_everything_as_it_was() {
    let w = World::new();
    let ann = w.account("ann").await;
    let doomed = w.project(&ann, "doomed").await;
    w.app_key(&ann, doomed).await;
    let before = w.store.snapshot();
    let id = doomed.to_string();

    w.store.fail(Op::DeleteProject);
    assert!(matches!(
        w.projects
            .delete(&ann.master, doomed, &id, Some("ann"))
            .await,
        Err(DeleteProjectError::Infra(_))
    ));
    w.store.fail(Op::InsertProject);
    assert!(matches!(
        w.projects
            .create(
                &ann.master,
                NewProject {
                    name: "n".into(),
                    tag: String::new(),
                    color: "red".into(),
                    slug: "newbie".into(),
                    oauth_client_id: None,
                },
            )
            .await,
        Err(WriteProjectError::Infra(_))
    ));
    w.store.fail(Op::UpdateProject);
    assert!(matches!(
        w.projects
            .update(
                &ann.master,
                doomed,
                ProjectPatch {
                    name: Some("x".into()),
                    ..ProjectPatch::default()
                }
            )
            .await,
        Err(WriteProjectError::Infra(_))
    ));
    w.store.fail(Op::PutGrant);
    let key = w.store.snapshot().keys[1].id;
    assert!(matches!(
        w.projects
            .put_grant(&ann.master, doomed, key, GrantLevel::Full)
            .await,
        Err(GrantError::Infra(_))
    ));
    assert_eq!(w.store.snapshot(), before);
    w.store.heal();
    w.projects
        .delete(&ann.master, doomed, &id, Some("ann"))
        .await
        .unwrap();
}
