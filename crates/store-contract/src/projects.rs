//! Projects: unique slugs, registered clients with one home project per account, listing order, grants, delete with or without a move, assigning resources.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::{Clock, KeyId, ProjectId, ProjectSlug};
use quire_keys::KeyStore;
use quire_links::LinkStore;
use quire_oauth::ClientStore;
use quire_pages::PageStore;
use quire_projects::ProjectStore;
use quire_projects::{
    AssignStoreError, DeleteProjectStoreError, Grant, GrantLevel, ProjectWriteError, ResourceType,
};
use time::Duration;

use super::support::{
    app_key_in, client_of, file, lease, link_for, page_of, project_of, seed, url_link,
};
use quire_testkit::fixtures::FixedClock;

pub(super) async fn project_slugs_and_clients_are_unique<
    S: AccountStore + ClientStore + ProjectStore + KeyStore + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let client = client_of("Client one", &clock);
    s.insert_client(&client).await.unwrap();
    let client_id = Some(client.id.as_str().to_owned());
    // Another account's default project holds slug "ann".
    let clash = project_of(&bob.account, "ann", &clock);
    assert_eq!(
        s.insert_project(&clash).await.unwrap_err(),
        ProjectWriteError::SlugTaken
    );
    // A client id must name a registered client.
    let mut stranger = project_of(&ann.account, "web_zero", &clock);
    stranger.oauth_client_id = Some("qc_nobody".into());
    assert_eq!(
        s.insert_project(&stranger).await.unwrap_err(),
        ProjectWriteError::UnknownClient
    );
    assert_eq!(s.project_by_id(stranger.id).await.unwrap(), None);
    let mut p1 = project_of(&ann.account, "web_one", &clock);
    p1.oauth_client_id = client_id.clone();
    s.insert_project(&p1).await.unwrap();
    // One home project per client and account: a second project of ann may not name it...
    let mut p3 = project_of(&ann.account, "web_three", &clock);
    p3.oauth_client_id = client_id.clone();
    assert_eq!(
        s.insert_project(&p3).await.unwrap_err(),
        ProjectWriteError::ClientAlreadyAttached
    );
    // ...but bob's may.
    let mut p2 = project_of(&bob.account, "web_two", &clock);
    p2.oauth_client_id = client_id.clone();
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
    // Detaching frees the client for another project of the account.
    p1.oauth_client_id = None;
    s.update_project(&p1).await.unwrap();
    assert_eq!(s.project_by_id(p1.id).await.unwrap(), Some(p1.clone()));
    s.insert_project(&p3).await.unwrap();
    let mut unknown = p3.clone();
    unknown.oauth_client_id = Some("qc_nobody".into());
    assert_eq!(
        s.update_project(&unknown).await.unwrap_err(),
        ProjectWriteError::UnknownClient
    );
    assert_eq!(s.project_by_id(p3.id).await.unwrap(), Some(p3.clone()));
}

pub(super) async fn projects_are_listed_oldest_first<
    S: AccountStore + ProjectStore + KeyStore + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
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

pub(super) async fn grants_upsert_and_delete<
    S: AccountStore + ProjectStore + KeyStore + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
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

pub(super) async fn delete_project_refuses_or_moves<
    S: AccountStore + ProjectStore + KeyStore + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
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

pub(super) async fn delete_default_project_promotes_oldest<
    S: AccountStore + ProjectStore + KeyStore + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
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

pub(super) async fn assign_moves_app_keys_only<
    S: AccountStore + ProjectStore + KeyStore + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
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

pub(super) async fn projects_hold_and_move_pages_and_links<
    S: AccountStore + ProjectStore + KeyStore + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
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
    let page_link = link_for(&page, None, &clock);
    s.insert_link(&page_link).await.unwrap();
    let link = url_link(
        &ann.account,
        doomed.id,
        "https://example.com/",
        "FFFFFFFFL1",
        Some("promo"),
        &clock,
    );
    s.insert_link(&link).await.unwrap();
    let res = s.resources(doomed.id).await.unwrap();
    assert_eq!(res.pages[0].id, page.id.0);
    assert_eq!(res.links.len(), 1, "a page's link is held through its page");
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
    assert_eq!(
        s.link(link.id).await.unwrap().unwrap().project_id,
        ann.project.id,
        "URL links move with the project's other resources"
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
    assert_eq!(
        s.assign_resource(
            ann.account.id,
            ResourceType::Link,
            page_link.id.0,
            ann.project.id,
            now,
        )
        .await
        .unwrap_err(),
        AssignStoreError::NotFound,
        "a page's link moves only with its page"
    );
    s.assign_resource(ann.account.id, ResourceType::Link, link.id.0, dest.id, now)
        .await
        .unwrap();
    assert_eq!(s.link(link.id).await.unwrap().unwrap().project_id, dest.id);
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
