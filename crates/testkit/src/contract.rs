//! The store contract suite: one set of checks every implementation of the store ports must
//! pass (the in-memory fake here, SQLite and PostgreSQL in `quire-store`). Each check states
//! a line of a port's `# Errors` contract or a behaviour callers rely on.
//!
//! Use [`store_contract!`](crate::store_contract) to expand one `#[tokio::test]` per check.

use std::sync::Arc;

use quire_accounts::{
    Account, AccountService, AccountStore, CreateAccount, CreateAccountError, Session,
    SessionStore, TotpSecret,
};
use quire_device_auth::ports::InsertGrantError;
use quire_device_auth::{DeviceGrant, DeviceGrantStore, GrantState, RateLimiter};
use quire_kernel::AccountId;
use quire_kernel::{App, Apps, Clock, Color, KeyId, ProjectId, ProjectSlug, Tier};
use quire_kernel::{Email, Handle, LinkId, PageId};
use quire_keys::{KeyRecord, KeyStore, PlaintextKey, new_key};
use quire_links::{Access, AllowEntry, Link, LinkStore, LinkWriteError, Policy};
use quire_pages::{
    AccountDirectory, FileEntry, InsertPageError, Page, PageStatus, PageStore, UpdatePageStoreError,
};
use quire_projects::{
    AssignStoreError, DeleteProjectStoreError, Grant, GrantLevel, Project, ProjectStatus,
    ProjectStore, ProjectWriteError, ResourceType,
};
use time::{Duration, OffsetDateTime};

use crate::fixtures::FixedClock;

/// Every store port at once.
pub trait Stores:
    AccountStore
    + ProjectStore
    + KeyStore
    + PageStore
    + LinkStore
    + AccountDirectory
    + DeviceGrantStore
    + RateLimiter
    + SessionStore
    + 'static
{
}
impl<T> Stores for T where
    T: AccountStore
        + ProjectStore
        + KeyStore
        + PageStore
        + LinkStore
        + AccountDirectory
        + DeviceGrantStore
        + RateLimiter
        + SessionStore
        + 'static
{
}

struct Seeded {
    account: Account,
    project: Project,
    master_key: PlaintextKey,
}

