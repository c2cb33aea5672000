//! URL links: stored, listed by project and status, changed and deleted whole; their
//! counts beside the views (bot views, referrer hosts, last viewed) read back by day.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::{Clock, LinkId};
use quire_links::{
    Access, AllowEntry, DayCount, LinkStore, LinkWriteError, RedirectStatus, Target, VisitNotes,
};
use quire_pages::PageStore;
use time::Duration;

use super::support::{link_for, page_of, ready, seed, url_link};
use quire_testkit::fixtures::FixedClock;

pub(super) async fn url_links_are_stored_listed_changed_and_deleted<
    S: AccountStore + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let mut first = url_link(
        &ann.account,
        ann.project.id,
        "https://example.com/a?b=c",
        "UUUUUUUUU1",
        Some("docs"),
        &clock,
    );
    first.policy = quire_links::Policy {
        access: Access::AllowList,
        expires_at: Some(clock.now() + Duration::days(2)),
        max_views: Some(7),
        allow: vec![AllowEntry::Account(bob.account.id)],
    };
    first.expired_url = Some("https://example.com/gone".into());
    first.redirect = RedirectStatus::TemporaryRedirect;
    s.insert_link(&first).await.unwrap();
    assert_eq!(s.link(first.id).await.unwrap(), Some(first.clone()));
    assert_eq!(s.link_by_code("docs").await.unwrap(), Some(first.clone()));
    assert_eq!(
        s.link_by_code("UUUUUUUUU1").await.unwrap(),
        Some(first.clone())
    );

    // One namespace with pages' links.
    let page = page_of(&ann.account, ann.project.id, "site", "UUUUUUUUP1", &clock);
    ready(s.as_ref(), &page).await;
    let page_link = link_for(&page, None, &clock);
    s.insert_link(&page_link).await.unwrap();
    let mut clash = url_link(
        &ann.account,
        ann.project.id,
        "https://example.com/",
        "UUUUUUUUU2",
        Some("UUUUUUUUP1"),
        &clock,
    );
    assert_eq!(
        s.insert_link(&clash).await.unwrap_err(),
        LinkWriteError::CodeTaken
    );
    assert_eq!(s.link(clash.id).await.unwrap(), None, "nothing is stored");
    clash.alias = None;
    clock.advance(Duration::seconds(1));
    clash.created_at = clock.now();
    s.insert_link(&clash).await.unwrap();

    let listed: Vec<LinkId> = s
        .url_links(ann.project.id, false)
        .await
        .unwrap()
        .iter()
        .map(|l| l.id)
        .collect();
    assert_eq!(listed, [clash.id, first.id], "URL links only, newest first");
    assert!(s.url_links(ann.project.id, true).await.unwrap().is_empty());

    // A change keeps the codes, counts and kind; the alias code is replaced.
    s.add_views(&[(first.id, 3)], clock.now().date())
        .await
        .unwrap();
    let mut changed = first.clone();
    changed.target = Target::Url("https://example.org/new".into());
    changed.title = None;
    changed.alias = Some("docs2".into());
    changed.expired_url = None;
    changed.redirect = RedirectStatus::Found;
    changed.archived_at = Some(clock.now());
    changed.updated_at = clock.now();
    s.update_link(&changed).await.unwrap();
    let stored = s.link(first.id).await.unwrap().unwrap();
    assert_eq!(
        stored,
        quire_links::Link {
            view_count: 3,
            ..changed.clone()
        }
    );
    assert_eq!(s.link_by_code("docs").await.unwrap(), None);
    assert_eq!(s.link_by_code("docs2").await.unwrap().unwrap().id, first.id);
    let archived = s.url_links(ann.project.id, true).await.unwrap();
    assert_eq!(archived.len(), 1);
    assert_eq!(archived[0].id, first.id);

    // Deleting takes the codes with it; the page's link stays.
    assert!(s.delete_link(first.id).await.unwrap());
    assert!(!s.delete_link(first.id).await.unwrap());
    assert_eq!(s.link(first.id).await.unwrap(), None);
    assert_eq!(s.link_by_code("docs2").await.unwrap(), None);
    assert_eq!(s.link_by_code("UUUUUUUUU1").await.unwrap(), None);
    assert_eq!(s.link_of_page(page.id).await.unwrap(), Some(page_link));
}

pub(super) async fn link_counts_keep_bots_and_referrers_apart<
    S: AccountStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let link = url_link(
        &ann.account,
        ann.project.id,
        "https://example.com/",
        "CCCCCCCCC1",
        None,
        &clock,
    );
    s.insert_link(&link).await.unwrap();
    let today = clock.now().date();
    let yesterday = today - Duration::days(1);
    s.add_views(&[(link.id, 4)], yesterday).await.unwrap();
    s.add_views(&[(link.id, 2)], today).await.unwrap();
    let note = |bots, referrers: &[(&str, u64)], viewed| VisitNotes {
        link: link.id,
        bot_views: bots,
        referrers: referrers
            .iter()
            .map(|(h, n)| ((*h).to_owned(), *n))
            .collect(),
        viewed,
    };
    s.add_visit_notes(
        &[note(5, &[("news.example", 3), ("mail.example", 1)], false)],
        yesterday,
        clock.now() - Duration::days(1),
    )
    .await
    .unwrap();
    let now = clock.now();
    s.add_visit_notes(
        &[
            note(1, &[("news.example", 1)], true),
            // A deleted link's notes are skipped, not an error.
            VisitNotes {
                link: LinkId::new(),
                bot_views: 9,
                ..VisitNotes::default()
            },
        ],
        today,
        now,
    )
    .await
    .unwrap();
    let stats = s.link_stats(link.id, yesterday, today).await.unwrap();
    assert_eq!(
        stats.days,
        [
            DayCount {
                day: yesterday,
                views: 4,
                bot_views: 5
            },
            DayCount {
                day: today,
                views: 2,
                bot_views: 1
            },
        ]
    );
    assert_eq!(
        stats.referrers,
        [
            ("news.example".to_owned(), 4),
            ("mail.example".to_owned(), 1)
        ]
    );
    let only_today = s.link_stats(link.id, today, today).await.unwrap();
    assert_eq!(only_today.referrers, [("news.example".to_owned(), 1)]);
    let stored = s.link(link.id).await.unwrap().unwrap();
    assert_eq!(stored.view_count, 6, "bot views are never views");
    assert_eq!(stored.last_viewed_at, Some(now));
    // A day with bot views only is no day of views.
    s.add_visit_notes(&[note(2, &[], false)], today + Duration::days(1), now)
        .await
        .unwrap();
    assert_eq!(
        s.daily_views(link.id, yesterday).await.unwrap(),
        [(yesterday, 4), (today, 2)]
    );
}
