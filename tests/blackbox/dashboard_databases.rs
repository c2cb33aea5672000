//! The dashboard's Databases page over HTTP on both metadata databases, with tenant
//! databases on the test PostgreSQL cluster: a database created from the form, listed, its
//! SQL box answering a table or PostgreSQL's refusal with the SQL kept, the data API
//! switched, its keys shown only on the answer to a post (never cached, never on a page a
//! GET fetches), and deleted; the refusals: another site's post, another account's
//! database; and a server with no cluster saying what the operator must set.

use crate::dashboard::{Browser, PASSWORD, element, location};
use crate::databases::{DATABASES, cluster_url};
use crate::harness::{Backend, Server, TestDb, on_both_backends};

on_both_backends!(a_server_without_a_cluster_says_what_to_set_and_offers_no_form);

/// The tests that need the cluster, in a module of their own: each use of the macro makes
/// its `sqlite` and `postgres` modules.
mod on_a_cluster {
    use super::*;

    on_both_backends!(
        #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
        databases_are_made_queried_switched_and_dropped_in_the_dashboard,
        the_databases_page_refuses_other_sites_and_other_accounts,
    );
}

/// A server with the database service on the test cluster, and ann and bob who sign in
/// with a password; ann's master key for the API.
async fn with_cluster(b: Backend) -> (TestDb, Server, String) {
    let db = TestDb::create(b)
        .await
        .expect("PostgreSQL is configured (the test is ignored otherwise)");
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    db.create_account("bob", &["--password", PASSWORD]);
    let url = cluster_url();
    let srv = db.start_with(&[("QUIRE_DATABASES_URL", url.as_str())]);
    (db, srv, ann.key)
}

/// The value of the `<textarea id="sql">`, as the page holds it.
fn sql_box(html: &str) -> String {
    element(html, "sql").unwrap_or_default()
}

