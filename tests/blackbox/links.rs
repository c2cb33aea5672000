//! The link service over HTTP on both databases: URL links created, listed, changed and
//! deleted through `/api/link/v1` with every refusal's code, and followed at `/s/{code}`
//! under each policy (budgets are in `link_budgets.rs`).

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{Backend, Server, TestDb, eventually, on_both_backends};

on_both_backends!(
    url_links_are_created_listed_changed_and_deleted,
    every_url_rule_refuses_with_its_own_code,
    links_are_followed_under_their_policies,
);

pub(crate) const LINKS: &str = "/api/link/v1/links";

pub(crate) fn no_redirects() -> reqwest::Client {
    crate::harness::client()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

pub(crate) async fn create(s: &Server, key: &str, body: Value) -> Value {
    s.post(LINKS, key, body).await.assert_status(201).clone()
}

/// Status and `Location` of a GET of `url` with `headers`.
pub(crate) async fn follow(
    url: &str,
    headers: &[(&str, &str)],
) -> (u16, Option<String>, reqwest::header::HeaderMap, String) {
    let mut req = no_redirects().get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let location = headers
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (
        status,
        location,
        headers,
        r.text().await.unwrap_or_default(),
    )
}

async fn url_links_are_created_listed_changed_and_deleted(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let s = db.start();
    let link = create(
        &s,
        &ann.key,
        json!({"url": "https://EXAMPLE.com/Launch?x=1", "title": "Launch notes", "alias": "launch"}),
    )
    .await;
    assert_eq!(link["url"], "https://example.com/Launch?x=1");
    assert_eq!(link["shortUrl"], format!("{}/s/launch", s.pages));
    assert_eq!(link["access"], "public");
    assert_eq!(link["status"], "active");
    assert_eq!(link["redirectStatus"], 302);
    assert_eq!(link["viewCount"], 0);
    assert_eq!(link["project"], ann.project_slug);
    assert!(link.get("password").is_none() && link.get("passwordHash").is_none());
    let id = link["id"].as_str().unwrap().to_owned();
    assert_eq!(
        s.get(&format!("{LINKS}/{id}"), &ann.key)
            .await
            .assert_status(200)["alias"],
        "launch"
    );

    // Followed: a 302 that is never indexed.
    let (status, location, headers, _) = follow(&format!("{}/s/launch", s.pages), &[]).await;
    assert_eq!(status, 302);
    assert_eq!(location.as_deref(), Some("https://example.com/Launch?x=1"));
    assert_eq!(headers["x-robots-tag"], "noindex");
    let public_id = link["public_id"].as_str().unwrap();
    assert_eq!(
        follow(&format!("{}/s/{public_id}", s.pages), &[]).await.0,
        302
    );

    // One namespace with pages: a page's alias is taken for links, and the reverse.
    let page = s
        .post(
            "/api/page/v1/pages",
            &ann.key,
            json!({"title": "Site", "alias": "site-alias", "access": "public",
                   "files": [{"path": "index.html", "content": "hi"}]}),
        )
        .await;
    let page = page.assert_status(201).clone();
    s.post(
        LINKS,
        &ann.key,
        json!({"url": "https://example.com/", "alias": "site-alias"}),
    )
    .await
    .assert_error(409, "alias_conflict");
    s.post(
        "/api/page/v1/pages",
        &ann.key,
        json!({"title": "Other", "alias": "launch", "files": [{"path": "index.html", "content": "hi"}]}),
    )
    .await
    .assert_error(409, "alias_conflict");
    // A page's own link is reached through its page.
    s.get(
        &format!("{LINKS}/{}", page["id"].as_str().unwrap()),
        &ann.key,
    )
    .await
    .assert_error(404, "not_found");

    // Listed by project, status and search.
    let second = create(
        &s,
        &ann.key,
        json!({"url": "https://docs.example.org/guide"}),
    )
    .await;
    let listed = s.get(LINKS, &ann.key).await.assert_status(200).clone();
    let ids: Vec<&str> = listed["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [second["id"].as_str().unwrap(), id.as_str()],
        "newest first, pages' links apart"
    );
    let found = s
        .get(&format!("{LINKS}?q=LAUNCH"), &ann.key)
        .await
        .assert_status(200)
        .clone();
    assert_eq!(found["links"].as_array().unwrap().len(), 1);
    s.get(&format!("{LINKS}?status=gone"), &ann.key)
        .await
        .assert_error(400, "invalid_request");

    // A new URL keeps the code and the counts; null clears.
    eventually("the view is counted", || async {
        s.get(&format!("{LINKS}/{id}"), &ann.key).await.body["viewCount"] == 2
    })
    .await;
    let changed = s
        .patch(
            &format!("{LINKS}/{id}"),
            &ann.key,
            json!({"url": "https://example.net/v2", "title": null}),
        )
        .await
        .assert_status(200)
        .clone();
    assert_eq!(changed["shortUrl"], link["shortUrl"]);
    assert_eq!(changed["viewCount"], 2);
    assert_eq!(changed["title"], Value::Null);
    let (_, location, _, _) = follow(&format!("{}/s/launch", s.pages), &[]).await;
    assert_eq!(location.as_deref(), Some("https://example.net/v2"));
    let stats = s
        .get(&format!("{LINKS}/{id}/stats"), &ann.key)
        .await
        .assert_status(200)
        .clone();
    assert_eq!(stats["total"], 2);
    assert_eq!(stats["days"].as_array().unwrap().len(), 30);

    // Archived: 404 at /s/, listed apart.
    s.patch(
        &format!("{LINKS}/{id}"),
        &ann.key,
        json!({"status": "archived"}),
    )
    .await
    .assert_status(200);
    assert_eq!(follow(&format!("{}/s/launch", s.pages), &[]).await.0, 404);
    let archived = s
        .get(&format!("{LINKS}?status=archived"), &ann.key)
        .await
        .assert_status(200)
        .clone();
    assert_eq!(archived["links"][0]["id"], id.as_str());

    // A key without `link` reaches nothing; another account sees nothing.
    let (page_key, _) = s.mint(&ann.key, &["page"], None).await;
    s.get(LINKS, &page_key)
        .await
        .assert_error(403, "insufficient_scope");
    let bob = db.create_account("bob", &[]);
    s.get(&format!("{LINKS}/{id}"), &bob.key)
        .await
        .assert_error(404, "not_found");
    s.get(&format!("{LINKS}?project={}", ann.project_slug), &bob.key)
        .await
        .assert_error(403, "insufficient_scope");

    // Deleted with its codes.
    let gone = s.delete(&format!("{LINKS}/{id}"), &ann.key, None).await;
    assert_eq!(gone.status, 204);
    s.get(&format!("{LINKS}/{id}"), &ann.key)
        .await
        .assert_error(404, "not_found");
    s.delete(&format!("{LINKS}/{id}"), &ann.key, None)
        .await
        .assert_error(404, "not_found");
    create(
        &s,
        &ann.key,
        json!({"url": "https://example.com/", "alias": "launch"}),
    )
    .await;
}

async fn every_url_rule_refuses_with_its_own_code(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let s = db.start_with(&[(
        "QUIRE_LINK_DENY_HOSTS",
        "evil.test, bad.example, 169.254.169.254",
    )]);
    let long = format!("https://example.com/{}", "a".repeat(8 * 1024));
    let own = format!("{}/s/abcdef", s.pages);
    // The pages listener's own address serves short links whatever the host is called.
    let listener = format!("http://{}/s/abcdef", s.pages_addr);
    let (_, port) = s.pages_addr.rsplit_once(':').unwrap();
    let mapped = format!("http://[::ffff:127.0.0.1]:{port}/s/abcdef");
    for (url, code) in [
        ("ftp://example.com/x", "invalid_url"),
        ("javascript:alert(1)", "invalid_url"),
        ("not a url", "invalid_url"),
        (long.as_str(), "url_too_long"),
        ("https://user:secret@example.com/", "url_credentials"),
        (own.as_str(), "url_loop"),
        (listener.as_str(), "url_loop"),
        (mapped.as_str(), "url_loop"),
        ("https://phish.evil.test/login", "url_denied"),
        ("https://BAD.example/", "url_denied"),
        ("http://[::ffff:169.254.169.254]/latest", "url_denied"),
        ("http://[::ffff:a9fe:a9fe]/", "url_denied"),
    ] {
        let r = s.post(LINKS, &ann.key, json!({"url": url})).await;
        r.assert_error(400, code);
        assert!(
            !r.text.contains("secret"),
            "no credential echoed: {}",
            r.text
        );
        s.post(
            LINKS,
            &ann.key,
            json!({"url": "https://example.com/", "expiredUrl": url}),
        )
        .await
        .assert_error(400, code);
    }
    s.post(
        LINKS,
        &ann.key,
        json!({"url": "https://example.com/", "access": "password"}),
    )
    .await
    .assert_error(400, "password_required");
    s.post(
        LINKS,
        &ann.key,
        json!({"url": "https://example.com/", "redirectStatus": 303}),
    )
    .await
    .assert_error(400, "invalid_request");
    s.post(
        LINKS,
        &ann.key,
        json!({"url": "https://example.com/", "maxViews": 0}),
    )
    .await
    .assert_error(400, "invalid_request");
    s.post(
        LINKS,
        &ann.key,
        json!({"url": "https://example.com/", "alias": "no"}),
    )
    .await
    .assert_error(400, "invalid_request");
    // Nothing was stored by any refusal.
    let listed = s.get(LINKS, &ann.key).await.assert_status(200).clone();
    assert_eq!(listed["links"].as_array().unwrap().len(), 0);
    // An IDN host is stored as punycode.
    let idn = create(&s, &ann.key, json!({"url": "https://bücher.example/"})).await;
    assert_eq!(idn["url"], "https://xn--bcher-kva.example/");
}

async fn links_are_followed_under_their_policies(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let s = db.start();
    let target = "https://example.com/secret-plan";

    // Password: the form, then the unlock cookie.
    create(
        &s,
        &ann.key,
        json!({"url": target, "alias": "pw-link", "access": "password", "password": "open sesame"}),
    )
    .await;
    let url = format!("{}/s/pw-link", s.pages);
    let (status, location, headers, body) = follow(&url, &[("accept", "text/html")]).await;
    assert_eq!((status, location), (401, None));
    assert_eq!(headers["cache-control"], "private, no-store");
    assert!(body.contains("name=\"code\" value=\"pw-link\""), "{body}");
    assert!(!body.contains(target));
    let unlock = |password: &'static str| {
        let origin = s.pages.clone();
        async move {
            no_redirects()
                .post(format!("{origin}/-/unlock"))
                .header("origin", origin.clone())
                .header("content-type", "application/x-www-form-urlencoded")
                .body(format!(
                    "code=pw-link&password={}",
                    password.replace(' ', "+")
                ))
                .send()
                .await
                .unwrap()
        }
    };
    assert_eq!(unlock("wrong guess").await.status(), 401);
    let right = unlock("open sesame").await;
    assert_eq!(right.status(), 303);
    assert_eq!(right.headers()["location"], "/s/pw-link");
    let cookie = right.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let (status, location, _, _) = follow(&url, &[("cookie", &cookie)]).await;
    assert_eq!((status, location.as_deref()), (302, Some(target)));
    // Guesses are throttled as a page's are: a few at once, then 429 with `Retry-After`.
    let mut statuses = Vec::new();
    for _ in 0..12 {
        let r = unlock("another guess").await;
        let status = r.status().as_u16();
        statuses.push(status);
        if status == 429 {
            assert!(r.headers().contains_key("retry-after"), "{statuses:?}");
            break;
        }
        assert_eq!(status, 401, "{statuses:?}");
    }
    assert_eq!(statuses.last(), Some(&429), "{statuses:?}");

    // Private: the sign-in page, or a key of the project with `link`.
    create(
        &s,
        &ann.key,
        json!({"url": target, "alias": "private-link", "access": "private"}),
    )
    .await;
    let url = format!("{}/s/private-link", s.pages);
    let (status, location, _, body) = follow(&url, &[]).await;
    assert_eq!((status, location), (403, None));
    assert!(body.contains("/visit?page="), "{body}");
    let bearer = format!("Bearer {}", ann.key);
    let (status, location, _, _) = follow(&url, &[("authorization", &bearer)]).await;
    assert_eq!((status, location.as_deref()), (302, Some(target)));

    // Expired: 410, or its expiredUrl; a permanent redirect only without any policy.
    let soon = (time::OffsetDateTime::now_utc() + time::Duration::seconds(2))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    create(
        &s,
        &ann.key,
        json!({"url": target, "alias": "brief", "expiresAt": soon, "redirectStatus": 308}),
    )
    .await;
    create(
        &s,
        &ann.key,
        json!({"url": target, "alias": "brief-next", "expiresAt": soon,
        "expiredUrl": "https://example.com/too-late"}),
    )
    .await;
    create(
        &s,
        &ann.key,
        json!({"url": target, "alias": "forever", "redirectStatus": 308}),
    )
    .await;
    assert_eq!(
        follow(&format!("{}/s/brief", s.pages), &[]).await.0,
        307,
        "308 becomes 307 under a policy"
    );
    let (status, _, headers, _) = follow(&format!("{}/s/forever", s.pages), &[]).await;
    assert_eq!(status, 308);
    assert_ne!(headers["cache-control"], "private, no-store");
    // Waits out the real expiry, 2 s away on the server's clock (what is checked).
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(follow(&format!("{}/s/brief", s.pages), &[]).await.0, 410);
    let (status, location, _, _) = follow(&format!("{}/s/brief-next", s.pages), &[]).await;
    assert_eq!(
        (status, location.as_deref()),
        (302, Some("https://example.com/too-late"))
    );
    assert_eq!(
        follow(&format!("{}/s/nope-nope", s.pages), &[]).await.0,
        404
    );
}
