//! Budgeted URL links over HTTP on both databases, on one replica and on two sharing the
//! database: exactly `maxViews` of 500 racing requests; browsers shown the continue page,
//! whose post from the links origin spends the view; previews and `HEAD`s spending nothing
//! and counted apart.

use std::collections::BTreeMap;

use serde_json::json;

use crate::harness::{Backend, TestDb, eventually, on_both_backends};
use crate::links::{LINKS, create, follow, no_redirects};

on_both_backends!(exactly_max_views_of_500_racing_requests_and_previews_spend_nothing);

async fn exactly_max_views_of_500_racing_requests_and_previews_spend_nothing(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let wide = [("QUIRE_MAX_CONNECTIONS_PER_CLIENT", "1000")];
    let (first, second) = (db.start_with(&wide), db.start_with(&wide));
    for (alias, servers) in [
        ("race-one", vec![&first]),
        ("race-two", vec![&first, &second]),
    ] {
        create(
            &first,
            &ann.key,
            json!({"url": "https://example.com/", "alias": alias, "maxViews": 50}),
        )
        .await;
        let client = no_redirects();
        let requests = (0..500).map(|i| {
            let client = client.clone();
            let url = format!("{}/s/{alias}", servers[i % servers.len()].pages);
            tokio::spawn(async move { client.get(url).send().await.unwrap().status().as_u16() })
        });
        let mut statuses = BTreeMap::new();
        for r in futures_util::future::join_all(requests).await {
            *statuses.entry(r.unwrap()).or_insert(0) += 1;
        }
        assert_eq!(statuses, BTreeMap::from([(302, 50), (410, 450)]), "{alias}");
    }

    // Browsers see the continue page; previews never spend; the post does, once per view.
    let link = create(
        &first,
        &ann.key,
        json!({"url": "https://example.com/once", "alias": "one-time", "maxViews": 1}),
    )
    .await;
    let url = format!("{}/s/one-time", first.pages);
    let browser = [("accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8")];
    for _ in 0..3 {
        let (status, location, _, body) = follow(&url, &browser).await;
        assert_eq!((status, location), (200, None));
        assert!(body.contains("action=\"/s/one-time\""), "{body}");
        assert!(!body.contains("/once"), "the target stays unknown: {body}");
    }
    let previews = [
        "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
        "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
        "Twitterbot/1.0",
        "facebookexternalhit/1.1",
        "WhatsApp/2.23.20.0",
        "TelegramBot (like TwitterBot)",
    ];
    for ua in previews.iter().cycle().take(20) {
        let (status, location, _, _) = follow(&url, &[("user-agent", ua)]).await;
        assert_eq!((status, location), (200, None), "{ua}");
    }
    let head = no_redirects().head(&url).send().await.unwrap();
    assert_eq!(head.status().as_u16(), 200, "a HEAD spends nothing");
    let elsewhere = no_redirects()
        .post(&url)
        .header("origin", "https://attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(
        elsewhere.status().as_u16(),
        403,
        "only its own page spends a view"
    );
    let confirmed = no_redirects()
        .post(&url)
        .header("origin", first.pages.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(confirmed.status().as_u16(), 303);
    assert_eq!(confirmed.headers()["location"], "https://example.com/once");
    let again = no_redirects()
        .post(&url)
        .header("origin", first.pages.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(again.status().as_u16(), 410);
    let id = link["id"].as_str().unwrap();
    eventually("bots are counted apart", || async {
        let stats = first
            .get(&format!("{LINKS}/{id}/stats"), &ann.key)
            .await
            .body;
        stats["total"] == 1 && stats["bots"] == 20
    })
    .await;
}
