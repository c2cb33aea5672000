//! The last keyset lists: a project's resources one kind at a time, and the live OAuth
//! clients, read a page at a time, give every item once, oldest first with ties by id.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_databases::DatabaseRecords;
use quire_kernel::{Clock, TimeKey};
use quire_keys::KeyStore;
use quire_links::LinkStore;
use quire_oauth::{ClientKey, ClientStore, OAuthClient};
use quire_pages::{Page, PageStore};
use quire_projects::{ProjectStore, ResourceEntry, ResourceType};
use time::Duration;
use uuid::Uuid;

use super::databases::{database_in, ready_database};
use super::support::{app_key_in, client_of, file, link_for, page_of, project_of, seed, url_link};
use quire_testkit::fixtures::FixedClock;

async fn ready<S: PageStore>(s: &S, page: &Page) {
    s.insert_pending(
        page,
        &[file("index.html", 1)],
        page.created_at + Duration::minutes(1),
    )
    .await
    .unwrap();
    s.mark_ready(page.id).await.unwrap();
}

/// Every resource of `kind` in the project, read `limit` at a time.
async fn resources_through<S: ProjectStore>(
    s: &S,
    project: quire_kernel::ProjectId,
    kind: ResourceType,
    limit: u32,
) -> Vec<ResourceEntry> {
    let mut all = Vec::new();
    let mut after: Option<TimeKey> = None;
    loop {
        let chunk = s
            .resources_after(project, kind, after.as_ref(), limit)
            .await
            .unwrap();
        assert!(chunk.len() <= limit as usize);
        let Some(last) = chunk.last() else {
            return all;
        };
        after = Some(TimeKey {
            at: last.created_at,
            id: last.id,
        });
        all.extend(chunk);
    }
}

/// The ids of `entries` in list order: oldest first, ties by id.
fn in_order(entries: &[ResourceEntry]) -> Vec<Uuid> {
    let mut sorted: Vec<_> = entries.iter().map(|e| (e.created_at, e.id)).collect();
    sorted.sort();
    sorted.into_iter().map(|(_, id)| id).collect()
}

pub(super) async fn project_resources_are_listed_by_keyset_kind_by_kind<
    S: AccountStore + ProjectStore + PageStore + LinkStore + KeyStore + DatabaseRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let project = project_of(&ann.account, "ann_res", &clock);
    s.insert_project(&project).await.unwrap();
    let tie = clock.now() + Duration::microseconds(250_001);
    let mut pages = Vec::new();
    for n in 0..5 {
        let mut page = page_of(
            &ann.account,
            project.id,
            &format!("p{n}"),
            &format!("resp{n:06}"),
            &clock,
        );
        if n < 3 {
            page.created_at = tie;
            page.updated_at = tie;
        }
        ready(s.as_ref(), &page).await;
        pages.push(page);
    }
    // A page still being published is not held yet.
    let pending = page_of(&ann.account, project.id, "pending", "respending", &clock);
    s.insert_pending(
        &pending,
        &[file("index.html", 1)],
        pending.created_at + Duration::minutes(1),
    )
    .await
    .unwrap();
    // Pages' links are held through their pages: only URL links are a project's links.
    for (n, page) in pages.iter().take(3).enumerate() {
        let link = link_for(page, Some(&format!("res-alias-{n}")), &clock);
        s.insert_link(&link).await.unwrap();
    }
    for n in 0..3 {
        let mut link = url_link(
            &ann.account,
            project.id,
            &format!("https://example.com/{n}"),
            &format!("resl{n:06}"),
            None,
            &clock,
        );
        if n < 2 {
            link.created_at = tie;
        }
        s.insert_link(&link).await.unwrap();
    }
    let mut live_keys = Vec::new();
    for n in 0..4 {
        let (_, mut key) = app_key_in(&ann.account, project.id, &clock);
        if n < 2 {
            key.created_at = tie;
        }
        s.insert_key(&key).await.unwrap();
        if n == 3 {
            s.revoke_key(key.id, clock.now()).await.unwrap();
        } else {
            live_keys.push(key.id.0);
        }
    }

    for n in 0..4 {
        let mut database = database_in(&ann, project.id, &format!("res_db_{n}"), &clock);
        if n < 3 {
            database.created_at = tie;
            database.updated_at = tie;
        }
        ready_database(s.as_ref(), &database, &clock).await;
    }
    // A database being created is not held yet.
    let pending = database_in(&ann, project.id, "res_db_pending", &clock);
    s.insert_database(&pending).await.unwrap();

    let whole = s.resources(project.id).await.unwrap();
    assert_eq!(whole.pages.len(), 5);
    assert_eq!(whole.databases.len(), 4);
    assert_eq!(whole.links.len(), 3);
    assert_eq!(whole.keys.len(), 3);
    for (kind, expected) in [
        (ResourceType::Page, &whole.pages),
        (ResourceType::Link, &whole.links),
        (ResourceType::Database, &whole.databases),
        (ResourceType::Key, &whole.keys),
    ] {
        for limit in [1, 2, 10] {
            let paged = resources_through(s.as_ref(), project.id, kind, limit).await;
            let ids: Vec<Uuid> = paged.iter().map(|e| e.id).collect();
            assert_eq!(ids, in_order(expected), "{kind:?} in pages of {limit}");
            assert_eq!(in_order(&paged), ids, "{kind:?} in list order");
        }
    }
    let mut keys = live_keys.clone();
    keys.sort();
    let mut listed: Vec<Uuid> = whole.keys.iter().map(|k| k.id).collect();
    listed.sort();
    assert_eq!(listed, keys, "the live app keys only");
    assert!(
        resources_through(s.as_ref(), project.id, ResourceType::Object, 2)
            .await
            .is_empty()
    );
    // Another project's list is its own.
    assert!(
        resources_through(s.as_ref(), ann.project.id, ResourceType::Page, 3)
            .await
            .is_empty()
    );
}

pub(super) async fn live_clients_are_listed_by_keyset<S: ClientStore + 'static>(s: Arc<S>) {
    let clock = Arc::new(FixedClock::new());
    let mut clients: Vec<OAuthClient> = (0..5)
        .map(|n| client_of(&format!("C{n}"), &clock))
        .collect();
    let tie = clients[0].created_at;
    for c in clients.iter_mut().take(3) {
        c.created_at = tie;
    }
    for c in &clients {
        s.insert_client(c).await.unwrap();
    }
    assert!(s.delete_client(&clients[1].id, clock.now()).await.unwrap());
    let live = s.live_clients().await.unwrap();
    assert_eq!(live.len(), 4);
    for limit in [1, 2, 3, 5] {
        let mut paged: Vec<OAuthClient> = Vec::new();
        let mut after: Option<ClientKey> = None;
        loop {
            let chunk = s.live_clients_after(after.as_ref(), limit).await.unwrap();
            assert!(chunk.len() <= limit as usize);
            let Some(last) = chunk.last() else { break };
            after = Some(ClientKey::of(last));
            paged.extend(chunk);
        }
        assert_eq!(paged, live, "clients in pages of {limit}");
    }
}
