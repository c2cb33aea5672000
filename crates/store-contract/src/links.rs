//! Links: one namespace of codes, the policy and allow list as written, views leased within the budget.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::AccountId;
use quire_kernel::Clock;
use quire_kernel::PageId;
use quire_kernel::{Email, Handle, LeaseId, LinkId};
use quire_links::LinkStore;
use quire_links::{Access, AllowEntry, LinkWriteError};
use quire_pages::AccountDirectory;
use quire_pages::InsertPageError;
use quire_pages::PageStore;
use time::{Duration, OffsetDateTime};

use super::support::{lease, link_for, page_of, ready, seed};
use quire_testkit::fixtures::FixedClock;

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
    ready(s.as_ref(), &page).await;
    link.policy.allow = vec![
        AllowEntry::Account(bob.account.id),
        AllowEntry::Email(Email::parse("carol@example.com").unwrap()),
    ];
    s.insert_link(&link).await.unwrap();
    let stored = s.link_of_page(page.id).await.unwrap().unwrap();
    assert_eq!(stored.policy, link.policy);
    assert_eq!(stored.password_hash, link.password_hash);

    let shared = listed_shared(s.as_ref(), bob.account.id, None).await;
    assert_eq!(shared, vec![(page.id, first)]);
    let carol = Email::parse("carol@example.com").unwrap();
    assert_eq!(
        listed_shared(s.as_ref(), AccountId::new(), Some(&carol)).await,
        vec![(page.id, first)]
    );
    assert!(
        listed_shared(s.as_ref(), ann.account.id, None)
            .await
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
        listed_shared(s.as_ref(), AccountId::new(), Some(&carol))
            .await
            .is_empty()
    );
    assert_eq!(
        listed_shared(s.as_ref(), bob.account.id, None).await,
        vec![(page.id, first)]
    );
    assert_eq!(
        listed_shared(s.as_ref(), AccountId::new(), Some(&dave)).await,
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
    let until = clock.now() + Duration::minutes(2);
    // Racing leases never pass the budget together, and settle into the count.
    let leases = (0..10).map(|_| {
        let s = s.clone();
        let id = limited.id;
        tokio::spawn(async move {
            let lease = LeaseId::new();
            (
                lease,
                s.lease_views(id, lease, true, 1, until)
                    .await
                    .unwrap()
                    .unwrap(),
            )
        })
    });
    let mut granted = 0;
    let mut holder = None;
    for l in leases {
        let (lease, n) = l.await.unwrap();
        granted += n;
        if n > 0 {
            holder = Some(lease);
        }
    }
    assert_eq!(granted, 3);
    let holder = holder.unwrap();
    assert_eq!(
        s.lease_views(limited.id, holder, false, 5, until)
            .await
            .unwrap(),
        Some(0),
        "nothing left"
    );
    assert!(
        s.settle_lease(limited.id, holder, 1, 0, today, until)
            .await
            .unwrap()
    );
    assert!(
        s.settle_lease(limited.id, holder, 0, 1, today, until)
            .await
            .unwrap()
    );
    let stored = s.link_of_page(budgeted.id).await.unwrap().unwrap();
    assert_eq!(stored.view_count, 1);
    assert_eq!(
        s.daily_views(limited.id, yesterday).await.unwrap(),
        vec![(today, 1)],
        "returned views count on no day"
    );
    assert_eq!(
        s.lease_views(limited.id, holder, false, 5, until)
            .await
            .unwrap(),
        Some(1),
        "the returned view can be leased again, and no more"
    );
    assert_eq!(
        s.lease_views(unlimited.id, LeaseId::new(), true, 5, until)
            .await
            .unwrap(),
        Some(0),
        "no budget"
    );
    assert_eq!(
        s.lease_views(LinkId::new(), LeaseId::new(), true, 5, until)
            .await
            .unwrap(),
        Some(0),
        "gone"
    );
    assert!(
        !s.settle_lease(LinkId::new(), LeaseId::new(), 1, 0, today, until)
            .await
            .unwrap(),
        "a link that is gone has no lease"
    );

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

pub(super) async fn lapsed_view_leases_are_settled_as_served<
    S: AccountStore + AccountDirectory + PageStore + LinkStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let page = page_of(&ann.account, ann.project.id, "lapse", "HHHHHHHHH1", &clock);
    let mut link = link_for(&page, None, &clock);
    link.policy.max_views = Some(300);
    s.insert_link(&link).await.unwrap();
    let now = clock.now();
    let today = now.date();
    let until = now + Duration::minutes(2);
    let after = until + Duration::seconds(1);

    // A holder that died having served 100 of 200 views settled, and a live one that keeps
    // renewing its lease.
    let dead = LeaseId::new();
    let live = LeaseId::new();
    assert_eq!(
        s.lease_views(link.id, dead, true, 200, until)
            .await
            .unwrap(),
        Some(200)
    );
    assert!(
        s.settle_lease(link.id, dead, 100, 0, today, until)
            .await
            .unwrap()
    );
    assert_eq!(
        s.lease_views(link.id, live, true, 100, until)
            .await
            .unwrap(),
        Some(100)
    );
    assert_eq!(
        s.lease_views(link.id, LeaseId::new(), true, 1, until)
            .await
            .unwrap(),
        Some(0),
        "the whole budget is leased"
    );
    assert_eq!(
        s.settle_lapsed_leases(until).await.unwrap(),
        0,
        "not lapsed yet"
    );
    assert!(
        s.settle_lease(link.id, live, 10, 0, today, after + Duration::minutes(2))
            .await
            .unwrap(),
        "renewed past the sweep"
    );

    // The dead holder's 100 unsettled views count as served (it may have served them all),
    // on the sweep's day; the live lease is untouched.
    assert_eq!(s.settle_lapsed_leases(after).await.unwrap(), 100);
    let stored = s.link_of_page(page.id).await.unwrap().unwrap();
    assert_eq!(stored.view_count, 210);
    assert_eq!(
        s.daily_views(link.id, today).await.unwrap(),
        vec![(today, 210)]
    );
    assert_eq!(s.settle_lapsed_leases(after).await.unwrap(), 0, "once");
    assert_eq!(
        s.lease_views(link.id, LeaseId::new(), true, 1, until)
            .await
            .unwrap(),
        Some(0),
        "the budget is never overspent: the live lease holds the rest"
    );

    // The dead holder, if it was only cut off, learns its lease is gone and changes nothing.
    assert_eq!(
        s.lease_views(link.id, dead, false, 1, until).await.unwrap(),
        Some(0)
    );
    assert!(
        !s.settle_lease(link.id, dead, 100, 0, today, until)
            .await
            .unwrap()
    );
    assert_eq!(
        s.link_of_page(page.id).await.unwrap().unwrap().view_count,
        210
    );

    // The live lease lapses in turn (its process died): its 90 views are counted, and the
    // count reaches the budget, which nothing can lease any more.
    let later = after + Duration::minutes(3);
    assert_eq!(s.settle_lapsed_leases(later).await.unwrap(), 90);
    assert_eq!(
        s.link_of_page(page.id).await.unwrap().unwrap().view_count,
        300
    );
    assert_eq!(
        s.lease_views(link.id, live, false, 1, later).await.unwrap(),
        Some(0)
    );
    let fresh = LeaseId::new();
    assert_eq!(
        s.lease_views(link.id, fresh, true, 1, later).await.unwrap(),
        Some(0)
    );

    // A lapsed lease of a link with budget left is refused to its holder.
    let mut roomy = s.link_of_page(page.id).await.unwrap().unwrap();
    roomy.policy.max_views = Some(400);
    s.update_link(&roomy).await.unwrap();
    assert_eq!(
        s.lease_views(link.id, live, false, 1, later).await.unwrap(),
        None,
        "swept: its holder must take a new lease"
    );
    assert_eq!(
        s.lease_views(link.id, fresh, true, 5, later).await.unwrap(),
        Some(5)
    );
}

/// The pages shared with the account or email, with when, as the shared list reads them.
async fn listed_shared<S: PageStore>(
    s: &S,
    account: AccountId,
    email: Option<&Email>,
) -> Vec<(PageId, OffsetDateTime)> {
    let shared = s.shared_pages(account, email, None, 1000).await.unwrap();
    shared.into_iter().map(|(p, at)| (p.id, at)).collect()
}
