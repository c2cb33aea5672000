//! The keyset lists: a project's pages, the pages shared with an account, a page's files, the
//! account's projects and keys, read a page at a time, give every item once in one stable order, ties included, and go on
//! giving each once while pages are being added.

use std::collections::HashSet;
use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::{AccountId, Clock, Email, PageId, ProjectId, TimeKey};
use quire_keys::KeyStore;
use quire_links::{Access, AllowEntry, LinkStore};
use quire_pages::{Page, PageStatus, PageStore};
use quire_projects::ProjectStore;
use time::Duration;

use super::support::{app_key_in, file, lease, link_for, page_of, project_of, ready, seed};
use quire_testkit::fixtures::FixedClock;

/// Every page of the project with the status, read `limit` at a time.
async fn page_through<S: PageStore>(
    s: &S,
    project: ProjectId,
    status: PageStatus,
    limit: u32,
) -> Vec<Page> {
    let mut all = Vec::new();
    let mut after: Option<TimeKey> = None;
    loop {
        let chunk = s
            .project_pages(project, status, after.as_ref(), limit)
            .await
            .unwrap();
        assert!(chunk.len() <= limit as usize);
        let Some(last) = chunk.last() else {
            return all;
        };
        after = Some(TimeKey {
            at: last.created_at,
            id: last.id.0,
        });
        all.extend(chunk);
    }
}

