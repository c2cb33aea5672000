//! The Databases page in headless Chromium, with tenant databases on the test PostgreSQL
//! cluster: a person signs in, creates a database from the form, runs SQL in the box and
//! sees the last statement's rows as a table and the tables it left open to the anon key,
//! sees a bad statement's SQLSTATE with the SQL still in the box, turns the data API on,
//! shows its keys (the answer to a post), sees the users who signed up and deletes one, turns
//! it off and deletes the database; each page passes the audit (axe-core, 390 px with no
//! sideways scroll: the result table scrolls in its own box, the users become a card each).

use serde_json::{Value, json};

use crate::browser::Driver;
use crate::dashboard::PASSWORD;
use crate::databases::cluster_url;
use crate::harness::{Backend, TestDb};

impl Driver {
    /// Replaces what a field holds with `text` (WebDriver's typing adds to it).
    async fn retype(&self, css: &str, text: &str) {
        let id = self.element(css).await;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/clear"),
            Some(json!({})),
        )
        .await;
        self.fill(css, text).await;
    }

    /// Ticks a checkbox: a click that loads no page.
    async fn tick(&self, css: &str) {
        let id = self.element(css).await;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/click"),
            Some(json!({})),
        )
        .await;
    }
}

#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[cfg_attr(
    all(no_axe, not(no_chromium)),
    ignore = "needs axe-core: npm install --prefix target/axe axe-core"
)]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_makes_queries_and_drops_a_database_in_chromium() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some(db) = TestDb::create(Backend::Sqlite).await else {
        return;
    };
    db.create_account("ann", &["--password", PASSWORD]);
    let cluster = cluster_url();
    let srv = db.start_with(&[("QUIRE_DATABASES_URL", cluster.as_str())]);
    let base = srv.base.clone();
    browser.go(&format!("{base}/login")).await;
    browser.sign_in("ann").await;
    browser.go(&format!("{base}/account/databases")).await;
    assert_eq!(
        browser.text("nav.site-nav a[aria-current=page]").await,
        "Databases"
    );
    assert!(browser.find("#empty").await.is_some());
    browser.audit("databases-empty").await;

    browser.fill("#slug", "browser_shop").await;
    browser.fill("#name", "Corner shop").await;
    browser.click("#create").await;
    assert!(
        browser
            .url()
            .await
            .starts_with(&format!("{base}/account/databases/")),
        "{}",
        browser.url().await
    );
    assert_eq!(browser.text("h1").await, "Corner shop data API off");
    let detail = browser.url().await;

    // The SQL box: several statements, the last one's rows as a table.
    browser
        .fill(
            "#sql",
            "create table t(a int); insert into t values (1),(2); select * from t",
        )
        .await;
    browser.click("#run").await;
    assert_eq!(browser.text("#row-count").await, "2 rows.");
    assert_eq!(
        browser
            .script("return [...document.querySelectorAll('#result-table tbody tr')].map(r => r.textContent)")
            .await,
        json!(["1", "2"])
    );
    assert_eq!(browser.text("#result-table thead").await, "a");
    // A wide result scrolls inside its own box, never the page.
    browser
        .retype(
            "#sql",
            "select repeat('x', 300) as wide, 'a' || 1 as b, null as nothing from t",
        )
        .await;
    browser.click("#run").await;
    assert_eq!(browser.text("#row-count").await, "2 rows.");
    browser.audit("database-sql-wide").await;
    // What a person would run (the docs' screenshots are of this answer).
    browser
        .retype(
            "#sql",
            "create table items (id serial primary key, name text not null, price numeric, in_stock boolean);\n\
             insert into items (name, price, in_stock) values ('Tea', 2.50, true), ('Cake', 3.20, false), ('Scone', null, true);\n\
             select * from items order by id",
        )
        .await;
    browser.click("#run").await;
    assert_eq!(browser.text("#row-count").await, "3 rows.");
    assert_eq!(
        browser.text("#result-table tbody tr:nth-child(3)").await,
        "3 Scone NULL true"
    );
    browser.audit("database-sql").await;
    // The new table is open to the anon key: the page says which, above the SQL box.
    let open = browser.text("#open-tables-list").await;
    assert_eq!(
        open,
        "items (table): select, insert, update, delete\nt (table): select, insert, update, delete"
    );
    browser
        .script("document.getElementById('open-tables').scrollIntoView()")
        .await;
    browser.audit("database-open-tables").await;

    // A bad statement: PostgreSQL's words and SQLSTATE, and the SQL still there to fix.
    browser.retype("#sql", "select * from nope").await;
    browser.click("#run").await;
    assert_eq!(browser.text("#sqlstate").await, "42P01");
    assert!(
        browser
            .text("#sql-error")
            .await
            .contains("relation \"nope\" does not exist")
    );
    assert_eq!(
        browser
            .script("return document.getElementById('sql').value")
            .await,
        "select * from nope"
    );
    assert!(browser.find("#result").await.is_none());
    browser.audit("database-sql-error").await;

    // The data API: on, its keys on the answer to the post, off.
    browser.click("#data-api-on").await;
    assert_eq!(browser.text("#database-data-api").await, "on");
    assert!(browser.find("#anon-key").await.is_none());
    browser.click("#show-keys").await;
    let anon = browser.text("#anon-key").await;
    assert_eq!(anon.split('.').count(), 3, "{anon}");
    assert!(
        browser
            .text("#keys-warning")
            .await
            .contains("bypass row-level security")
    );
    assert!(browser.text("#create-client").await.contains(&format!(
        "create_client(\"{base}/db/browser_shop\", \"{anon}\")"
    )));
    browser.audit("database-keys").await;
    browser.go(&detail).await;
    assert!(
        browser.find("#anon-key").await.is_none(),
        "a GET shows no key"
    );

    // The users who signed up (one with a long address), each deleted once confirmed.
    let long = "someone.with.a.rather.long.address.indeed@subdomain.example.com";
    for email in [long, "bo@example.com"] {
        let signed_up = srv
            .http
            .post(format!("{base}/db/browser_shop/auth/v1/signup"))
            .header("apikey", anon.as_str())
            .json(&json!({ "email": email, "password": "correct horse" }))
            .send()
            .await
            .unwrap();
        assert_eq!(signed_up.status(), 200);
    }
    browser.go(&detail).await;
    assert_eq!(browser.text("#users-count").await, "2 users.");
    assert_eq!(
        browser
            .script("return [...document.querySelectorAll('#users-table tbody .lead-cell')].map(c => c.textContent)")
            .await,
        json!(["bo@example.com", long])
    );
    // The screenshots show the section, not the top of the page.
    browser
        .script("document.getElementById('users').scrollIntoView()")
        .await;
    browser.audit("database-users").await;
    browser
        .tick("#users-table tbody tr:first-child input[name=confirm]")
        .await;
    browser
        .click("#users-table tbody tr:first-child button")
        .await;
    assert!(browser.text("#users-notice").await.contains("deleted"));
    assert_eq!(browser.text("#users-count").await, "1 user.");
    browser.audit("database-user-deleted").await;
    browser.click("#data-api-off").await;
    assert_eq!(browser.text("#database-data-api").await, "off");

    // Listed with its size, then deleted once confirmed.
    browser.go(&format!("{base}/account/databases")).await;
    assert_eq!(browser.text("#open-browser_shop").await, "Corner shop");
    assert_eq!(browser.text("#data-api-browser_shop").await, "off");
    browser.audit("databases").await;
    browser.go(&detail).await;
    browser.tick("#confirm-delete").await;
    browser.click("#delete").await;
    assert_eq!(
        browser.url().await,
        format!("{base}/account/databases?project=ann")
    );
    assert!(browser.find("#empty").await.is_some());
    assert_eq!(
        browser
            .script("return document.querySelectorAll('#databases tbody tr').length")
            .await,
        Value::from(0)
    );
}
