//! The store contract suite: one set of checks every implementation of the store ports must
//! pass (the in-memory fake here, SQLite and PostgreSQL in `quire-store`). Each check states
//! a line of a port's `# Errors` contract or a behaviour callers rely on.
//!
//! Use [`store_contract!`](crate::store_contract) to expand one `#[tokio::test]` per check.

use std::sync::Arc;

use quire_accounts::{Account, AccountService, AccountStore, CreateAccount, CreateAccountError};
use quire_kernel::{App, Apps, Clock, Color, KeyId, ProjectId, ProjectSlug, Tier};
use quire_keys::{KeyRecord, KeyStore, PlaintextKey, new_key};
use quire_projects::{
    AssignStoreError, DeleteProjectStoreError, Grant, GrantLevel, Project, ProjectStatus,
    ProjectStore, ProjectWriteError, ResourceType,
};
use time::{Duration, OffsetDateTime};

use crate::fixtures::FixedClock;

/// Every store port at once.
pub trait Stores: AccountStore + ProjectStore + KeyStore + 'static {}
impl<T: AccountStore + ProjectStore + KeyStore + 'static> Stores for T {}

struct Seeded {
    account: Account,
    project: Project,
    master_key: PlaintextKey,
}

async fn seed<S: Stores>(s: &Arc<S>, clock: &Arc<FixedClock>, handle: &str) -> Seeded {
    clock.advance(Duration::seconds(1));
    let svc = AccountService::new(s.clone(), clock.clone());
    let created = svc
        .create(CreateAccount {
            email: format!("{handle}@example.com"),
            handle: handle.into(),
            password: None,
            platform_admin: false,
            activated: true,
        })
        .await
        .expect("seed account");
    Seeded {
        account: created.account,
        project: created.project,
        master_key: created.master_key,
    }
}

fn project_of(account: &Account, slug: &str, clock: &FixedClock) -> Project {
    clock.advance(Duration::seconds(1));
    let now = clock.now();
    Project {
        id: ProjectId::new(),
        account_id: account.id,
        name: format!("Project {slug}"),
        tag: "t".into(),
        color: Color::Teal,
        slug: ProjectSlug::parse(slug).expect("valid slug"),
        oauth_client_id: None,
        status: ProjectStatus::Active,
        created_at: now,
        updated_at: now,
    }
}

fn app_key_in(
    account: &Account,
    project: ProjectId,
    clock: &FixedClock,
) -> (PlaintextKey, KeyRecord) {
    clock.advance(Duration::seconds(1));
    new_key(
        account.id,
        "ci".into(),
        Tier::App(Apps::new([App::Page, App::Link]).expect("apps")),
        Some(project),
        clock.now(),
    )
}

pub async fn account_bootstrap_is_readable<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let seeded = seed(&s, &clock, "ann").await;
    let a = &seeded.account;
    assert_eq!(s.account_by_id(a.id).await.unwrap().as_ref(), Some(a));
    assert_eq!(
        s.project_by_id(seeded.project.id).await.unwrap().as_ref(),
        Some(&seeded.project)
    );
    assert_eq!(
        s.project_by_slug(&seeded.project.slug)
            .await
            .unwrap()
            .as_ref(),
        Some(&seeded.project)
    );
    assert_eq!(
        s.default_project_of(a.id).await.unwrap(),
        Some(seeded.project.id)
    );
    let owner = s
        .find_by_hash(&seeded.master_key.hash())
        .await
        .unwrap()
        .expect("key found by hash");
    assert_eq!(owner.key.account_id, a.id);
    assert_eq!(owner.key.tier, Tier::Master);
    assert!(owner.account_activated);
    assert_eq!(owner.default_project_id, seeded.project.id);
    assert_eq!(
        s.key_by_id(owner.key.id).await.unwrap().as_ref(),
        Some(&owner.key)
    );
    assert!(
        s.find_by_hash(&PlaintextKey::generate().hash())
            .await
            .unwrap()
            .is_none()
    );
}