async fn seed<S: Stores>(s: &Arc<S>, clock: &Arc<FixedClock>, handle: &str) -> Seeded {
    clock.advance(Duration::seconds(1));
    let created = crate::fixtures::create_account(s.clone(), clock.clone(), handle).await;
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

fn page_of(
    account: &Account,
    project: ProjectId,
    slug: &str,
    public_id: &str,
    clock: &FixedClock,
) -> Page {
    clock.advance(Duration::seconds(1));
    let now = clock.now();
    Page {
        id: PageId::new(),
        public_id: public_id.into(),
        account_id: account.id,
        project_id: project,
        slug: slug.into(),
        title: format!("Title {slug}"),
        entrypoint: "index.html".into(),
        status: PageStatus::Active,
        size_bytes: 3,
        file_count: 1,
        created_at: now,
        updated_at: now,
        archived_at: None,
    }
}

fn file(path: &str, size: u64) -> FileEntry {
    FileEntry {
        path: path.into(),
        size_bytes: size,
        content_type: "text/html; charset=utf-8".into(),
        sha256: format!("{:0>64}", size),
    }
}

fn link_for(page: &Page, alias: Option<&str>, clock: &FixedClock) -> Link {
    let now = clock.now();
    Link {
        id: LinkId::new(),
        page_id: page.id,
        account_id: page.account_id,
        project_id: page.project_id,
        public_id: page.public_id.clone(),
        alias: alias.map(str::to_owned),
        policy: Policy {
            access: Access::Public,
            expires_at: None,
            max_views: None,
            allow: vec![],
        },
        password_hash: None,
        view_count: 0,
        created_at: now,
        updated_at: now,
    }
}

/// A publish lease a minute from the clock's now.
fn lease(clock: &FixedClock) -> OffsetDateTime {
    clock.now() + Duration::minutes(1)
}

pub async fn pages_are_invisible_until_ready_and_slugs_unique_per_owner<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let page = page_of(&ann.account, ann.project.id, "site", "AAAAAAAAA1", &clock);
    s.insert_pending(
        &page,
        &[file("index.html", 3), file("a/b.css", 5)],
        lease(&clock),
    )
    .await
    .unwrap();
    assert_eq!(
        s.page(page.id).await.unwrap(),
        None,
        "pending pages are invisible"
    );
    assert!(s.page_exists(page.id).await.unwrap());
    let at = |secs: i64| clock.now() + Duration::seconds(secs);
    assert!(s.stale_pending(at(59)).await.unwrap().is_empty(), "leased");
    assert_eq!(s.stale_pending(at(61)).await.unwrap(), vec![page.id]);
    assert_eq!(
        s.lapsed_slug_holder(ann.account.id, "site", at(61))
            .await
            .unwrap(),
        Some(page.id)
    );
    assert_eq!(
        s.lapsed_slug_holder(bob.account.id, "site", at(61))
            .await
            .unwrap(),
        None,
        "only the owner's slug"
    );
    assert!(s.renew_lease(page.id, at(120)).await.unwrap());
    assert!(s.stale_pending(at(61)).await.unwrap().is_empty(), "renewed");
    assert_eq!(
        s.lapsed_slug_holder(ann.account.id, "site", at(61))
            .await
            .unwrap(),
        None
    );
    assert!(!s.renew_lease(PageId::new(), at(120)).await.unwrap());
    s.mark_ready(page.id).await.unwrap();
    assert_eq!(s.page(page.id).await.unwrap(), Some(page.clone()));
    assert!(
        s.mark_ready(page.id).await.is_err(),
        "a page is made ready once, by the publish that holds it"
    );
    assert!(!s.renew_lease(page.id, at(120)).await.unwrap(), "ready");
    assert!(s.stale_pending(at(3600)).await.unwrap().is_empty());
    assert_eq!(
        s.lapsed_slug_holder(ann.account.id, "site", at(3600))
            .await
            .unwrap(),
        None,
        "a ready page holds its slug for good"
    );
    let files = s.files(page.id).await.unwrap();
    assert_eq!(
        files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        vec!["a/b.css", "index.html"]
    );

    let same_slug = page_of(&ann.account, ann.project.id, "site", "AAAAAAAAA2", &clock);
    assert_eq!(
        s.insert_pending(&same_slug, &[], lease(&clock))
            .await
            .unwrap_err(),
        InsertPageError::SlugTaken
    );
    let same_id = page_of(&ann.account, ann.project.id, "other", "AAAAAAAAA1", &clock);
    assert_eq!(
        s.insert_pending(&same_id, &[], lease(&clock))
            .await
            .unwrap_err(),
        InsertPageError::PublicIdTaken
    );
    // Another owner may use the same slug.
    let bobs = page_of(&bob.account, bob.project.id, "site", "BBBBBBBBB1", &clock);
    s.insert_pending(&bobs, &[file("index.html", 1)], lease(&clock))
        .await
        .unwrap();
    s.mark_ready(bobs.id).await.unwrap();
    assert_eq!(
        s.pages_in_project(ann.project.id, PageStatus::Active)
            .await
            .unwrap(),
        vec![page.clone()]
    );

    let mut renamed = page.clone();
    renamed.slug = "site".into();
    renamed.title = "New".into();
    s.update_page(&renamed).await.unwrap();
    let second = page_of(&ann.account, ann.project.id, "second", "AAAAAAAAA3", &clock);
    s.insert_pending(&second, &[], lease(&clock)).await.unwrap();
    s.mark_ready(second.id).await.unwrap();
    let mut clash = second.clone();
    clash.slug = "site".into();
    assert_eq!(
        s.update_page(&clash).await.unwrap_err(),
        UpdatePageStoreError::SlugTaken
    );
    let mut archived = second.clone();
    archived.status = PageStatus::Archived;
    archived.archived_at = Some(clock.now());
    s.update_page(&archived).await.unwrap();
    assert_eq!(
        s.pages_in_project(ann.project.id, PageStatus::Archived)
            .await
            .unwrap(),
        vec![archived]
    );
    let by_ids = s
        .pages_by_ids(&[page.id, bobs.id, PageId::new()])
        .await
        .unwrap();
    assert_eq!(by_ids.len(), 2);

    s.delete_page(page.id).await.unwrap();
    assert!(!s.page_exists(page.id).await.unwrap());
    assert!(s.files(page.id).await.unwrap().is_empty());
}

