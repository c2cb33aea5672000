//! The database quotas per account end to end, on both metadata databases with tenant
//! databases on the test PostgreSQL cluster: past the count a creation is refused `403
//! quota_exceeded`, once the databases hold the bytes' quota `413 storage_quota_exceeded`,
//! each with the figures and nothing made (no record, no database in the cluster); each
//! account has its own, a deleted database frees its place; the figures in the list, the
//! dashboard's Databases page, the admin's account list and the metrics' gauges. Object bytes
//! and the bodies in flight are in `object_quotas.rs`.

use std::time::{SystemTime, UNIX_EPOCH};

use quire_databases::DatabaseRecords;
use serde_json::json;
use tokio_postgres::NoTls;

use crate::dashboard::{Browser, PASSWORD, element};
use crate::databases::{DATABASES, cluster_url, create};
use crate::harness::{Backend, Server, TestDb, on_both_backends};
use crate::metrics::{sample, scrape};
use crate::objects::{OBJECTS, send};

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    database_quotas_refuse_past_them_and_every_view_shows_the_figures
);

fn unix_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// The tenant databases in the cluster whose id was made between `from` and `to` (Unix
/// milliseconds): their names are `q_` and the id, a UUIDv7 whose first 48 bits are its
/// time. Another test's database made in that window would show too; none of this test's.
async fn made_between(from: u64, to: u64) -> Vec<String> {
    let (client, conn) = tokio_postgres::connect(&cluster_url(), NoTls)
        .await
        .expect("connect to the cluster");
    tokio::spawn(conn);
    let rows = client
        .query(
            "SELECT datname FROM pg_database WHERE datname ~ '^q_[0-9a-f]{32}$'",
            &[],
        )
        .await
        .unwrap();
    rows.into_iter()
        .map(|r| r.get::<_, String>(0))
        .filter(|name| {
            u64::from_str_radix(&name[2..14], 16).is_ok_and(|ms| (from..=to).contains(&ms))
        })
        .collect()
}

/// The whole cell of `id` in an HTML table: its text and its badges.
fn cell<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html.find(&format!("id=\"{id}\"")).expect(id);
    let end = html[start..].find("</td>").expect("a cell") + start;
    &html[start..end]
}

/// Creating a database in `project` that the account has no room for: the answer, and
/// the tenant databases the cluster got meanwhile.
async fn refused(
    srv: &Server,
    key: &str,
    slug: &str,
    project: &str,
) -> (crate::harness::Reply, Vec<String>) {
    let before = unix_ms();
    let answer = srv
        .post(DATABASES, key, json!({ "slug": slug, "project": project }))
        .await;
    (answer, made_between(before, unix_ms()).await)
}