pub async fn account_conflicts_store_nothing<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let svc = AccountService::new(s.clone(), clock.clone());
    let attempt = |email: &str, handle: &str| CreateAccount {
        email: email.into(),
        handle: handle.into(),
        password: None,
        platform_admin: false,
        activated: true,
    };
    let err = svc
        .create(attempt("other@example.com", "ann"))
        .await
        .unwrap_err();
    assert_eq!(err, CreateAccountError::HandleTaken);
    let err = svc
        .create(attempt("ANN@example.com", "bob"))
        .await
        .unwrap_err();
    assert_eq!(err, CreateAccountError::EmailTaken);
    // A handle equal to an existing project slug would collide with the default project.
    s.insert_project(&project_of(&ann.account, "carol", &clock))
        .await
        .unwrap();
    let err = svc
        .create(attempt("carol@example.com", "carol"))
        .await
        .unwrap_err();
    assert_eq!(err, CreateAccountError::HandleTaken);
    // None of the failed attempts left an account, a project or a key behind.
    assert_eq!(s.keys_of_account(ann.account.id).await.unwrap().len(), 1);
    let bob_slug = ProjectSlug::parse("bob").unwrap();
    assert!(s.project_by_slug(&bob_slug).await.unwrap().is_none());
    assert_eq!(
        s.projects_of_account(ann.account.id).await.unwrap().len(),
        2
    );
}

pub async fn project_slugs_and_clients_are_unique<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    // Another account's default project holds slug "ann".
    let clash = project_of(&bob.account, "ann", &clock);
    assert_eq!(
        s.insert_project(&clash).await.unwrap_err(),
        ProjectWriteError::SlugTaken
    );
    let mut p1 = project_of(&ann.account, "web_one", &clock);
    p1.oauth_client_id = Some("client-1".into());
    s.insert_project(&p1).await.unwrap();
    let mut p2 = project_of(&bob.account, "web_two", &clock);
    p2.oauth_client_id = Some("client-1".into());
    assert_eq!(
        s.insert_project(&p2).await.unwrap_err(),
        ProjectWriteError::ClientAlreadyAttached
    );
    p2.oauth_client_id = None;
    s.insert_project(&p2).await.unwrap();

    let mut renamed = p2.clone();
    renamed.slug = ProjectSlug::parse("web_one").unwrap();
    assert_eq!(
        s.update_project(&renamed).await.unwrap_err(),
        ProjectWriteError::SlugTaken
    );
    assert_eq!(s.project_by_id(p2.id).await.unwrap(), Some(p2.clone()));
    // Updating a project to its own slug and client is not a conflict.
    p1.name = "Renamed".into();
    s.update_project(&p1).await.unwrap();
    // Detaching frees the client id for another project.
    p1.oauth_client_id = None;
    s.update_project(&p1).await.unwrap();
    assert_eq!(s.project_by_id(p1.id).await.unwrap(), Some(p1.clone()));
    p2.oauth_client_id = Some("client-1".into());
    s.update_project(&p2).await.unwrap();
    assert_eq!(
        s.project_by_id(p2.id)
            .await
            .unwrap()
            .unwrap()
            .oauth_client_id
            .as_deref(),
        Some("client-1")
    );
}

pub async fn projects_are_listed_oldest_first<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let p1 = project_of(&ann.account, "ann_two", &clock);
    let p2 = project_of(&ann.account, "ann_three", &clock);
    s.insert_project(&p2).await.unwrap();
    s.insert_project(&p1).await.unwrap();
    s.insert_project(&project_of(&bob.account, "bob_two", &clock))
        .await
        .unwrap();
    let ids: Vec<ProjectId> = s
        .projects_of_account(ann.account.id)
        .await
        .unwrap()
        .iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, vec![ann.project.id, p1.id, p2.id]);
}

