//! The dashboard's Links page over HTTP on both databases: shorten a URL from the form, see
//! it listed with views against its budget, its detail with the QR code and the counts,
//! change where it leads, archive, restore and delete it, with the service's refusals.

use crate::dashboard::{Browser, PASSWORD, element, location};
use crate::harness::{Backend, TestDb, on_both_backends};

on_both_backends!(links_are_shortened_listed_changed_and_deleted_in_the_dashboard);

async fn links_are_shortened_listed_changed_and_deleted_in_the_dashboard(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    db.create_account("ann", &["--password", PASSWORD]);
    let srv = db.start();
    let mut browser = Browser::new(&srv);
    browser.sign_in("ann").await;

    let empty = browser.get("/account/links").await;
    assert_eq!(empty.status, 200, "{}", empty.text);
    assert!(element(&empty.text, "empty").is_some(), "{}", empty.text);

    let refused = browser
        .post(
            "/account/links",
            &[("url", "ftp://example.com/"), ("access", "public")],
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(
        element(&refused.text, "error").unwrap().contains("http"),
        "{}",
        refused.text
    );

    let made = browser
        .post(
            "/account/links",
            &[
                ("url", "https://example.com/launch"),
                ("alias", "dash-link"),
                ("title", "Launch"),
                ("access", "public"),
                ("max_views", "3"),
                ("project", "ann"),
            ],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.text);
    let detail_path = location(&made).to_owned();
    assert!(detail_path.starts_with("/account/links/"), "{detail_path}");
    let detail = browser.get(&detail_path).await;
    assert_eq!(detail.status, 200, "{}", detail.text);
    let short = format!("{}/s/dash-link", srv.pages);
    assert!(element(&detail.text, "short-url").unwrap().contains(&short));
    assert!(
        detail.text.contains("<svg class=\"qr\""),
        "the QR code is drawn"
    );
    assert_eq!(
        element(&detail.text, "link-views").as_deref(),
        Some("0 of 3")
    );

    let list = browser.get("/account/links").await;
    assert!(
        list.text.contains(&short) && list.text.contains("0 of 3"),
        "{}",
        list.text
    );

    let changed = browser
        .post(
            &detail_path,
            &[
                ("action", "settings"),
                ("url", "https://example.org/v2"),
                ("access", "public"),
                ("expires_at", ""),
                ("max_views", ""),
            ],
        )
        .await;
    assert_eq!(changed.status, 303, "{}", changed.text);
    let detail = browser.get(&detail_path).await;
    assert!(
        element(&detail.text, "link-url")
            .unwrap()
            .contains("https://example.org/v2")
    );
    assert_eq!(element(&detail.text, "link-views").as_deref(), Some("0"));

    let archived = browser.post(&detail_path, &[("action", "archive")]).await;
    assert_eq!(archived.status, 303);
    let detail = browser.get(&detail_path).await;
    assert_eq!(
        element(&detail.text, "link-status").as_deref(),
        Some("archived")
    );
    let shelf = browser.get("/account/links?status=archived").await;
    assert!(shelf.text.contains(&short), "{}", shelf.text);
    browser.post(&detail_path, &[("action", "restore")]).await;

    let unconfirmed = browser.post(&detail_path, &[("action", "delete")]).await;
    assert_eq!(unconfirmed.status, 400);
    let gone = browser
        .post(&detail_path, &[("action", "delete"), ("confirm", "yes")])
        .await;
    assert_eq!(gone.status, 303);
    assert_eq!(browser.get(&detail_path).await.status, 404);
}
