//! The dashboard pages that manage what an account owns, over HTTP on both databases: the
//! Keys page (list, an app key shown once that then works on the API, revoke) and the
//! Projects page (create, rename, archive, restore), the Pages page (list, detail with files,
//! access and budget, archive and the pages origin's 404, restore, delete), with their
//! refusals.

use serde_json::json;

use crate::dashboard::{Browser, PASSWORD, element};
use crate::harness::{Backend, TestDb, on_both_backends};

const PROJECTS_API: &str = "/api/platform/v1/projects";
const PAGES_API: &str = "/api/page/v1/pages";

async fn keys_are_listed_created_and_revoked(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    db.create_account("dormant", &["--password", PASSWORD, "--not-activated"]);
    let srv = db.start();
    let mut browser = Browser::new(&srv);
    srv.post(
        "/api/platform/v1/keys",
        &ann.key,
        serde_json::json!({ "name": "unused", "apps": ["page"] }),
    )
    .await
    .assert_status(201);
    let anonymous = browser.get("/account/keys").await;
    assert_eq!(anonymous.status, 303);
    assert!(
        anonymous.headers["location"]
            .to_str()
            .unwrap()
            .starts_with("/login")
    );

    let mut dormant = Browser::new(&srv);
    dormant.sign_in("dormant").await;
    let sent = dormant.get("/account/keys").await;
    assert_eq!(sent.headers["location"], "/account/activate");

    browser.sign_in("ann").await;
    let page = browser.get("/account/keys").await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(
        page.text.contains(&ann.key[..11]),
        "the master key's prefix is listed"
    );
    assert!(!page.text.contains(&ann.key), "never the key itself");

    // An app key without apps is refused by the same rule as the API's.
    let refused = browser
        .post("/account/keys", &[("name", "ci"), ("project", "ann")])
        .await;
    assert_eq!(refused.status, 400);
    assert!(
        element(&refused.text, "error").unwrap().contains("apps"),
        "{}",
        refused.text
    );
    browser.origin = Some("http://evil.example".into());
    browser
        .post("/account/keys", &[("name", "ci"), ("app_page", "on")])
        .await
        .assert_error(403, "invalid origin");
    browser.origin = Some(srv.base.clone());

    let created = browser
        .post(
            "/account/keys",
            &[
                ("name", "ci"),
                ("app_page", "on"),
                ("app_link", "on"),
                ("project", "ann"),
            ],
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.text);
    assert_eq!(created.headers["cache-control"], "no-store");
    let app_key = element(&created.text, "app-key").unwrap();
    assert!(app_key.starts_with("qk_"), "{app_key}");
    srv.get("/api/page/v1/pages", &app_key)
        .await
        .assert_status(200);
    // An app key may not list projects: it is an app key, not a master one.
    srv.get(PROJECTS_API, &app_key)
        .await
        .assert_error(403, "insufficient_scope");

    let listed = browser.get("/account/keys").await;
    let row = listed
        .text
        .split("<tr id=\"key-")
        .find(|row| row.contains("<td>ci</td>"))
        .unwrap();
    let id = row.split('"').next().unwrap().to_owned();
    assert!(listed.text.contains("page,link"), "{}", listed.text);
    // The app key has been used (above), to the minute, in UTC.
    let used = element(&listed.text, &format!("last-used-{id}")).unwrap();
    let today = time::OffsetDateTime::now_utc().date().to_string();
    assert!(used.starts_with(&today) && used.ends_with(" UTC"), "{used}");
    let unused = listed
        .text
        .split("<tr id=\"key-")
        .find(|row| row.contains("<td>unused</td>"))
        .unwrap();
    assert!(unused.contains(">never</td>"), "{unused}");
    let revoked = browser
        .post(&format!("/account/keys/{id}/revoke"), &[])
        .await;
    assert_eq!(revoked.status, 303);
    srv.get("/api/page/v1/pages", &app_key)
        .await
        .assert_error(401, "invalid_api_key");
    let unknown = browser
        .post(
            "/account/keys/00000000-0000-0000-0000-000000000000/revoke",
            &[],
        )
        .await;
    assert_eq!(unknown.status, 404);
}