pub async fn keys_are_listed_revoked_once_and_found_by_hash<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let (plain, key) = app_key_in(&ann.account, ann.project.id, &clock);
    s.insert_key(&key).await.unwrap();
    let listed = s.keys_of_account(ann.account.id).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[1], key);
    assert_eq!(listed[0].tier, Tier::Master);

    let first = clock.now() + Duration::seconds(5);
    s.revoke_key(key.id, first).await.unwrap();
    s.revoke_key(key.id, first + Duration::seconds(5))
        .await
        .unwrap();
    let owner = s.find_by_hash(&plain.hash()).await.unwrap().unwrap();
    assert_eq!(owner.key.revoked_at, Some(first));
    // Revoked keys stop counting as held by their project.
    assert!(s.resources(ann.project.id).await.unwrap().keys.is_empty());
}

pub async fn grants_upsert_and_delete<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let other = project_of(&ann.account, "ann_other", &clock);
    s.insert_project(&other).await.unwrap();
    let (_, key) = app_key_in(&ann.account, ann.project.id, &clock);
    s.insert_key(&key).await.unwrap();
    assert_eq!(s.key_account(key.id).await.unwrap(), Some(ann.account.id));
    assert_eq!(s.key_account(KeyId::new()).await.unwrap(), None);

    let grant = Grant {
        key_id: key.id,
        project_id: other.id,
        level: GrantLevel::Read,
        created_at: clock.now(),
    };
    assert_eq!(s.put_grant(&grant).await.unwrap(), grant);
    assert_eq!(
        s.grant_level(key.id, other.id).await.unwrap(),
        Some(GrantLevel::Read)
    );
    let later = Grant {
        level: GrantLevel::Full,
        created_at: clock.now() + Duration::hours(1),
        ..grant.clone()
    };
    let stored = s.put_grant(&later).await.unwrap();
    assert_eq!(stored.level, GrantLevel::Full);
    assert_eq!(
        stored.created_at, grant.created_at,
        "update keeps created_at"
    );
    assert_eq!(
        s.grant_level(key.id, other.id).await.unwrap(),
        Some(GrantLevel::Full)
    );
    assert!(s.delete_grant(key.id, other.id).await.unwrap());
    assert!(!s.delete_grant(key.id, other.id).await.unwrap());
    assert_eq!(s.grant_level(key.id, other.id).await.unwrap(), None);
}

pub async fn delete_project_refuses_or_moves<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let doomed = project_of(&ann.account, "doomed", &clock);
    s.insert_project(&doomed).await.unwrap();
    let (_, key) = app_key_in(&ann.account, doomed.id, &clock);
    s.insert_key(&key).await.unwrap();
    let (_, revoked) = app_key_in(&ann.account, doomed.id, &clock);
    s.insert_key(&revoked).await.unwrap();
    s.revoke_key(revoked.id, clock.now()).await.unwrap();
    let grant = Grant {
        key_id: key.id,
        project_id: doomed.id,
        level: GrantLevel::Full,
        created_at: clock.now(),
    };
    s.put_grant(&grant).await.unwrap();

    assert_eq!(
        s.delete_project(&doomed, None).await.unwrap_err(),
        DeleteProjectStoreError::NotEmpty
    );
    assert_eq!(
        s.project_by_id(doomed.id).await.unwrap(),
        Some(doomed.clone())
    );
    assert_eq!(s.resources(doomed.id).await.unwrap().keys.len(), 1);

    s.delete_project(&doomed, Some(ann.project.id))
        .await
        .unwrap();
    assert_eq!(s.project_by_id(doomed.id).await.unwrap(), None);
    let moved = s.key_by_id(key.id).await.unwrap().unwrap();
    assert_eq!(moved.project_id, Some(ann.project.id));
    assert_eq!(
        s.key_by_id(revoked.id).await.unwrap().unwrap().project_id,
        None
    );
    assert_eq!(s.grant_level(key.id, doomed.id).await.unwrap(), None);
    assert_eq!(
        s.default_project_of(ann.account.id).await.unwrap(),
        Some(ann.project.id)
    );

    // An empty project (only a revoked key ever lived there) deletes without move_to.
    let empty = project_of(&ann.account, "empty_one", &clock);
    s.insert_project(&empty).await.unwrap();
    s.delete_project(&empty, None).await.unwrap();
    assert_eq!(s.project_by_id(empty.id).await.unwrap(), None);
}