pub async fn put_files_replaces_by_path_and_sets_totals<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let page = page_of(&ann.account, ann.project.id, "site", "CCCCCCCCC1", &clock);
    s.insert_pending(&page, &[file("index.html", 3)], lease(&clock))
        .await
        .unwrap();
    s.mark_ready(page.id).await.unwrap();
    let later = clock.now() + Duration::minutes(1);
    s.put_files(
        page.id,
        &[file("index.html", 7), file("new.js", 2)],
        9,
        2,
        later,
    )
    .await
    .unwrap();
    let files = s.files(page.id).await.unwrap();
    assert_eq!(files, vec![file("index.html", 7), file("new.js", 2)]);
    let stored = s.page(page.id).await.unwrap().unwrap();
    assert_eq!(
        (stored.size_bytes, stored.file_count, stored.updated_at),
        (9, 2, later)
    );
}

pub async fn link_codes_share_one_namespace<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let p1 = page_of(&ann.account, ann.project.id, "one", "DDDDDDDDD1", &clock);
    let p2 = page_of(&ann.account, ann.project.id, "two", "DDDDDDDDD2", &clock);
    let l1 = link_for(&p1, Some("launch"), &clock);
    s.insert_link(&l1).await.unwrap();
    assert_eq!(s.link_of_page(p1.id).await.unwrap(), Some(l1.clone()));
    // An alias may not be another link's alias or public id.
    assert_eq!(
        s.insert_link(&link_for(&p2, Some("launch"), &clock))
            .await
            .unwrap_err(),
        LinkWriteError::CodeTaken
    );
    assert_eq!(
        s.insert_link(&link_for(&p2, Some("DDDDDDDDD1"), &clock))
            .await
            .unwrap_err(),
        LinkWriteError::CodeTaken
    );
    assert_eq!(
        s.link_of_page(p2.id).await.unwrap(),
        None,
        "a refused link leaves nothing"
    );
    // A public id may not be an existing code either.
    let p3 = page_of(&ann.account, ann.project.id, "three", "launch", &clock);
    assert_eq!(
        s.insert_pending(&p3, &[], lease(&clock)).await.unwrap_err(),
        InsertPageError::PublicIdTaken
    );

    let mut l2 = link_for(&p2, None, &clock);
    s.insert_link(&l2).await.unwrap();
    l2.alias = Some("launch".into());
    assert_eq!(
        s.update_link(&l2).await.unwrap_err(),
        LinkWriteError::CodeTaken
    );
    assert_eq!(s.link_of_page(p2.id).await.unwrap().unwrap().alias, None);
    // Moving the alias: free it on one link, take it on the other.
    let mut l1b = l1.clone();
    l1b.alias = None;
    s.update_link(&l1b).await.unwrap();
    s.update_link(&l2).await.unwrap();
    assert_eq!(
        s.link_of_page(p2.id)
            .await
            .unwrap()
            .unwrap()
            .alias
            .as_deref(),
        Some("launch")
    );
    assert_eq!(s.links_of_pages(&[p1.id, p2.id]).await.unwrap().len(), 2);
    s.delete_link_of_page(p2.id).await.unwrap();
    assert_eq!(s.link_of_page(p2.id).await.unwrap(), None);
    // Its codes are free again.
    s.insert_link(&link_for(&p2, Some("launch"), &clock))
        .await
        .unwrap();
}

