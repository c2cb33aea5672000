//! The dashboard's Databases page over HTTP on both metadata databases, with tenant
//! databases on the test PostgreSQL cluster: a database created from the form, listed, its
//! SQL box answering a table or PostgreSQL's refusal with the SQL kept, a table open to the
//! anon key marked until row-level security closes it, the data API switched, its keys
//! shown only on the answer to a post (never cached, never on a page a GET fetches), and
//! deleted; the database's end users listed with their count and deleted (the deleted one
//! can no longer sign in); the refusals: another site's post, another account's database;
//! and a server with no cluster saying what the operator must set.

use serde_json::{Value, json};

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
        a_databases_users_are_listed_and_deleted_in_the_dashboard,
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
    assert!(
        !detail.text.contains("id=\"open-tables\""),
        "nothing open in a new database"
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
    // The new table is open to the anon key (no row-level security): the page says so.
    let warned = ran.text.split("id=\"open-tables\"").nth(1).unwrap_or("");
    let warned = &warned[..warned.find("</section>").unwrap_or(0)];
    assert!(
        warned.contains(
            "<li id=\"open-table-1\"><code class=\"break\">t</code> \
             <span class=\"small\">(table)</span>: select, insert, update, delete</li>"
        ),
        "{}",
        ran.text
    );
    assert!(
        warned.contains("Row-level security is off on this table"),
        "{warned}"
    );
    assert!(
        ann.get(&detail_path)
            .await
            .text
            .contains("id=\"open-tables\""),
        "on the page itself too"
    );
    let closed = ann
        .post(
            &detail_path,
            &[
                ("action", "sql"),
                ("sql", "alter table t enable row level security"),
            ],
        )
        .await;
    assert!(
        !closed.text.contains("id=\"open-tables\""),
        "{}",
        closed.text
    );
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

/// A GoTrue call to `/db/{slug}/auth/v1/{path}` with the anon key.
async fn auth_call(srv: &Server, slug: &str, path: &str, anon: &str, body: Value) -> (u16, Value) {
    let response = srv
        .http
        .post(format!("{}/db/{slug}/auth/v1/{path}", srv.base))
        .header("apikey", anon)
        .json(&body)
        .send()
        .await
        .expect("the gateway answers");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// The id of the user row whose email cell holds `email`, on the detail page.
fn user_id(html: &str, email: &str) -> String {
    let cell = format!("\">{email}</td>");
    let before = &html[..html
        .find(&cell)
        .unwrap_or_else(|| panic!("{email}: {html}"))];
    let start = before.rfind("id=\"user-email-").unwrap() + "id=\"user-email-".len();
    before[start..].to_owned()
}

async fn a_databases_users_are_listed_and_deleted_in_the_dashboard(b: Backend) {
    let (_db, srv, key) = with_cluster(b).await;
    let mut ann = Browser::new(&srv);
    ann.sign_in("ann").await;
    let made = ann
        .post(
            "/account/databases",
            &[("slug", "dash_users"), ("project", "ann")],
        )
        .await;
    let detail_path = location(&made).to_owned();

    // Off: the section says when users appear, and lists nothing.
    let off = ann.get(&detail_path).await;
    assert_eq!(off.status, 200, "{}", off.text);
    assert!(
        element(&off.text, "users-off")
            .unwrap()
            .contains("once the data API is on"),
        "{}",
        off.text
    );
    assert!(element(&off.text, "users-count").is_none());

    let on = ann.post(&detail_path, &[("action", "data_api_on")]).await;
    assert_eq!(location(&on), detail_path);
    let id = detail_path.rsplit('/').next().unwrap();
    let secret = srv.get(&format!("{DATABASES}/{id}/secret"), &key).await;
    let anon = secret.assert_status(200)["anonKey"]
        .as_str()
        .unwrap()
        .to_owned();
    // The instance starts on the first request.
    crate::harness::eventually("the data API instance runs", || async {
        srv.http
            .get(format!("{}/db/dash_users/auth/v1/health", srv.base))
            .header("apikey", anon.as_str())
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
    })
    .await;
    let empty = ann.get(&detail_path).await;
    assert_eq!(
        element(&empty.text, "users-count").as_deref(),
        Some("No users yet.")
    );
    assert!(element(&empty.text, "users-off").is_none());

    let (cat, dog) = ("cat@example.com", "dog@example.com");
    for email in [cat, dog] {
        let (status, body) = auth_call(
            &srv,
            "dash_users",
            "signup",
            &anon,
            json!({ "email": email, "password": "correct horse" }),
        )
        .await;
        assert_eq!(status, 200, "{body}\n{}", srv.logs());
    }

    let listed = ann.get(&detail_path).await;
    assert_eq!(listed.status, 200, "{}", listed.text);
    assert_eq!(
        element(&listed.text, "users-count").as_deref(),
        Some("2 users.")
    );
    let table = listed.text.split("id=\"users-table\"").nth(1).unwrap();
    let table = &table[..table.find("</table>").unwrap()];
    assert!(table.contains(cat) && table.contains(dog), "{table}");
    assert!(
        table.contains("<time datetime="),
        "when they signed up: {table}"
    );
    let cat_id = user_id(&listed.text, cat);
    let dog_id = user_id(&listed.text, dog);
    assert!(
        element(&listed.text, &format!("delete-user-{cat_id}")).is_some(),
        "each user has a delete button"
    );
    let delete_cat = [
        ("action", "delete_user"),
        ("user", cat_id.as_str()),
        ("confirm", "yes"),
    ];

    // Another site's post is refused before anything runs; another account finds nothing.
    ann.origin = Some("http://evil.example".into());
    ann.post(&detail_path, &delete_cat)
        .await
        .assert_error(403, "invalid origin");
    ann.origin = Some(srv.base.clone());
    let mut bob = Browser::new(&srv);
    bob.sign_in("bob").await;
    bob.post(&detail_path, &delete_cat)
        .await
        .assert_error(404, "not_found");
    let still = ann.get(&detail_path).await;
    assert_eq!(
        element(&still.text, "users-count").as_deref(),
        Some("2 users.")
    );

    // Only once confirmed.
    let unconfirmed = ann
        .post(
            &detail_path,
            &[("action", "delete_user"), ("user", cat_id.as_str())],
        )
        .await;
    assert_eq!(unconfirmed.status, 400, "{}", unconfirmed.text);
    assert!(
        element(&unconfirmed.text, "users-error")
            .unwrap()
            .contains("delete for good")
    );

    let deleted = ann.post(&detail_path, &delete_cat).await;
    assert_eq!(deleted.status, 200, "{}", deleted.text);
    assert!(
        element(&deleted.text, "users-notice")
            .unwrap()
            .contains("deleted"),
        "{}",
        deleted.text
    );
    assert_eq!(
        element(&deleted.text, "users-count").as_deref(),
        Some("1 user.")
    );
    assert!(!deleted.text.contains(cat), "{}", deleted.text);
    assert!(element(&deleted.text, &format!("user-{dog_id}")).is_some());

    // The deleted user can no longer sign in; the other still can.
    let refused = auth_call(
        &srv,
        "dash_users",
        "token?grant_type=password",
        &anon,
        json!({ "email": cat, "password": "correct horse" }),
    )
    .await;
    assert_eq!(refused.0, 400, "{}", refused.1);
    assert_eq!(
        refused.1["error_code"], "invalid_credentials",
        "{}",
        refused.1
    );
    let granted = auth_call(
        &srv,
        "dash_users",
        "token?grant_type=password",
        &anon,
        json!({ "email": dog, "password": "correct horse" }),
    )
    .await;
    assert_eq!(granted.0, 200, "{}", granted.1);

    // A user the owner inserted with SQL, who never signed in.
    let inserted = ann
        .post(
            &detail_path,
            &[
                ("action", "sql"),
                (
                    "sql",
                    "insert into auth.users (id, email, encrypted_password) \
                     values (gen_random_uuid(), 'owl@example.com', 'no password')",
                ),
            ],
        )
        .await;
    assert_eq!(inserted.status, 200, "{}", inserted.text);
    assert_eq!(
        element(&inserted.text, "users-count").as_deref(),
        Some("2 users.")
    );
    let owl_id = user_id(&inserted.text, "owl@example.com");
    let owl_row = inserted
        .text
        .split(&format!("id=\"user-{owl_id}\""))
        .nth(1)
        .unwrap();
    let owl_row = &owl_row[..owl_row.find("</tr>").unwrap()];
    assert!(
        owl_row.contains("<span class=\"muted\">never</span>"),
        "{owl_row}"
    );

    // Deleted already: said in the section.
    let again = ann.post(&detail_path, &delete_cat).await;
    assert_eq!(again.status, 404, "{}", again.text);
    assert!(
        element(&again.text, "users-error")
            .unwrap()
            .contains("does not exist")
    );

    // Off again: the list goes, and so does the delete.
    ann.post(&detail_path, &[("action", "data_api_off")]).await;
    let off = ann.get(&detail_path).await;
    assert!(element(&off.text, "users-off").is_some(), "{}", off.text);
    assert!(!off.text.contains(dog));
}
