//! The dashboard's database page shows the data API's settings (read only: they are changed
//! through the API or `quire db settings`), on both metadata databases with tenant databases
//! on the test cluster: PostgREST's defaults on a new database, then what the owner turned on.

use serde_json::json;

use crate::dashboard::{Browser, PASSWORD, element};
use crate::databases::{DATABASES, cluster_url};
use crate::harness::{Backend, TestDb, on_both_backends};

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    the_database_page_shows_its_data_api_settings
);

async fn the_database_page_shows_its_data_api_settings(b: Backend) {
    let db = TestDb::create(b)
        .await
        .expect("PostgreSQL is configured (the test is ignored otherwise)");
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    let url = cluster_url();
    let srv = db.start_with(&[("QUIRE_DATABASES_URL", url.as_str())]);
    let made = srv
        .post(DATABASES, &ann.key, json!({ "slug": "shop" }))
        .await;
    let id = made.assert_status(201)["id"].as_str().unwrap().to_owned();
    let mut browser = Browser::new(&srv);
    browser.sign_in("ann").await;
    let path = format!("/account/databases/{id}");
    let shown = |html: &str| {
        [
            "settings-schemas",
            "settings-max-rows",
            "settings-aggregates",
            "settings-explain",
            "settings-tx-rollback",
        ]
        .map(|id| element(html, id).unwrap_or_default())
    };

    let page = browser.get(&path).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert_eq!(shown(&page.text), ["public", "no cap", "off", "off", "off"]);
    assert!(
        page.text.contains("quire db settings shop"),
        "{}",
        page.text
    );

    srv.patch(
        &format!("{DATABASES}/{id}/data-api"),
        &ann.key,
        json!({
            "exposedSchemas": ["api", "public"],
            "maxRows": 250,
            "aggregates": true,
            "txRollback": true
        }),
    )
    .await
    .assert_status(200);
    let page = browser.get(&path).await;
    assert_eq!(shown(&page.text), ["api, public", "250", "on", "off", "on"]);
}