async fn projects_are_created_renamed_archived_and_restored(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    let srv = db.start();
    let mut browser = Browser::new(&srv);
    browser.sign_in("ann").await;
    let created = browser
        .post(
            "/account/projects",
            &[("name", "Blog"), ("slug", "ann_blog")],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.text);
    let taken = browser
        .post(
            "/account/projects",
            &[("name", "Again"), ("slug", "ann_blog")],
        )
        .await;
    assert_eq!(taken.status, 409);
    assert!(element(&taken.text, "error").unwrap().contains("taken"));
    let bad = browser
        .post(
            "/account/projects",
            &[("name", "Bad"), ("slug", "No Spaces")],
        )
        .await;
    assert_eq!(bad.status, 400);

    let page = browser.get("/account/projects").await;
    let id = page
        .text
        .split("/account/projects/")
        .find(|rest| rest.contains("id=\"rename-ann_blog\""))
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .to_owned();
    let renamed = browser
        .post(
            &format!("/account/projects/{id}/rename"),
            &[("name", "Notebook")],
        )
        .await;
    assert_eq!(renamed.status, 303);
    let archived = browser
        .post(
            &format!("/account/projects/{id}/status"),
            &[("status", "archived")],
        )
        .await;
    assert_eq!(archived.status, 303);
    let page = browser.get("/account/projects").await;
    assert!(page.text.contains("value=\"Notebook\""), "{}", page.text);
    assert_eq!(element(&page.text, "status-ann_blog").unwrap(), "archived");

    // The API sees the same project.
    let listed = srv.get(PROJECTS_API, &ann.key).await;
    let body = listed.assert_status(200).to_string();
    assert!(
        body.contains("Notebook") && body.contains("archived"),
        "{body}"
    );
    let restored = browser
        .post(
            &format!("/account/projects/{id}/status"),
            &[("status", "active")],
        )
        .await;
    assert_eq!(restored.status, 303);
    let nonsense = browser
        .post(
            &format!("/account/projects/{id}/status"),
            &[("status", "gone")],
        )
        .await;
    assert_eq!(nonsense.status, 400);
}