pub async fn delete_default_project_promotes_oldest<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let second = project_of(&ann.account, "ann_second", &clock);
    let third = project_of(&ann.account, "ann_third", &clock);
    s.insert_project(&third).await.unwrap();
    s.insert_project(&second).await.unwrap();
    s.delete_project(&ann.project, None).await.unwrap();
    assert_eq!(
        s.default_project_of(ann.account.id).await.unwrap(),
        Some(second.id)
    );
    // The master key now lives in the new default project.
    let owner = s
        .find_by_hash(&ann.master_key.hash())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(owner.default_project_id, second.id);
}

pub async fn assign_moves_app_keys_only<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let dest = project_of(&ann.account, "ann_dest", &clock);
    s.insert_project(&dest).await.unwrap();
    let (_, key) = app_key_in(&ann.account, ann.project.id, &clock);
    s.insert_key(&key).await.unwrap();
    let now = clock.now();

    s.assign_resource(ann.account.id, ResourceType::Key, key.id.0, dest.id, now)
        .await
        .unwrap();
    assert_eq!(
        s.key_by_id(key.id).await.unwrap().unwrap().project_id,
        Some(dest.id)
    );
    assert_eq!(s.resources(dest.id).await.unwrap().keys[0].id, key.id.0);

    let master = s.keys_of_account(ann.account.id).await.unwrap()[0].clone();
    assert_eq!(
        s.assign_resource(ann.account.id, ResourceType::Key, master.id.0, dest.id, now)
            .await
            .unwrap_err(),
        AssignStoreError::MasterKey
    );
    assert_eq!(
        s.assign_resource(
            bob.account.id,
            ResourceType::Key,
            key.id.0,
            bob.project.id,
            now
        )
        .await
        .unwrap_err(),
        AssignStoreError::NotFound
    );
    assert_eq!(
        s.assign_resource(ann.account.id, ResourceType::Page, key.id.0, dest.id, now)
            .await
            .unwrap_err(),
        AssignStoreError::NotFound
    );
}

pub async fn times_keep_microseconds<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::at(
        OffsetDateTime::from_unix_timestamp_nanos(1_767_225_600_123_456_000).unwrap(),
    ));
    let ann = seed(&s, &clock, "ann").await;
    let stored = s.project_by_id(ann.project.id).await.unwrap().unwrap();
    assert_eq!(stored.created_at, ann.project.created_at);
    assert_eq!(stored.created_at.nanosecond(), 123_456_000);
}

/// Expands one `#[tokio::test]` per contract check. `$make` is an async fn returning
/// `Option<(Arc<S>, G)>`: `None` skips (a backend that is not available here), `G` is kept
/// alive for the test's duration (e.g. a temporary directory or database).
#[macro_export]
macro_rules! store_contract {
    ($make:path) => {
        $crate::store_contract!(@each $make,
            account_bootstrap_is_readable,
            account_conflicts_store_nothing,
            project_slugs_and_clients_are_unique,
            projects_are_listed_oldest_first,
            keys_are_listed_revoked_once_and_found_by_hash,
            grants_upsert_and_delete,
            delete_project_refuses_or_moves,
            delete_default_project_promotes_oldest,
            assign_moves_app_keys_only,
            times_keep_microseconds
        );
    };
    (@each $make:path, $($check:ident),+) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                if let Some((store, _guard)) = $make().await {
                    $crate::contract::$check(store).await;
                }
            }
        )+
    };
}