pub async fn links_keep_policy_and_allow_lists<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    assert_eq!(
        s.account_by_handle(&Handle::parse("bob").unwrap())
            .await
            .unwrap(),
        Some(bob.account.id)
    );
    assert_eq!(
        s.account_by_handle(&Handle::parse("nobody").unwrap())
            .await
            .unwrap(),
        None
    );
    let (h, e) = s.handle_and_email(bob.account.id).await.unwrap().unwrap();
    assert_eq!((h.as_str(), e.as_str()), ("bob", "bob@example.com"));

    let page = page_of(&ann.account, ann.project.id, "secret", "EEEEEEEEE1", &clock);
    let mut link = link_for(&page, None, &clock);
    link.policy.access = Access::AllowList;
    link.password_hash = Some("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into());
    link.policy.expires_at = Some(clock.now() + Duration::days(1));
    link.policy.max_views = Some(50);
    let first = link.created_at;
    link.policy.allow = vec![
        AllowEntry::Account(bob.account.id),
        AllowEntry::Email(Email::parse("carol@example.com").unwrap()),
    ];
    s.insert_link(&link).await.unwrap();
    let stored = s.link_of_page(page.id).await.unwrap().unwrap();
    assert_eq!(stored.policy, link.policy);
    assert_eq!(stored.password_hash, link.password_hash);

    let shared = s.shared_with(bob.account.id, None).await.unwrap();
    assert_eq!(shared, vec![(page.id, first)]);
    let carol = Email::parse("carol@example.com").unwrap();
    assert_eq!(
        s.shared_with(AccountId::new(), Some(&carol)).await.unwrap(),
        vec![(page.id, first)]
    );
    assert!(
        s.shared_with(ann.account.id, None)
            .await
            .unwrap()
            .is_empty()
    );

    // Bob stays shared since the first write; dave is new and shared as of the update.
    let dave = Email::parse("dave@example.com").unwrap();
    link.policy.allow = vec![
        AllowEntry::Account(bob.account.id),
        AllowEntry::Email(dave.clone()),
    ];
    link.password_hash = None;
    link.policy.max_views = None;
    link.updated_at = first + Duration::hours(1);
    s.update_link(&link).await.unwrap();
    let stored = s.link_of_page(page.id).await.unwrap().unwrap();
    assert_eq!(stored.policy, link.policy);
    assert_eq!(stored.password_hash, None);
    assert!(
        s.shared_with(AccountId::new(), Some(&carol))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        s.shared_with(bob.account.id, None).await.unwrap(),
        vec![(page.id, first)]
    );
    assert_eq!(
        s.shared_with(AccountId::new(), Some(&dave)).await.unwrap(),
        vec![(page.id, first + Duration::hours(1))]
    );
}