async fn pages_are_listed_changed_archived_and_deleted(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    let srv = db.start();
    let published = srv
        .post(
            PAGES_API,
            &ann.key,
            json!({"title": "Field notes", "files": [
                {"path": "index.html", "content": "<h1>Notes</h1>"},
                {"path": "css/site.css", "content": "h1{color:red}"}
            ]}),
        )
        .await;
    let p = published.assert_status(201).clone();
    let (id, url) = (p["id"].as_str().unwrap(), p["url"].as_str().unwrap());
    let mut browser = Browser::new(&srv);
    browser.sign_in("ann").await;

    let list = browser.get("/account/pages").await;
    assert_eq!(list.status, 200, "{}", list.text);
    assert_eq!(
        element(&list.text, "open-field-notes").unwrap(),
        "Field notes"
    );
    assert!(list.text.contains(url), "{}", list.text);
    assert_eq!(element(&list.text, "views-field-notes").unwrap(), "0");
    // Styles and the one script from this origin only: nothing inline.
    let csp = list.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self';") && csp.contains("style-src 'self';"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert!(!list.text.contains("<style") && !list.text.contains(" style="));
    let at = list.text.find("<script src=\"/assets/copy.").unwrap() + 13;
    let script = &list.text[at..at + list.text[at..].find('"').unwrap()];
    let served = browser.get(script).await;
    assert_eq!(served.status, 200, "{script}");
    assert_eq!(
        served.headers["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert!(served.text.contains("navigator.clipboard"));

    let detail_path = format!("/account/pages/{id}");
    let detail = browser.get(&detail_path).await;
    assert_eq!(detail.status, 200, "{}", detail.text);
    assert!(detail.text.contains("css/site.css"), "the files are listed");
    assert_eq!(
        element(&detail.text, "page-access").unwrap(),
        "Only you (private)"
    );
    assert!(
        detail
            .text
            .contains("<option value=\"allow_list\">People you name (allow list)</option>")
    );

    // Refusals come from the page service, with the API's status.
    let bad = browser
        .post(
            &detail_path,
            &[
                ("action", "settings"),
                ("access", "public"),
                ("max_views", "lots"),
            ],
        )
        .await;
    assert_eq!(bad.status, 400);
    assert!(element(&bad.text, "error").unwrap().contains("max_views"));
    let no_password = browser
        .post(
            &detail_path,
            &[("action", "settings"), ("access", "password")],
        )
        .await;
    assert_eq!(no_password.status, 400, "{}", no_password.text);
    let short_password = browser
        .post(
            &detail_path,
            &[
                ("action", "settings"),
                ("access", "password"),
                ("password", "1234567"),
            ],
        )
        .await;
    assert_eq!(short_password.status, 400, "{}", short_password.text);
    assert!(
        element(&short_password.text, "error")
            .unwrap()
            .contains("at least 8 characters"),
        "{}",
        short_password.text
    );

    let saved = browser
        .post(
            &detail_path,
            &[
                ("action", "settings"),
                ("access", "public"),
                ("max_views", "50"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.text);
    let detail = browser.get(&detail_path).await;
    assert_eq!(
        element(&detail.text, "page-access").unwrap(),
        "Anyone with the link (public)"
    );
    assert_eq!(element(&detail.text, "page-views").unwrap(), "0 of 50");
    let visitor = crate::harness::client().build().unwrap();
    let seen = visitor.get(url).send().await.unwrap();
    assert_eq!(seen.status(), 200);
    // The view reaches the count, and today's bar of the chart (UTC days), at once when the
    // pages origin has seen the budget, else with the next flush (every second).
    let mut detail = browser.get(&detail_path).await;
    for _ in 0..30 {
        if element(&detail.text, "page-views").as_deref() == Some("1 of 50") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        detail = browser.get(&detail_path).await;
    }
    assert_eq!(element(&detail.text, "page-views").unwrap(), "1 of 50");
    assert!(detail.text.contains("data-total=\"1\""), "{}", detail.text);
    let today = time::OffsetDateTime::now_utc().date();
    assert!(
        detail
            .text
            .contains(&format!("data-day=\"{today}\" data-views=\"1\"")),
        "{}",
        detail.text
    );
    assert_eq!(detail.text.matches("<rect class=\"bar\"").count(), 30);

    // Lowering the budget to the views already served asks first, and changes nothing
    // until confirmed.
    let lowered = [
        ("action", "settings"),
        ("access", "public"),
        ("max_views", "1"),
    ];
    let asked = browser.post(&detail_path, &lowered).await;
    assert_eq!(asked.status, 409, "{}", asked.text);
    assert!(
        asked.text.contains("id=\"budget-warning\""),
        "{}",
        asked.text
    );
    assert!(asked.text.contains("name=\"confirm_budget\" value=\"yes\""));
    let detail = browser.get(&detail_path).await;
    assert_eq!(element(&detail.text, "page-views").unwrap(), "1 of 50");
    let mut confirmed = lowered.to_vec();
    confirmed.push(("confirm_budget", "yes"));
    let done = browser.post(&detail_path, &confirmed).await;
    assert_eq!(done.status, 303, "{}", done.text);
    let detail = browser.get(&detail_path).await;
    assert_eq!(element(&detail.text, "page-views").unwrap(), "1 of 1");
    assert_eq!(element(&detail.text, "page-state").unwrap(), "spent");

    // The expiry field is a `datetime-local` read in UTC; RFC 3339 is still taken.
    for (posted, stored) in [
        ("2030-01-31T09:30", "2030-01-31T09:30:00Z"),
        ("2030-02-01T12:00:00+02:00", "2030-02-01T10:00:00Z"),
    ] {
        let r = browser
            .post(
                &detail_path,
                &[
                    ("action", "settings"),
                    ("access", "public"),
                    ("expires_at", posted),
                ],
            )
            .await;
        assert_eq!(r.status, 303, "{}", r.text);
        let detail = browser.get(&detail_path).await;
        assert!(
            detail.text.contains(&format!("datetime=\"{stored}\"")),
            "{posted}: {}",
            detail.text
        );
        assert!(detail.text.contains(&format!(
            "type=\"datetime-local\" id=\"expires_at\" name=\"expires_at\" value=\"{}\"",
            &stored[..16]
        )));
        assert!(
            !detail.text.contains("+00:00:00"),
            "no debug formatting of times"
        );
    }

    let archived = browser.post(&detail_path, &[("action", "archive")]).await;
    assert_eq!(archived.status, 303);
    // The pages origin forgets a changed page within its policy cache's second: a fixed
    // wait just past it, since that bound is what is checked.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(visitor.get(url).send().await.unwrap().status(), 404);
    let archived_list = browser
        .get("/account/pages?project=ann&status=archived")
        .await;
    assert!(element(&archived_list.text, "open-field-notes").is_some());
    assert_eq!(
        browser
            .post(&detail_path, &[("action", "restore")])
            .await
            .status,
        303
    );

    let unconfirmed = browser.post(&detail_path, &[("action", "delete")]).await;
    assert_eq!(unconfirmed.status, 400);
    let deleted = browser
        .post(&detail_path, &[("action", "delete"), ("confirm", "yes")])
        .await;
    assert_eq!(deleted.status, 303);
    srv.get(&format!("{PAGES_API}/{id}"), &ann.key)
        .await
        .assert_error(404, "not_found");
    let gone = browser.get(&detail_path).await;
    assert_eq!(gone.status, 404);
}

async fn a_long_file_list_comes_after_the_settings_fifty_a_page(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    let srv = db.start();
    let mut files = vec![json!({"path": "index.html", "content": "<h1>Atlas</h1>"})];
    files.extend((1..120).map(|i| json!({"path": format!("maps/{i:03}.txt"), "content": "x"})));
    let published = srv
        .post(
            PAGES_API,
            &ann.key,
            json!({"title": "Atlas", "files": files}),
        )
        .await;
    let id = published.assert_status(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut browser = Browser::new(&srv);
    browser.sign_in("ann").await;
    let rows = |html: &str| html.matches("<tr><td class=\"break\">").count();

    let first = browser.get(&format!("/account/pages/{id}")).await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(
        element(&first.text, "files-summary").unwrap(),
        "120 files, page 1 of 3"
    );
    assert_eq!(rows(&first.text), 50);
    assert!(first.text.contains("<code>index.html</code>"));
    assert!(!first.text.contains("<code>maps/050.txt</code>"));
    // The settings come before the files.
    assert!(first.text.find("id=\"save\"").unwrap() < first.text.find("id=\"files\"").unwrap());
    assert!(element(&first.text, "files-next").is_some());
    assert!(element(&first.text, "files-prev").is_none());

    let last = browser.get(&format!("/account/pages/{id}?files=3")).await;
    assert_eq!(rows(&last.text), 20);
    assert!(last.text.contains("<code>maps/119.txt</code>"));
    assert!(element(&last.text, "files-prev").is_some());
    assert!(element(&last.text, "files-next").is_none());
    // Past the end (or nonsense) shows the nearest page.
    let beyond = browser.get(&format!("/account/pages/{id}?files=99")).await;
    assert_eq!(
        element(&beyond.text, "files-summary").unwrap(),
        "120 files, page 3 of 3"
    );
    let nonsense = browser.get(&format!("/account/pages/{id}?files=x")).await;
    assert_eq!(rows(&nonsense.text), 50);
}

on_both_backends!(
    pages_are_listed_changed_archived_and_deleted,
    a_long_file_list_comes_after_the_settings_fifty_a_page,
    keys_are_listed_created_and_revoked,
    projects_are_created_renamed_archived_and_restored,
);
