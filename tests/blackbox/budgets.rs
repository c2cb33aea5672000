//! View budgets served from leased blocks, over HTTP on both databases, with one and two
//! server processes sharing the database: exactly `maxViews` of 500 racing requests; a
//! small budget fully served across two replicas; a replica killed (SIGKILL) while holding a
//! block never leading to more than `maxViews` views, and its block counted as served once
//! its lease lapses; an idle replica's block coming back.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use crate::harness::{Backend, Server, TestDb, eventually, on_both_backends};
use crate::serving::{publish, reply, settled_view_count, site, visit, visit_with, visitor, with};

on_both_backends!(
    exactly_max_views_of_500_racing_requests_on_one_or_two_replicas,
    a_small_budget_is_fully_served_across_two_replicas,
    a_killed_replica_never_overspends_and_idle_blocks_come_back,
    browsers_spend_a_page_view_from_its_continue_page_and_previews_never,
);

/// Statuses of `n` requests for `path`, all at once, spread over `servers`.
async fn race(servers: &[&Server], path: &str, n: usize) -> BTreeMap<u16, usize> {
    let client = crate::harness::client()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let requests = (0..n).map(|i| {
        let client = client.clone();
        let url = servers[i % servers.len()].page(path);
        tokio::spawn(async move { client.get(url).send().await.unwrap().status().as_u16() })
    });
    let mut statuses = BTreeMap::new();
    for r in futures_util::future::join_all(requests).await {
        *statuses.entry(r.unwrap()).or_insert(0) += 1;
    }
    statuses
}

async fn exactly_max_views_of_500_racing_requests_on_one_or_two_replicas(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    // 500 connections from one address: more than a client's default share of 256.
    let wide = [("QUIRE_MAX_CONNECTIONS_PER_CLIENT", "1000")];
    let (first, second) = (db.start_with(&wide), db.start_with(&wide));
    for (slug, servers) in [("one", vec![&first]), ("two", vec![&first, &second])] {
        let page = publish(&first, &ann.key, with(site(slug), "maxViews", json!(50))).await;
        let statuses = race(&servers, &format!("/ann/{slug}/"), 500).await;
        assert_eq!(
            statuses,
            BTreeMap::from([(200, 50), (410, 450)]),
            "{slug} replica(s)"
        );
        let id = page["id"].as_str().unwrap();
        assert_eq!(settled_view_count(&first, &ann.key, id, 50).await, 50);
    }
}

async fn a_small_budget_is_fully_served_across_two_replicas(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let (first, second) = (db.start(), db.start());
    let page = publish(&first, &ann.key, with(site("ten"), "maxViews", json!(10))).await;
    for i in 0..10 {
        let replica = if i % 2 == 0 { &first } else { &second };
        assert_eq!(visit(replica, "/ann/ten/").await.status, 200, "view {i}");
    }
    assert_eq!(visit(&first, "/ann/ten/").await.status, 410);
    assert_eq!(visit(&second, "/ann/ten/").await.status, 410);
    let id = page["id"].as_str().unwrap();
    assert_eq!(settled_view_count(&first, &ann.key, id, 10).await, 10);
}