async fn a_server_without_a_cluster_says_what_to_set_and_offers_no_form(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    db.create_account("ann", &["--password", PASSWORD]);
    let srv = db.start();
    let mut ann = Browser::new(&srv);
    ann.sign_in("ann").await;

    let page = ann.get("/account/databases").await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(
        page.text
            .contains(r#"<a href="/account/databases" aria-current="page">Databases</a>"#),
        "in the navigation, current: {}",
        page.text
    );
    let said = page.text.split("id=\"unavailable\"").nth(1).unwrap_or("");
    for needed in [
        "no database service",
        "QUIRE_DATABASES_URL",
        "QUIRE_DATABASES=local",
    ] {
        assert!(said.contains(needed), "{needed}: {}", page.text);
    }
    assert!(
        !page.text.contains("action=\"/account/databases\""),
        "no form: {}",
        page.text
    );

    // A post made anyway, and a database's page, say the same with the service's 503.
    let made = ann.post("/account/databases", &[("slug", "shop")]).await;
    assert_eq!(made.status, 503, "{}", made.text);
    assert!(made.text.contains("QUIRE_DATABASES_URL"), "{}", made.text);
    let id = uuid::Uuid::new_v4();
    let detail = ann.get(&format!("/account/databases/{id}")).await;
    assert_eq!(detail.status, 503, "{}", detail.text);
    assert!(element(&detail.text, "unavailable-title").is_some());
}

async fn databases_are_made_queried_switched_and_dropped_in_the_dashboard(b: Backend) {
    let (_db, srv, key) = with_cluster(b).await;
    let mut ann = Browser::new(&srv);
    ann.sign_in("ann").await;

    let empty = ann.get("/account/databases").await;
    assert_eq!(empty.status, 200, "{}", empty.text);
    assert!(element(&empty.text, "empty").is_some(), "{}", empty.text);
    assert!(element(&empty.text, "unavailable").is_none());

    // The service's refusal, on the form again with what was typed.
    let refused = ann
        .post(
            "/account/databases",
            &[("slug", "No Good"), ("name", "Shop"), ("project", "ann")],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(element(&refused.text, "error").unwrap().contains("slug"));
    assert!(
        refused.text.contains(r#"value="No Good""#),
        "{}",
        refused.text
    );

    let made = ann
        .post(
            "/account/databases",
            &[
                ("slug", "dash_shop"),
                ("name", "Shop"),
                ("project", "ann"),
                ("expires_at", "2099-01-01T00:00"),
            ],
        )
        .await;
    let detail_path = location(&made).to_owned();
    assert!(
        detail_path.starts_with("/account/databases/"),
        "{detail_path}"
    );
    let detail = ann.get(&detail_path).await;
    assert_eq!(detail.status, 200, "{}", detail.text);
    assert_eq!(
        element(&detail.text, "database-slug").as_deref(),
        Some("dash_shop")
    );
    assert_eq!(
        element(&detail.text, "database-data-api").as_deref(),
        Some("off")
    );
    assert_eq!(
        element(&detail.text, "database-url"),
        Some(format!("{}/db/dash_shop", srv.base))
    );
    assert!(detail.text.contains("datetime=\"2099-01-01T00:00:00Z\""));
    assert!(
        element(&detail.text, "show-keys").is_none(),
        "no keys before the data API was ever on"
    );

    let list = ann.get("/account/databases").await;
    assert_eq!(
        element(&list.text, "open-dash_shop").as_deref(),
        Some("Shop")
    );
    assert!(
        list.text
            .contains("<span class=\"badge private\">off</span>")
    );
    let size = element(&list.text, "size-dash_shop").unwrap();
    assert!(size.ends_with("MiB") || size.ends_with("KiB"), "{size}");

    // The SQL box: the last statement's result as a table, with its count.
    let script = "create table t(a int); insert into t values (1),(2); select * from t";
    let ran = ann
        .post(&detail_path, &[("action", "sql"), ("sql", script)])
        .await;
    assert_eq!(ran.status, 200, "{}", ran.text);
    assert_eq!(element(&ran.text, "row-count").as_deref(), Some("2 rows."));
    let table = ran.text.split("id=\"result-table\"").nth(1).unwrap();
    let table = &table[..table.find("</table>").unwrap()];
    assert!(table.contains("<th scope=\"col\">a</th>"), "{table}");
    assert!(
        table.contains("<td>1</td>") && table.contains("<td>2</td>"),
        "{table}"
    );
    assert_eq!(sql_box(&ran.text), script, "the SQL stays in the box");
    let touched = ann
        .post(
            &detail_path,
            &[("action", "sql"), ("sql", "delete from t where a = 1")],
        )
        .await;
    assert_eq!(
        element(&touched.text, "row-count").as_deref(),
        Some("Done: 1 row affected.")
    );

    // PostgreSQL's refusal, with its SQLSTATE and position, and the SQL kept to fix.
    let bad = ann
        .post(
            &detail_path,
            &[("action", "sql"), ("sql", "select * from nope")],
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert_eq!(element(&bad.text, "sqlstate").as_deref(), Some("42P01"));
    assert!(
        element(&bad.text, "sql-message")
            .unwrap()
            .contains("does not exist"),
        "{}",
        bad.text
    );
    assert_eq!(element(&bad.text, "sql-position").as_deref(), Some("15"));
    assert_eq!(sql_box(&bad.text), "select * from nope");
    assert!(element(&bad.text, "result").is_none());

    // The data API's switch.
    let on = ann.post(&detail_path, &[("action", "data_api_on")]).await;
    assert_eq!(location(&on), detail_path);
    let detail = ann.get(&detail_path).await;
    assert_eq!(
        element(&detail.text, "database-data-api").as_deref(),
        Some("on")
    );
    assert!(element(&detail.text, "show-keys").is_some());

    // The keys: on the answer to the post only, never cached, never on the page's GET.
    let id = detail_path.rsplit('/').next().unwrap();
    let secret = srv.get(&format!("{DATABASES}/{id}/secret"), &key).await;
    let secret = secret.assert_status(200).clone();
    let anon = secret["anonKey"].as_str().unwrap();
    let service = secret["serviceRoleKey"].as_str().unwrap();
    assert!(!detail.text.contains(anon) && !detail.text.contains(service));
    let shown = ann.post(&detail_path, &[("action", "keys")]).await;
    assert_eq!(shown.status, 200, "{}", shown.text);
    assert_eq!(shown.headers["cache-control"], "no-store");
    assert_eq!(element(&shown.text, "anon-key").as_deref(), Some(anon));
    assert_eq!(
        element(&shown.text, "service-role-key").as_deref(),
        Some(service)
    );
    let keys = shown.text.split("id=\"keys\"").nth(1).unwrap();
    assert!(
        keys.contains("bypass row-level security") && keys.contains("never put them in a page"),
        "{keys}"
    );
    let line = format!(
        "create_client(&#34;{}/db/dash_shop&#34;, &#34;{anon}&#34;)",
        srv.base
    );
    assert!(shown.text.contains(&line), "{}", shown.text);
    let again = ann.get(&detail_path).await;
    assert!(!again.text.contains(anon), "a GET never shows a key");

    let off = ann.post(&detail_path, &[("action", "data_api_off")]).await;
    assert_eq!(location(&off), detail_path);
    let detail = ann.get(&detail_path).await;
    assert_eq!(
        element(&detail.text, "database-data-api").as_deref(),
        Some("off")
    );

    // Delete: only once confirmed.
    let unconfirmed = ann.post(&detail_path, &[("action", "delete")]).await;
    assert_eq!(unconfirmed.status, 400, "{}", unconfirmed.text);
    assert!(
        element(&unconfirmed.text, "error")
            .unwrap()
            .contains("delete for good")
    );
    let gone = ann
        .post(&detail_path, &[("action", "delete"), ("confirm", "yes")])
        .await;
    assert_eq!(location(&gone), "/account/databases?project=ann");
    assert_eq!(ann.get(&detail_path).await.status, 404);
    let list = ann.get("/account/databases").await;
    assert!(element(&list.text, "empty").is_some(), "{}", list.text);
}

async fn the_databases_page_refuses_other_sites_and_other_accounts(b: Backend) {
    let (_db, srv, _) = with_cluster(b).await;
    let mut ann = Browser::new(&srv);
    ann.sign_in("ann").await;
    let made = ann
        .post(
            "/account/databases",
            &[("slug", "dash_private"), ("project", "ann")],
        )
        .await;
    let detail_path = location(&made).to_owned();

    // Another site's form posts carry its own Origin: refused before anything runs.
    ann.origin = Some("http://evil.example".into());
    for action in [
        &[("action", "sql"), ("sql", "drop table if exists x")][..],
        &[("action", "keys")][..],
        &[("action", "delete"), ("confirm", "yes")][..],
    ] {
        ann.post(&detail_path, action)
            .await
            .assert_error(403, "invalid origin");
    }
    ann.post("/account/databases", &[("slug", "dash_evil")])
        .await
        .assert_error(403, "invalid origin");
    ann.origin = Some(srv.base.clone());
    assert_eq!(ann.get(&detail_path).await.status, 200);
    let list = ann.get("/account/databases").await;
    assert!(element(&list.text, "open-dash_private").is_some());
    assert!(element(&list.text, "open-dash_evil").is_none());

    // Another account: ann's database does not exist for bob, to read, query or change.
    let mut bob = Browser::new(&srv);
    bob.sign_in("bob").await;
    assert_eq!(bob.get(&detail_path).await.status, 404);
    for action in [
        &[("action", "sql"), ("sql", "select 1")][..],
        &[("action", "data_api_on")][..],
        &[("action", "keys")][..],
        &[("action", "delete"), ("confirm", "yes")][..],
    ] {
        bob.post(&detail_path, action)
            .await
            .assert_error(404, "not_found");
    }
    let theirs = bob.get("/account/databases?project=ann").await;
    assert_eq!(theirs.status, 403, "{}", theirs.text);
    assert!(!theirs.text.contains("dash_private"));
    let own = bob.get("/account/databases").await;
    assert!(element(&own.text, "empty").is_some(), "{}", own.text);
    // Nor can bob create into ann's project.
    let refused = bob
        .post(
            "/account/databases",
            &[("slug", "dash_bob"), ("project", "ann")],
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    assert_eq!(ann.get(&detail_path).await.status, 200);

    let gone = ann
        .post(&detail_path, &[("action", "delete"), ("confirm", "yes")])
        .await;
    assert_eq!(gone.status, 303);
}