async fn database_quotas_refuse_past_them_and_every_view_shows_the_figures(b: Backend) {
    let db = TestDb::create(b)
        .await
        .expect("PostgreSQL is configured (the test is ignored otherwise)");
    db.create_account("root", &["--password", PASSWORD, "--platform-admin"]);
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    let bob = db.create_account("bob", &[]);
    let cluster = cluster_url();
    let srv = db.start_with(&[
        ("QUIRE_DATABASES_URL", cluster.as_str()),
        ("QUIRE_MAX_DATABASES_PER_ACCOUNT", "2"),
        ("QUIRE_METRICS_LISTEN", "127.0.0.1:0"),
    ]);
    let store = db.store();

    let one = create(&srv, &ann.key, json!({ "slug": "one" })).await;
    create(&srv, &ann.key, json!({ "slug": "two" })).await;
    let listed = srv.get(DATABASES, &ann.key).await;
    let quota = &listed.assert_status(200)["quota"];
    assert_eq!(quota["databases"], json!({ "used": 2, "limit": 2 }));
    // An empty database takes some MB in PostgreSQL.
    let held = quota["bytes"]["used"].as_u64().unwrap();
    assert!(held > 2_000_000, "{quota}");
    assert_eq!(quota["bytes"]["limit"], 1u64 << 30);

    // Past the count, in another project of the account too: refused with the figures,
    // and nothing is made.
    let (_, campaign) = srv.project(&ann.key, "campaign").await;
    let (answer, made) = refused(&srv, &ann.key, "three", &campaign).await;
    answer.assert_error(403, "quota_exceeded");
    assert_eq!(answer.body["limit"], "databases");
    assert_eq!(answer.body["used"], 2);
    assert_eq!(answer.body["quota"], 2);
    let message = answer.body["message"].as_str().unwrap();
    assert!(message.contains("2 databases and may have 2"), "{message}");
    assert_eq!(store.database_by_slug("three").await.unwrap(), None);
    assert_eq!(store.live_databases(None).await.unwrap().len(), 2);
    assert_eq!(
        made,
        Vec::<String>::new(),
        "no database reached the cluster"
    );

    // Each account has a quota of its own; a deleted database frees its place.
    create(&srv, &bob.key, json!({ "slug": "bobs" })).await;
    let one_id = one["id"].as_str().unwrap();
    srv.delete(&format!("{DATABASES}/{one_id}"), &ann.key, None)
        .await
        .assert_status(204);
    create(
        &srv,
        &ann.key,
        json!({ "slug": "three", "project": campaign }),
    )
    .await;

    // The Databases page shows the account's figures whatever the project.
    let mut browser = Browser::new(&srv);
    browser.sign_in("ann").await;
    let page = browser.get("/account/databases").await;
    assert_eq!(page.status, 200, "{}", page.text);
    let shown = element(&page.text, "quota").unwrap();
    assert!(
        shown.starts_with("This account has 2 of 2 databases, holding ")
            && shown.ends_with("of 1.0 GiB: near its quota."),
        "{shown}"
    );
    // Ann uses all her places; Bob half of his.
    let text = scrape(&srv).await;
    let near = |quota| sample(&text, "quire_accounts_near_quota", &[("quota", quota)]);
    assert_eq!(near("databases"), Some(1.0), "{text}");
    assert_eq!(near("database_bytes"), Some(0.0));

    // The bytes: on a server that lets each account hold 12 MB, Ann's two databases (about
    // 16 MB) hold that already; Bob's one (8 MB) does not.
    drop(srv);
    let srv = db.start_with(&[
        ("QUIRE_DATABASES_URL", cluster.as_str()),
        ("QUIRE_MAX_DATABASES_PER_ACCOUNT", "3"),
        ("QUIRE_MAX_DATABASE_BYTES_PER_ACCOUNT", "12000000"),
        ("QUIRE_MAX_OBJECT_BYTES_PER_ACCOUNT", "1000"),
        ("QUIRE_METRICS_LISTEN", "127.0.0.1:0"),
    ]);
    let (answer, made) = refused(&srv, &ann.key, "four", "ann").await;
    answer.assert_error(413, "storage_quota_exceeded");
    assert_eq!(answer.body["limit"], "database_bytes");
    assert_eq!(answer.body["quota"], 12_000_000);
    assert!(answer.body["used"].as_u64().unwrap() >= 12_000_000);
    assert_eq!(store.database_by_slug("four").await.unwrap(), None);
    assert_eq!(
        made,
        Vec::<String>::new(),
        "no database reached the cluster"
    );
    send(
        &srv,
        "PUT",
        &format!("{OBJECTS}?filename=notes.bin"),
        &ann.key,
        "application/octet-stream",
        vec![1; 900],
    )
    .await
    .assert_status(201);

    // The admin's account list: every account's figures, the near ones marked.
    let mut admin = Browser::new(&srv);
    admin.sign_in("root").await;
    let list = admin.get("/admin/accounts").await;
    assert_eq!(list.status, 200, "{}", list.text);
    assert_eq!(
        element(&list.text, "databases-ann").as_deref(),
        Some("2 of 3")
    );
    assert!(!cell(&list.text, "databases-ann").contains("near quota"));
    let bytes = element(&list.text, "database-bytes-ann").unwrap();
    assert!(bytes.ends_with(" MiB of 11.4 MiB"), "{bytes}");
    assert!(cell(&list.text, "database-bytes-ann").contains("near quota"));
    assert!(!cell(&list.text, "database-bytes-bob").contains("near quota"));
    assert_eq!(
        element(&list.text, "databases-bob").as_deref(),
        Some("1 of 3")
    );
    assert_eq!(
        element(&list.text, "object-bytes-ann").as_deref(),
        Some("900 B of 1000 B")
    );
    assert!(cell(&list.text, "object-bytes-ann").contains("near quota"));
    assert_eq!(
        element(&list.text, "object-bytes-root").as_deref(),
        Some("0 B of 1000 B")
    );
    assert_eq!(
        element(&list.text, "databases-root").as_deref(),
        Some("0 of 3")
    );

    // The gauges count the accounts near each quota, naming none.
    let text = scrape(&srv).await;
    let near = |quota| sample(&text, "quire_accounts_near_quota", &[("quota", quota)]);
    assert_eq!(near("databases"), Some(0.0), "{text}");
    assert_eq!(near("database_bytes"), Some(1.0), "{text}");
    assert_eq!(near("object_bytes"), Some(1.0), "{text}");
    assert!(!text.contains(&ann.account_id), "no label names an account");

    // What the test made goes from the shared cluster.
    for key in [&ann.key, &bob.key] {
        for project in ["ann", "bob", campaign.as_str()] {
            let listed = srv
                .get(&format!("{DATABASES}?project={project}"), key)
                .await;
            for d in listed.body["databases"].as_array().into_iter().flatten() {
                let id = d["id"].as_str().unwrap();
                srv.delete(&format!("{DATABASES}/{id}"), key, None)
                    .await
                    .assert_status(204);
            }
        }
    }
}