async fn a_killed_replica_never_overspends_and_idle_blocks_come_back(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    // Leases that lapse 3 s after their last renewal, and a janitor every second.
    let short = [
        ("QUIRE_VIEW_LEASE_SECS", "3"),
        ("QUIRE_JANITOR_INTERVAL_SECS", "1"),
    ];
    let survivor = db.start_with(&short);
    let page = publish(
        &survivor,
        &ann.key,
        with(site("kill"), "maxViews", json!(100)),
    )
    .await;

    // Thirty views on a replica that is then killed, holding a block: blocks of 1, 2, 4, 8
    // and 16 leased 31.
    let doomed = db.start_with(&short);
    let mut served = 0;
    for _ in 0..30 {
        if visit(&doomed, "/ann/kill/").await.status == 200 {
            served += 1;
        }
    }
    assert_eq!(served, 30);
    drop(doomed); // SIGKILL: no settle, no shutdown
    while visit(&survivor, "/ann/kill/").await.status == 200 {
        served += 1;
    }
    assert!(served <= 100, "{served} views of a budget of 100");
    assert!(
        served >= 84,
        "at most the last block (16) is forfeited: {served}"
    );
    let id = page["id"].as_str().unwrap();
    // Once the dead replica's lease lapses, the janitor counts its block as served: the
    // count reaches the budget, with the views it served and the few it never did.
    let mut counted = 0;
    for _ in 0..10 {
        counted = settled_view_count(&survivor, &ann.key, id, 100).await;
        if counted == 100 {
            break;
        }
    }
    assert_eq!(counted, 100, "{served} served");
    assert_eq!(visit(&survivor, "/ann/kill/").await.status, 410);

    // An idle replica's block goes back: 8 views on one (15 leased), then the other serves
    // the rest, first what was never leased, then, once the idle block is back, those too.
    let page = publish(
        &survivor,
        &ann.key,
        with(site("idle"), "maxViews", json!(40)),
    )
    .await;
    let other = db.start();
    for _ in 0..8 {
        assert_eq!(visit(&other, "/ann/idle/").await.status, 200);
    }
    let mut rest = 0;
    while visit(&survivor, "/ann/idle/").await.status == 200 {
        rest += 1;
    }
    assert!(rest >= 25, "{rest}");
    // Idle for 2 s, returned by the next flush; the survivor's page cache forgets "spent"
    // within its policy cache time. On a slow run the block comes back while the survivor
    // is still serving what was never leased, and it has served those views already.
    if 8 + rest < 40 {
        eventually("the idle block back for the survivor to serve", || async {
            visit(&survivor, "/ann/idle/").await.status == 200
        })
        .await;
        rest += 1;
        while visit(&survivor, "/ann/idle/").await.status == 200 {
            rest += 1;
        }
    }
    assert_eq!(8 + rest, 40, "every view of the budget was served");
    let id = page["id"].as_str().unwrap();
    assert_eq!(settled_view_count(&survivor, &ann.key, id, 40).await, 40);
}

async fn browsers_spend_a_page_view_from_its_continue_page_and_previews_never(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let srv = db.start();
    let page = publish(&srv, &ann.key, with(site("two"), "maxViews", json!(2))).await;
    let browser = [("accept", "text/html,application/xhtml+xml,*/*;q=0.8")];
    for _ in 0..5 {
        let asked = visit_with(&srv, "/ann/two/", &browser).await;
        assert_eq!(asked.status, 200);
        assert!(asked.text.contains("name=\"continue\""), "{}", asked.text);
        assert!(
            !asked.text.contains("id=\"home\""),
            "not the page yet: {}",
            asked.text
        );
    }
    for ua in [
        "Slackbot-LinkExpanding 1.0",
        "WhatsApp/2.23.20.0",
        "Twitterbot/1.0",
    ] {
        let preview = visit_with(&srv, "/ann/two/", &[("user-agent", ua)]).await;
        assert!(preview.text.contains("name=\"continue\""), "{ua}");
    }
    // Only the continue page's own post, from the page's origin, spends a view.
    let url = srv.page("/ann/two/");
    let post = |origin: &str, body: &'static str| {
        visitor()
            .post(&url)
            .header("origin", origin)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
    };
    let elsewhere = reply(
        post("https://attacker.example", "continue=1")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(elsewhere.status, 403);
    let not_a_continue = reply(post(&srv.owner("ann"), "x=1").await.unwrap()).await;
    assert_eq!(not_a_continue.status, 405);
    let spent = reply(post(&srv.owner("ann"), "continue=1").await.unwrap()).await;
    assert_eq!(spent.status, 200);
    assert!(
        spent.text.contains("id=\"home\""),
        "the page itself: {}",
        spent.text
    );
    // A client that does not ask for HTML spends the other at once, and nothing is left.
    assert_eq!(visit(&srv, "/ann/two/").await.status, 200);
    assert_eq!(visit(&srv, "/ann/two/").await.status, 410);
    let id = page["id"].as_str().unwrap();
    assert_eq!(settled_view_count(&srv, &ann.key, id, 2).await, 2);
}