pub async fn projects_hold_and_move_pages_and_links<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let doomed = project_of(&ann.account, "doomed", &clock);
    s.insert_project(&doomed).await.unwrap();
    let page = page_of(&ann.account, doomed.id, "site", "FFFFFFFFF1", &clock);
    s.insert_pending(&page, &[file("index.html", 3)], lease(&clock))
        .await
        .unwrap();
    s.mark_ready(page.id).await.unwrap();
    let link = link_for(&page, Some("promo"), &clock);
    s.insert_link(&link).await.unwrap();
    let res = s.resources(doomed.id).await.unwrap();
    assert_eq!(res.pages[0].id, page.id.0);
    assert_eq!(res.links[0].id, link.id.0);
    assert_eq!(res.links[0].name, "promo");
    assert_eq!(
        s.delete_project(&doomed, None).await.unwrap_err(),
        DeleteProjectStoreError::NotEmpty
    );
    s.delete_project(&doomed, Some(ann.project.id))
        .await
        .unwrap();
    assert_eq!(
        s.page(page.id).await.unwrap().unwrap().project_id,
        ann.project.id
    );
    assert_eq!(
        s.link_of_page(page.id).await.unwrap().unwrap().project_id,
        ann.project.id
    );

    let dest = project_of(&ann.account, "dest", &clock);
    s.insert_project(&dest).await.unwrap();
    let now = clock.now();
    s.assign_resource(ann.account.id, ResourceType::Page, page.id.0, dest.id, now)
        .await
        .unwrap();
    assert_eq!(s.page(page.id).await.unwrap().unwrap().project_id, dest.id);
    assert_eq!(
        s.link_of_page(page.id).await.unwrap().unwrap().project_id,
        dest.id,
        "a page moves with its link"
    );
    s.assign_resource(
        ann.account.id,
        ResourceType::Link,
        link.id.0,
        ann.project.id,
        now,
    )
    .await
    .unwrap();
    assert_eq!(
        s.link_of_page(page.id).await.unwrap().unwrap().project_id,
        ann.project.id
    );
    assert_eq!(s.page(page.id).await.unwrap().unwrap().project_id, dest.id);
    assert_eq!(
        s.assign_resource(
            bob.account.id,
            ResourceType::Page,
            page.id.0,
            bob.project.id,
            now
        )
        .await
        .unwrap_err(),
        AssignStoreError::NotFound
    );
    assert_eq!(
        s.assign_resource(
            bob.account.id,
            ResourceType::Link,
            link.id.0,
            bob.project.id,
            now
        )
        .await
        .unwrap_err(),
        AssignStoreError::NotFound
    );
}

fn grant(user_code: &str, device_hash: &str, clock: &FixedClock) -> DeviceGrant {
    let now = clock.now();
    DeviceGrant {
        id: uuid::Uuid::new_v4(),
        device_code_hash: device_hash.into(),
        user_code: user_code.into(),
        client_name: "cli".into(),
        state: GrantState::Pending,
        created_at: now,
        expires_at: now + Duration::seconds(600),
        interval_secs: 3,
        last_polled_at: None,
        decided_at: None,
    }
}

pub async fn device_grants_change_state_by_compare_and_set<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let g = grant("BCDFGHJK", &"a".repeat(64), &clock);
    s.insert_grant(&g).await.unwrap();
    assert_eq!(
        s.insert_grant(&grant("BCDFGHJK", &"b".repeat(64), &clock))
            .await
            .unwrap_err(),
        InsertGrantError::UserCodeTaken
    );
    assert_eq!(
        s.grant_by_device_hash(&g.device_code_hash).await.unwrap(),
        Some(g.clone())
    );
    assert_eq!(
        s.grant_by_user_code("BCDFGHJK").await.unwrap(),
        Some(g.clone())
    );
    assert_eq!(s.grant_by_user_code("ZZZZZZZZ").await.unwrap(), None);

    let polled = clock.now() + Duration::seconds(4);
    s.record_poll(g.id, polled, 8).await.unwrap();
    let stored = s.grant_by_user_code("BCDFGHJK").await.unwrap().unwrap();
    assert_eq!(
        (stored.last_polled_at, stored.interval_secs),
        (Some(polled), 8)
    );

    let approved = GrantState::Approved {
        account: ann.account.id,
    };
    assert!(s.decide(g.id, approved, clock.now()).await.unwrap());
    assert!(
        !s.decide(g.id, GrantState::Denied, clock.now())
            .await
            .unwrap(),
        "decided twice"
    );
    let (plain, key) = new_key(
        ann.account.id,
        "agent: cli".into(),
        Tier::Master,
        None,
        clock.now(),
    );
    assert!(s.claim(g.id, &key).await.unwrap());
    assert_eq!(
        s.grant_by_user_code("BCDFGHJK")
            .await
            .unwrap()
            .unwrap()
            .state,
        GrantState::Claimed { key: key.id }
    );
    assert!(
        s.find_by_hash(&plain.hash()).await.unwrap().is_some(),
        "claimed key stored"
    );
    let (second_plain, second) =
        new_key(ann.account.id, "x".into(), Tier::Master, None, clock.now());
    assert!(!s.claim(g.id, &second).await.unwrap(), "claimed twice");
    assert!(
        s.find_by_hash(&second_plain.hash())
            .await
            .unwrap()
            .is_none(),
        "a lost claim stores no key"
    );

    let denied = grant("CDFGHJKL", &"c".repeat(64), &clock);
    s.insert_grant(&denied).await.unwrap();
    assert!(
        s.decide(denied.id, GrantState::Denied, clock.now())
            .await
            .unwrap()
    );
    let (_, k) = new_key(ann.account.id, "x".into(), Tier::Master, None, clock.now());
    assert!(
        !s.claim(denied.id, &k).await.unwrap(),
        "a denied grant cannot be claimed"
    );
}

