//! Links: one namespace of codes, the policy and allow list as written, views leased within the budget.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::AccountId;
use quire_kernel::Clock;
use quire_kernel::{Email, Handle, LinkId};
use quire_links::LinkStore;
use quire_links::{Access, AllowEntry, LinkWriteError};
use quire_pages::AccountDirectory;
use quire_pages::InsertPageError;
use quire_pages::PageStore;
use time::Duration;

use super::support::{lease, link_for, page_of, seed};
use crate::fixtures::FixedClock;

pub(super) async fn link_codes_share_one_namespace<
    S: AccountStore + AccountDirectory + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
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

pub(super) async fn links_keep_policy_and_allow_lists<
    S: AccountStore + AccountDirectory + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
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

pub(super) async fn views_are_leased_within_the_budget_and_added_in_bulk<
    S: AccountStore + AccountDirectory + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let budgeted = page_of(&ann.account, ann.project.id, "once", "GGGGGGGGG1", &clock);
    let open = page_of(&ann.account, ann.project.id, "open", "GGGGGGGGG2", &clock);
    let mut limited = link_for(&budgeted, None, &clock);
    limited.policy.max_views = Some(3);
    let unlimited = link_for(&open, None, &clock);
    s.insert_link(&limited).await.unwrap();
    s.insert_link(&unlimited).await.unwrap();

    let today = clock.now().date();
    let yesterday = today.previous_day().unwrap();
    // Racing leases never pass the budget together, and settle into the count.
    let leases = (0..10).map(|_| {
        let s = s.clone();
        let id = limited.id;
        tokio::spawn(async move { s.lease_views(id, 1).await.unwrap() })
    });
    let mut granted = 0;
    for l in leases {
        granted += l.await.unwrap();
    }
    assert_eq!(granted, 3);
    assert_eq!(
        s.lease_views(limited.id, 5).await.unwrap(),
        0,
        "nothing left"
    );
    s.settle_lease(limited.id, 2, 1, today).await.unwrap();
    let stored = s.link_of_page(budgeted.id).await.unwrap().unwrap();
    assert_eq!(stored.view_count, 2);
    assert_eq!(
        s.daily_views(limited.id, yesterday).await.unwrap(),
        vec![(today, 2)],
        "returned views count on no day"
    );
    assert_eq!(
        s.lease_views(limited.id, 5).await.unwrap(),
        1,
        "the returned view can be leased again, and no more"
    );
    assert_eq!(
        s.lease_views(unlimited.id, 5).await.unwrap(),
        0,
        "no budget"
    );
    assert_eq!(s.lease_views(LinkId::new(), 5).await.unwrap(), 0, "gone");
    s.settle_lease(LinkId::new(), 1, 0, today).await.unwrap();

    s.add_views(&[(unlimited.id, 41), (LinkId::new(), 5)], yesterday)
        .await
        .unwrap();
    s.add_views(&[(unlimited.id, 1)], today).await.unwrap();
    assert_eq!(
        s.link_of_page(open.id).await.unwrap().unwrap().view_count,
        42
    );
    assert_eq!(
        s.daily_views(unlimited.id, yesterday).await.unwrap(),
        vec![(yesterday, 41), (today, 1)]
    );
    assert_eq!(
        s.daily_views(unlimited.id, today).await.unwrap(),
        vec![(today, 1)],
        "days before `since` are left out"
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

    s.delete_link_of_page(open.id).await.unwrap();
    assert_eq!(
        s.daily_views(unlimited.id, yesterday).await.unwrap(),
        vec![],
        "a deleted link's days go with it"
    );
}
