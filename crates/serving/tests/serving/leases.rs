//! Budgeted views served from leased blocks, against the in-memory fakes, with replicas as
//! separate serving services over one store: exact under racing demand on one or two
//! replicas, unused blocks coming back, a replica lost while holding a block never
//! overspending and its lease counted as served once it lapses, and a changed budget giving
//! its block back.

use quire_kernel::{PageId, Principal};
use quire_pages::{FileInput, PageOrigins, PageService, PatchRequest, PublishRequest};
use quire_serving::{Answer, Conditions, ServingService, Visit, Visitor};
use quire_testkit::World;

struct Site {
    world: World,
    ann: Principal,
    pages: PageService,
    id: PageId,
}

async fn budgeted(max_views: u64) -> Site {
    let world = World::builder()
        .accounts(&["ann"])
        .origins(&PageOrigins::parse("https://pages.test").unwrap())
        .build()
        .await;
    let ann = world.master("ann");
    let pages = world.services.pages.clone();
    let page = pages
        .publish(
            &ann,
            PublishRequest {
                title: "Once".into(),
                slug: Some("once".into()),
                files: vec![FileInput {
                    path: "index.html".into(),
                    content: Ok("<h1>once</h1>".into()),
                }],
                policy: quire_links::PolicyInput {
                    access: Some("public".into()),
                    max_views: Some(i128::from(max_views)),
                    ..quire_links::PolicyInput::default()
                },
                ..PublishRequest::default()
            },
        )
        .await
        .unwrap();
    Site {
        world,
        ann,
        pages,
        id: page.page.id,
    }
}

async fn view(serving: &ServingService) -> bool {
    match serving
        .visit(Visit {
            owner: None,
            path: "/ann/once/",
            query: "",
            head: false,
            visitor: Visitor::default(),
            conditions: Conditions::default(),
            accepts_gzip: false,
            asker: quire_serving::Asker::default(),
        })
        .await
        .unwrap()
    {
        Answer::File(_) => true,
        Answer::Gone => false,
        other => panic!("{other:?}"),
    }
}

/// Views served out of `demand` racing requests spread over `replicas`.
async fn race(replicas: &[ServingService], demand: usize) -> usize {
    let tasks: Vec<_> = (0..demand)
        .map(|i| {
            let s = replicas[i % replicas.len()].clone();
            tokio::spawn(async move { view(&s).await })
        })
        .collect();
    let mut served = 0;
    for t in tasks {
        if t.await.unwrap() {
            served += 1;
        }
    }
    served
}