pub async fn old_grants_and_rate_windows_are_swept<S: Stores>(s: Arc<S>) {
    let clock = FixedClock::new();
    let old = grant("BCDFGHJK", &"1".repeat(64), &clock);
    s.insert_grant(&old).await.unwrap();
    let later = FixedClock::at(clock.now() + Duration::hours(1));
    let fresh = grant("LMNPQRST", &"2".repeat(64), &later);
    s.insert_grant(&fresh).await.unwrap();
    let cutoff = old.expires_at + Duration::seconds(1);
    assert_eq!(s.delete_grants_expired_before(cutoff).await.unwrap(), 1);
    assert_eq!(s.grant_by_user_code("BCDFGHJK").await.unwrap(), None);
    assert!(s.grant_by_user_code("LMNPQRST").await.unwrap().is_some());
    // The freed user code can be issued again.
    s.insert_grant(&grant("BCDFGHJK", &"3".repeat(64), &later))
        .await
        .unwrap();

    let window = std::time::Duration::from_secs(900);
    let t0 = clock.now();
    assert!(s.hit("token", "10.0.0.1", window, 1, t0).await.unwrap());
    let t1 = t0 + Duration::hours(2);
    assert!(s.hit("token", "10.0.0.1", window, 1, t1).await.unwrap());
    assert_eq!(
        s.forget_windows_before(t0 + Duration::hours(1))
            .await
            .unwrap(),
        1
    );
    assert!(
        !s.hit("token", "10.0.0.1", window, 1, t1).await.unwrap(),
        "the current window keeps its count"
    );
}

pub async fn rate_limits_count_exactly_per_window<S: Stores>(s: Arc<S>) {
    let clock = FixedClock::new();
    let window = std::time::Duration::from_secs(900);
    let now = clock.now();
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.push(s.hit("token", "10.0.0.1", window, 2, now).await.unwrap());
    }
    assert_eq!(answers, vec![true, true, false]);
    assert!(s.hit("token", "10.0.0.2", window, 2, now).await.unwrap());
    assert!(
        s.hit("device_authorization", "10.0.0.1", window, 2, now)
            .await
            .unwrap()
    );
    assert!(
        s.hit("token", "10.0.0.1", window, 2, now + Duration::seconds(900))
            .await
            .unwrap()
    );
    // Concurrent hits are counted exactly.
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let s = s.clone();
            tokio::spawn(async move { s.hit("race", "10.0.0.9", window, 10, now).await.unwrap() })
        })
        .collect();
    let mut allowed = 0;
    for t in tasks {
        if t.await.unwrap() {
            allowed += 1;
        }
    }
    assert_eq!(allowed, 10);
}