pub(super) async fn pages_are_listed_by_keyset_newest_first_ties_by_id<
    S: AccountStore + PageStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let mut pages: Vec<Page> = Vec::new();
    for n in 0..7 {
        let mut page = page_of(
            &ann.account,
            ann.project.id,
            &format!("p{n}"),
            &format!("LIST{n:06}"),
            &clock,
        );
        // Three pages share one creation time: the id orders them.
        if n == 3 || n == 4 {
            page.created_at = pages[2].created_at;
        }
        ready(s.as_ref(), &page).await;
        pages.push(page);
    }
    let mut archived = page_of(&ann.account, ann.project.id, "old", "LISTOLD001", &clock);
    archived.status = PageStatus::Archived;
    ready(s.as_ref(), &archived).await;

    let mut expected = pages.clone();
    expected.sort_by_key(|p| (std::cmp::Reverse(p.created_at), p.id));
    let whole = s
        .project_pages(ann.project.id, PageStatus::Active, None, 1000)
        .await
        .unwrap();
    assert_eq!(whole, expected, "newest first, ties by id");
    for limit in [1, 2, 3, 7, 8] {
        assert_eq!(
            page_through(s.as_ref(), ann.project.id, PageStatus::Active, limit).await,
            expected,
            "in pages of {limit}"
        );
    }
    assert_eq!(
        page_through(s.as_ref(), ann.project.id, PageStatus::Archived, 1).await,
        vec![archived]
    );
    // A position past the end reads nothing; another project's pages never show.
    let last = expected.last().unwrap();
    let end = TimeKey {
        at: last.created_at,
        id: last.id.0,
    };
    assert!(
        s.project_pages(ann.project.id, PageStatus::Active, Some(&end), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        s.project_pages(ProjectId::new(), PageStatus::Active, None, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

pub(super) async fn shared_pages_and_files_are_listed_by_keyset<
    S: AccountStore + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let bob_email = Email::parse("bob@example.com").unwrap();
    let mut shared = Vec::new();
    for n in 0..5 {
        let page = page_of(
            &ann.account,
            ann.project.id,
            &format!("s{n}"),
            &format!("SHARE{n:05}"),
            &clock,
        );
        ready(s.as_ref(), &page).await;
        let mut link = link_for(&page, None, &clock);
        link.policy.access = Access::AllowList;
        // Page 1 names bob twice (account and email): it is listed once, as of the first.
        link.policy.allow = match n {
            0 | 2 => vec![AllowEntry::Account(bob.account.id)],
            1 => vec![
                AllowEntry::Email(bob_email.clone()),
                AllowEntry::Account(bob.account.id),
            ],
            _ => vec![AllowEntry::Email(bob_email.clone())],
        };
        s.insert_link(&link).await.unwrap();
        shared.push((page, link.created_at));
    }
    // Archived pages and pages not naming bob are left out.
    let mut archived = shared[4].0.clone();
    archived.status = PageStatus::Archived;
    s.update_page(&archived).await.unwrap();
    shared.pop();
    let other = page_of(&ann.account, ann.project.id, "other", "SHAREOTHER", &clock);
    ready(s.as_ref(), &other).await;
    let mut link = link_for(&other, None, &clock);
    link.policy.allow = vec![AllowEntry::Account(ann.account.id)];
    s.insert_link(&link).await.unwrap();

    shared.sort_by_key(|(p, at)| (std::cmp::Reverse(*at), p.id));
    let whole = s
        .shared_pages(bob.account.id, Some(&bob_email), None, 1000)
        .await
        .unwrap();
    assert_eq!(whole, shared);
    let mut paged = Vec::new();
    let mut after: Option<TimeKey> = None;
    loop {
        let chunk = s
            .shared_pages(bob.account.id, Some(&bob_email), after.as_ref(), 1)
            .await
            .unwrap();
        let Some((page, at)) = chunk.last() else {
            break;
        };
        after = Some(TimeKey {
            at: *at,
            id: page.id.0,
        });
        paged.extend(chunk);
    }
    assert_eq!(paged, shared, "one at a time");
    // Without the email only the pages naming the account.
    let by_account: Vec<PageId> = s
        .shared_pages(bob.account.id, None, None, 1000)
        .await
        .unwrap()
        .into_iter()
        .map(|(p, _)| p.id)
        .collect();
    // Newest first, page 3 (named by email only) is the first of the four.
    let named: Vec<PageId> = shared[1..].iter().map(|(p, _)| p.id).collect();
    assert_eq!(by_account, named);
    assert!(
        s.shared_pages(AccountId::new(), None, None, 10)
            .await
            .unwrap()
            .is_empty()
    );

    // Files by path, a page at a time.
    let page = page_of(&ann.account, ann.project.id, "files", "FILES00001", &clock);
    let paths = ["b.css", "a/x.html", "index.html", "a/b.js", "z"];
    let files: Vec<_> = paths.iter().map(|p| file(p, 3)).collect();
    s.insert_pending(&page, &files, lease(&clock))
        .await
        .unwrap();
    s.mark_ready(page.id).await.unwrap();
    let mut sorted: Vec<&str> = paths.to_vec();
    sorted.sort_unstable();
    let mut read = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let chunk = s.files_after(page.id, after.as_deref(), 2).await.unwrap();
        let Some(last) = chunk.last() else { break };
        after = Some(last.path.clone());
        read.extend(chunk.into_iter().map(|f| f.path));
    }
    assert_eq!(read, sorted);
}

/// 2,500 pages read 100 at a time while another task publishes more: every page that was
/// there before the first read comes exactly once, and nothing comes twice.
pub(super) async fn paging_gives_each_page_once_while_pages_are_added<
    S: AccountStore + PageStore + 'static,
>(
    s: Arc<S>,
) {
    const BEFORE: usize = 2_500;
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let mut before = HashSet::new();
    let start = clock.now();
    for n in 0..BEFORE {
        let mut page = page_of(
            &ann.account,
            ann.project.id,
            &format!("p{n}"),
            &format!("B{n:09}"),
            &clock,
        );
        // Many pages of one second, as a burst of publishes makes.
        page.created_at = start + Duration::milliseconds(i64::try_from(n / 7).unwrap());
        ready(s.as_ref(), &page).await;
        before.insert(page.id);
    }
    let writer = {
        let s = s.clone();
        let account = ann.account.clone();
        let project = ann.project.id;
        let clock = clock.clone();
        tokio::spawn(async move {
            let mut added = Vec::new();
            for n in 0..300 {
                let mut page = page_of(
                    &account,
                    project,
                    &format!("new{n}"),
                    &format!("N{n:09}"),
                    &clock,
                );
                // Newer than every listed page, and some exactly at the newest's time.
                page.created_at = start + Duration::seconds(10) + Duration::milliseconds(n / 3);
                ready(s.as_ref(), &page).await;
                added.push(page.id);
                tokio::task::yield_now().await;
            }
            added
        })
    };
    let mut seen = HashSet::new();
    let mut after: Option<TimeKey> = None;
    let mut reads = 0;
    loop {
        let chunk = s
            .project_pages(ann.project.id, PageStatus::Active, after.as_ref(), 100)
            .await
            .unwrap();
        let Some(last) = chunk.last() else { break };
        after = Some(TimeKey {
            at: last.created_at,
            id: last.id.0,
        });
        for page in &chunk {
            assert!(seen.insert(page.id), "page {} listed twice", page.id);
        }
        reads += 1;
        tokio::task::yield_now().await;
    }
    let added: HashSet<PageId> = writer.await.unwrap().into_iter().collect();
    assert!(reads >= BEFORE / 100, "{reads} reads");
    assert!(
        before.is_subset(&seen),
        "{} of the first pages missing",
        before.difference(&seen).count()
    );
    assert!(seen.difference(&before).all(|id| added.contains(id)));
}

/// The account's projects and keys, oldest first (ties by id), read a page at a time.
pub(super) async fn projects_and_keys_are_listed_by_keyset<
    S: AccountStore + ProjectStore + KeyStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let mut tied = project_of(&ann.account, "ann_tied", &clock);
    let later = project_of(&ann.account, "ann_later", &clock);
    tied.created_at = ann.project.created_at;
    for p in [&later, &tied] {
        s.insert_project(p).await.unwrap();
    }
    s.insert_project(&project_of(&bob.account, "bob_two", &clock))
        .await
        .unwrap();
    for _ in 0..4 {
        let (_, key) = app_key_in(&ann.account, ann.project.id, &clock);
        s.insert_key(&key).await.unwrap();
    }
    let all = s.projects_of_account(ann.account.id).await.unwrap();
    assert_eq!(all.len(), 3);
    for limit in [1, 2, 3, 4] {
        let mut paged = Vec::new();
        let mut after: Option<TimeKey> = None;
        loop {
            let chunk = s
                .projects_after(ann.account.id, after.as_ref(), limit)
                .await
                .unwrap();
            let Some(last) = chunk.last() else { break };
            after = Some(TimeKey {
                at: last.created_at,
                id: last.id.0,
            });
            paged.extend(chunk);
        }
        assert_eq!(paged, all, "projects in pages of {limit}");
    }
    let keys = s.keys_of_account(ann.account.id).await.unwrap();
    assert_eq!(keys.len(), 5, "the master key and four app keys");
    let mut paged = Vec::new();
    let mut after: Option<TimeKey> = None;
    loop {
        let chunk = s
            .keys_after(ann.account.id, after.as_ref(), 2)
            .await
            .unwrap();
        let Some(last) = chunk.last() else { break };
        after = Some(TimeKey {
            at: last.created_at,
            id: last.id.0,
        });
        paged.extend(chunk);
    }
    assert_eq!(paged, keys);
}