impl Site {
    async fn count(&self) -> u64 {
        self.pages
            .get(&self.ann, self.id)
            .await
            .unwrap()
            .link
            .unwrap()
            .view_count
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_hundred_racing_requests_get_exactly_the_budget_on_one_or_two_replicas() {
    let site = budgeted(50).await;
    let one = site.world.services.serving.clone();
    assert_eq!(race(std::slice::from_ref(&one), 500).await, 50);
    one.flush_views().await.unwrap();
    assert_eq!(site.count().await, 50);

    let site = budgeted(50).await;
    let two = [
        site.world.services.serving.clone(),
        site.world.replica().serving,
    ];
    assert_eq!(race(&two, 500).await, 50);
    for s in &two {
        s.flush_views().await.unwrap();
    }
    assert_eq!(site.count().await, 50);
}

#[tokio::test]
async fn a_small_budget_on_two_replicas_is_fully_served_when_demand_equals_it() {
    let site = budgeted(10).await;
    let (a, b) = (
        site.world.services.serving.clone(),
        site.world.replica().serving,
    );
    // Alternating demand: a block either side holds would strand views; near the end of a
    // budget each lease is one view.
    for i in 0..10 {
        let replica = if i % 2 == 0 { &a } else { &b };
        assert!(view(replica).await, "view {i}");
    }
    assert!(!view(&a).await && !view(&b).await);
    a.flush_views().await.unwrap();
    b.flush_views().await.unwrap();
    assert_eq!(site.count().await, 10);
}

#[tokio::test]
async fn unused_views_come_back_at_shutdown_and_a_lost_replica_never_overspends() {
    let site = budgeted(1_000).await;
    let a = site.world.services.serving.clone();
    // Blocks double while demand lasts: 1, 2, 4, 8, 16 = 31 views leased by 5 leases.
    for _ in 0..20 {
        assert!(view(&a).await);
    }
    assert_eq!(a.close_views().await.unwrap(), 20);
    assert_eq!(site.count().await, 20);

    // Another replica can now lease all the rest: nothing is stranded.
    let b = site.world.replica().serving;
    let mut served_b = 0;
    while view(&b).await {
        served_b += 1;
    }
    assert_eq!(served_b, 980);

    // A replica lost while holding a block (no settle, no shutdown) forfeits what it held,
    // and what it served stays within the budget.
    let site = budgeted(100).await;
    let lost = site.world.replica().serving;
    let mut served = 0;
    for _ in 0..10 {
        if view(&lost).await {
            served += 1;
        }
    }
    drop(lost);
    let survivor = site.world.services.serving.clone();
    while view(&survivor).await {
        served += 1;
    }
    assert!(served <= 100, "{served}");
    assert!(served >= 90, "at most one block is forfeited: {served}");
}

/// Moves the world's clock past the lease lifetime.
fn past_the_lease(site: &Site) {
    let ttl = time::Duration::try_from(quire_serving::LEASE_TTL).unwrap();
    site.world.clock.advance(ttl + time::Duration::seconds(1));
}

#[tokio::test]
async fn a_dead_replicas_lease_is_counted_as_served_once_it_lapses() {
    // The whole budget served by a replica that then dies before any flush.
    let site = budgeted(300).await;
    let dead = site.world.replica().serving;
    for _ in 0..300 {
        assert!(view(&dead).await);
    }
    drop(dead);
    let survivor = site.world.services.serving.clone();
    assert!(!view(&survivor).await, "the budget is spent");
    assert_eq!(site.count().await, 0, "nothing settled yet");
    assert_eq!(
        survivor.settle_lapsed_leases().await.unwrap(),
        0,
        "not lapsed"
    );

    past_the_lease(&site);
    assert_eq!(survivor.settle_lapsed_leases().await.unwrap(), 300);
    assert_eq!(site.count().await, 300, "what was served is counted");
    assert!(!view(&survivor).await, "and never served again");
    assert_eq!(survivor.settle_lapsed_leases().await.unwrap(), 0);
}

#[tokio::test]
async fn a_live_replica_whose_lease_lapsed_drops_it_and_never_overspends() {
    let site = budgeted(100).await;
    let cut_off = site.world.replica().serving;
    // Blocks of 1, 2, 4 and 6 (a sixteenth of the budget): ten served, three more held.
    for _ in 0..10 {
        assert!(view(&cut_off).await);
    }
    // It could not renew (no flush) for the lease's lifetime; another replica's janitor
    // settles the lease whole, its unserved views as served too.
    past_the_lease(&site);
    let janitor = site.world.services.serving.clone();
    assert_eq!(janitor.settle_lapsed_leases().await.unwrap(), 13);
    assert_eq!(site.count().await, 13);
    // Its settle finds the lease gone and counts nothing twice.
    cut_off.flush_views().await.unwrap();
    assert_eq!(site.count().await, 13);
    // Both go on serving, and together never pass the budget.
    let mut served = 10;
    loop {
        let a = view(&cut_off).await;
        let b = view(&janitor).await;
        served += usize::from(a) + usize::from(b);
        if !a && !b {
            break;
        }
    }
    assert!(served <= 100, "{served}");
    cut_off.close_views().await.unwrap();
    janitor.close_views().await.unwrap();
    assert!(site.count().await <= 100);
    assert_eq!(
        site.count().await,
        u64::try_from(served).unwrap() + 3,
        "every view served is counted, and the three the lapsed lease never served"
    );
}

#[tokio::test]
async fn a_lowered_budget_gives_the_block_back() {
    let site = budgeted(1_000).await;
    let a = site.world.services.serving.clone();
    // Blocks of 1, 2, 4 and 8: eight served, seven held.
    for _ in 0..8 {
        assert!(view(&a).await);
    }
    a.flush_views().await.unwrap();
    site.pages
        .update(
            &site.ann,
            site.id,
            PatchRequest {
                policy: quire_links::PolicyPatch {
                    max_views: Some(Some(9)),
                    ..quire_links::PolicyPatch::default()
                },
                ..PatchRequest::default()
            },
        )
        .await
        .unwrap();
    let mut more = 0;
    while view(&a).await {
        more += 1;
        assert!(more <= 1, "the old block must not outlive the new budget");
    }
    assert_eq!(
        more, 1,
        "the held views went back, so the ninth can be leased"
    );
    a.flush_views().await.unwrap();
    assert_eq!(site.count().await, 9);
}

#[tokio::test]
async fn a_failed_settle_keeps_what_it_owed_for_the_next() {
    let site = budgeted(100).await;
    let a = site.world.services.serving.clone();
    for _ in 0..5 {
        assert!(view(&a).await);
    }
    site.world
        .store
        .fail(quire_testkit::memory::Op::SettleLease);
    assert!(a.flush_views().await.is_err());
    site.world.store.heal();
    assert_eq!(site.count().await, 0);
    assert_eq!(a.close_views().await.unwrap(), 5);
    assert_eq!(site.count().await, 5);
    // Everything unused went back at close: another replica serves the other 95.
    let b = site.world.replica().serving;
    let mut rest = 0;
    while view(&b).await {
        rest += 1;
    }
    assert_eq!(rest, 95);
}

#[tokio::test]
async fn a_lease_the_store_refuses_serves_nothing_and_counts_nothing() {
    let site = budgeted(3).await;
    let a = site.world.services.serving.clone();
    site.world.store.fail(quire_testkit::memory::Op::LeaseViews);
    let refused = a
        .visit(Visit {
            owner: None,
            path: "/ann/once/",
            query: "",
            head: false,
            visitor: Visitor::default(),
            conditions: Conditions::default(),
            accepts_gzip: false,
            asker: quire_serving::Asker::default(),
        })
        .await;
    assert!(refused.is_err());
    site.world.store.heal();
    for _ in 0..3 {
        assert!(view(&a).await, "the whole budget is still there");
    }
    assert!(!view(&a).await);
    a.flush_views().await.unwrap();
    assert_eq!(site.count().await, 3);
}