pub async fn accounts_are_found_by_login_and_sessions_by_hash<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    assert_eq!(
        s.account_by_login("ann").await.unwrap().map(|a| a.id),
        Some(ann.account.id)
    );
    assert_eq!(
        s.account_by_login("ann@example.com")
            .await
            .unwrap()
            .map(|a| a.id),
        Some(ann.account.id)
    );
    assert_eq!(s.account_by_login("nobody").await.unwrap(), None);
    assert!(
        s.set_password_hash(ann.account.id, "$argon2id$stand-in")
            .await
            .unwrap()
    );
    assert_eq!(
        s.account_by_id(ann.account.id)
            .await
            .unwrap()
            .unwrap()
            .password_hash
            .as_deref(),
        Some("$argon2id$stand-in")
    );
    assert!(!s.set_password_hash(AccountId::new(), "x").await.unwrap());

    let session = Session {
        id_hash: "f".repeat(64),
        account_id: ann.account.id,
        mfa_satisfied: false,
        created_at: clock.now(),
        expires_at: clock.now() + Duration::hours(12),
    };
    s.insert_session(&session).await.unwrap();
    assert_eq!(
        s.session_by_hash(&session.id_hash).await.unwrap(),
        Some(session.clone())
    );
    assert_eq!(s.session_by_hash(&"0".repeat(64)).await.unwrap(), None);
    s.delete_session(&session.id_hash).await.unwrap();
    assert_eq!(s.session_by_hash(&session.id_hash).await.unwrap(), None);
    s.delete_session(&session.id_hash).await.unwrap();
}

pub async fn totp_enrollment_is_once_and_steps_are_used_once<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let session = |hash: char, satisfied: bool| Session {
        id_hash: hash.to_string().repeat(64),
        account_id: ann.account.id,
        mfa_satisfied: satisfied,
        created_at: clock.now(),
        expires_at: clock.now() + Duration::hours(12),
    };
    let (enrolling, other) = (session('a', true), session('b', true));
    s.insert_session(&enrolling).await.unwrap();
    s.insert_session(&other).await.unwrap();
    // A step before enrollment is refused: there is no factor to use it with.
    assert!(!s.use_totp_step(ann.account.id, 5).await.unwrap());

    let secret = TotpSecret::generate();
    assert!(
        s.enroll_totp(ann.account.id, &secret, 100, &enrolling.id_hash)
            .await
            .unwrap()
    );
    let stored = s.account_by_id(ann.account.id).await.unwrap().unwrap();
    assert_eq!(stored.totp_secret, Some(secret.clone()));
    let satisfied = |hash: String| {
        let s = Arc::clone(&s);
        async move {
            s.session_by_hash(&hash)
                .await
                .unwrap()
                .unwrap()
                .mfa_satisfied
        }
    };
    assert!(satisfied(enrolling.id_hash.clone()).await);
    assert!(
        !satisfied(other.id_hash.clone()).await,
        "other sessions must give the code"
    );
    assert!(
        !s.enroll_totp(ann.account.id, &TotpSecret::generate(), 200, "")
            .await
            .unwrap(),
        "a second enrollment changes nothing"
    );
    assert_eq!(
        s.account_by_id(ann.account.id)
            .await
            .unwrap()
            .unwrap()
            .totp_secret,
        Some(secret)
    );

    // The enrolling step, and anything not later, is spent.
    assert!(!s.use_totp_step(ann.account.id, 100).await.unwrap());
    assert!(!s.use_totp_step(ann.account.id, 99).await.unwrap());
    assert!(s.use_totp_step(ann.account.id, 101).await.unwrap());
    assert!(!s.use_totp_step(ann.account.id, 101).await.unwrap());
    assert!(!s.use_totp_step(AccountId::new(), 500).await.unwrap());

    s.mark_mfa_satisfied(&other.id_hash).await.unwrap();
    assert!(satisfied(other.id_hash.clone()).await);
    s.mark_mfa_satisfied(&"9".repeat(64)).await.unwrap();
}

pub async fn expired_sessions_are_swept<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    for (hash, hours) in [('1', 1), ('2', 2), ('3', 3)] {
        s.insert_session(&Session {
            id_hash: hash.to_string().repeat(64),
            account_id: ann.account.id,
            mfa_satisfied: true,
            created_at: clock.now(),
            expires_at: clock.now() + Duration::hours(hours),
        })
        .await
        .unwrap();
    }
    let at_two = clock.now() + Duration::hours(2);
    assert_eq!(s.delete_expired_sessions(at_two).await.unwrap(), 2);
    assert_eq!(s.session_by_hash(&"2".repeat(64)).await.unwrap(), None);
    assert!(s.session_by_hash(&"3".repeat(64)).await.unwrap().is_some());
    assert_eq!(s.delete_expired_sessions(at_two).await.unwrap(), 0);
}

pub async fn pages_are_found_by_owner_and_slug_and_links_by_code<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let page = page_of(&ann.account, ann.project.id, "site", "FFFFFFFFF1", &clock);
    s.insert_pending(&page, &[], lease(&clock)).await.unwrap();
    assert_eq!(
        s.page_by_slug(ann.account.id, "site").await.unwrap(),
        None,
        "a pending page is not served"
    );
    s.mark_ready(page.id).await.unwrap();
    assert_eq!(
        s.page_by_slug(ann.account.id, "site").await.unwrap(),
        Some(page.clone())
    );
    assert_eq!(s.page_by_slug(bob.account.id, "site").await.unwrap(), None);
    assert_eq!(s.page_by_slug(ann.account.id, "other").await.unwrap(), None);

    let link = link_for(&page, Some("launch-day"), &clock);
    s.insert_link(&link).await.unwrap();
    assert_eq!(
        s.link_by_code("launch-day").await.unwrap(),
        Some(link.clone())
    );
    assert_eq!(
        s.link_by_code("FFFFFFFFF1").await.unwrap(),
        Some(link.clone())
    );
    assert_eq!(
        s.link_by_code("Launch-Day").await.unwrap(),
        None,
        "codes are exact"
    );
    assert_eq!(s.link_by_code("nothing").await.unwrap(), None);
}

pub async fn views_are_claimed_within_the_budget_and_added_in_bulk<S: Stores>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let budgeted = page_of(&ann.account, ann.project.id, "once", "GGGGGGGGG1", &clock);
    let open = page_of(&ann.account, ann.project.id, "open", "GGGGGGGGG2", &clock);
    let mut limited = link_for(&budgeted, None, &clock);
    limited.policy.max_views = Some(3);
    let unlimited = link_for(&open, None, &clock);
    s.insert_link(&limited).await.unwrap();
    s.insert_link(&unlimited).await.unwrap();

    // Racing claims: exactly the budget succeeds.
    let claims = (0..10).map(|_| {
        let s = s.clone();
        let id = limited.id;
        tokio::spawn(async move { s.claim_view(id).await.unwrap() })
    });
    let mut granted = 0;
    for c in claims {
        if c.await.unwrap() {
            granted += 1;
        }
    }
    assert_eq!(granted, 3);
    let stored = s.link_of_page(budgeted.id).await.unwrap().unwrap();
    assert_eq!(stored.view_count, 3);

    assert!(s.claim_view(unlimited.id).await.unwrap());
    s.add_views(&[(unlimited.id, 41), (LinkId::new(), 5)])
        .await
        .unwrap();
    assert_eq!(
        s.link_of_page(open.id).await.unwrap().unwrap().view_count,
        42
    );
    assert!(
        !s.claim_view(LinkId::new()).await.unwrap(),
        "a gone link counts nothing"
    );

    // A policy update never writes the count back.
    let mut changed = s.link_of_page(open.id).await.unwrap().unwrap();
    changed.view_count = 0;
    changed.policy.max_views = Some(100);
    s.update_link(&changed).await.unwrap();
    assert_eq!(
        s.link_of_page(open.id).await.unwrap().unwrap().view_count,
        42
    );
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
            times_keep_microseconds,
            pages_are_invisible_until_ready_and_slugs_unique_per_owner,
            put_files_replaces_by_path_and_sets_totals,
            link_codes_share_one_namespace,
            links_keep_policy_and_allow_lists,
            projects_hold_and_move_pages_and_links,
            device_grants_change_state_by_compare_and_set,
            rate_limits_count_exactly_per_window,
            old_grants_and_rate_windows_are_swept,
            accounts_are_found_by_login_and_sessions_by_hash,
            totp_enrollment_is_once_and_steps_are_used_once,
            expired_sessions_are_swept,
            pages_are_found_by_owner_and_slug_and_links_by_code,
            views_are_claimed_within_the_budget_and_added_in_bulk
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
