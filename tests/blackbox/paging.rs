//! Paged lists over HTTP: `limit` and `cursor` on the list routes, `nextCursor` in the
//! answer, each item once while pages are being added, and the refusals of a bad limit or
//! cursor. Without either parameter a list answers as before (the other suites check that).

use std::collections::HashSet;
use std::str::FromStr;

use quire_kernel::{AccountId, PageId, ProjectId};
use quire_pages::{FileEntry, Page, PageStatus, PageStore};
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use crate::harness::{Backend, Server, on_both_backends, setup};

const PAGES: &str = "/api/page/v1/pages";

/// Every item of a list read `limit` at a time through `nextCursor`, and how many reads.
async fn page_through(srv: &Server, key: &str, path: &str, field: &str, limit: u32) -> Vec<Value> {
    let sep = if path.contains('?') { '&' } else { '?' };
    let mut items = Vec::new();
    let mut url = format!("{path}{sep}limit={limit}");
    loop {
        let r = srv.get(&url, key).await;
        let body = r.assert_status(200);
        let page = body[field].as_array().expect("an array").clone();
        assert!(page.len() <= limit as usize, "{} items", page.len());
        items.extend(page);
        match body.get("nextCursor").and_then(Value::as_str) {
            Some(cursor) => url = format!("{path}{sep}limit={limit}&cursor={cursor}"),
            None => return items,
        }
    }
}

fn ids(items: &[Value], field: &str) -> Vec<String> {
    items
        .iter()
        .map(|p| p[field].as_str().expect("an id").to_owned())
        .collect()
}

/// 2,500 pages seeded through the store (publishing them over HTTP would take minutes), read
/// 100 at a time while another client publishes 30 more: every seeded page comes exactly
/// once, and nothing comes twice.
async fn paging_across_2500_pages_gives_each_once_while_pages_are_added(b: Backend) {
    const SEEDED: usize = 2_500;
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let store = db.store();
    let account = AccountId::from_str(&ann.account_id).unwrap();
    let project = ProjectId::from_str(&ann.project_id).unwrap();
    let start = OffsetDateTime::now_utc() - Duration::hours(1);
    let mut seeded = HashSet::new();
    for n in 0..SEEDED {
        // Five pages to a microsecond, as a burst of publishes may make: ties break by id.
        let at = start + Duration::microseconds(i64::try_from(n / 5).unwrap());
        let page = Page {
            id: PageId::new(),
            public_id: format!("P{n:09}"),
            account_id: account,
            project_id: project,
            slug: format!("seeded-{n}"),
            title: format!("Seeded {n}"),
            entrypoint: "index.html".into(),
            status: PageStatus::Active,
            size_bytes: 1,
            file_count: 1,
            created_at: at,
            updated_at: at,
            archived_at: None,
            database: None,
        };
        let file = FileEntry {
            path: "index.html".into(),
            size_bytes: 1,
            content_type: "text/html; charset=utf-8".into(),
            sha256: "0".repeat(64),
        };
        store
            .insert_pending(&page, &[file], at + Duration::hours(2))
            .await
            .unwrap();
        store.mark_ready(page.id).await.unwrap();
        seeded.insert(page.id.to_string());
    }

    let writer = {
        let srv_http = srv.http.clone();
        let base = srv.base.clone();
        let key = ann.key.clone();
        tokio::spawn(async move {
            let mut added = Vec::new();
            for n in 0..30 {
                let r = srv_http
                    .post(format!("{base}{PAGES}"))
                    .bearer_auth(&key)
                    .json(&json!({
                        "title": format!("Added {n}"),
                        "files": [{"path": "index.html", "content": "<p>new</p>"}]
                    }))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 201);
                let body: Value = r.json().await.unwrap();
                added.push(body["id"].as_str().unwrap().to_owned());
            }
            added
        })
    };
    let read = page_through(&srv, &ann.key, PAGES, "pages", 100).await;
    let added: HashSet<String> = writer.await.unwrap().into_iter().collect();

    let read = ids(&read, "id");
    let mut once = HashSet::new();
    for id in &read {
        assert!(once.insert(id.clone()), "page {id} listed twice");
    }
    let missing = seeded.difference(&once).count();
    assert_eq!(missing, 0, "{missing} seeded pages missing");
    assert!(once.difference(&seeded).all(|id| added.contains(id)));
    assert!(read.len() >= SEEDED && read.len() <= SEEDED + 30);

    // Read again once the writer is done: the whole list, paged or not, is every page once,
    // in one order.
    let whole = srv.get(PAGES, &ann.key).await;
    let whole = whole.assert_status(200);
    assert!(whole.get("nextCursor").is_none());
    let whole = ids(whole["pages"].as_array().unwrap(), "id");
    assert_eq!(whole.len(), SEEDED + 30);
    let paged = ids(
        &page_through(&srv, &ann.key, PAGES, "pages", 1000).await,
        "id",
    );
    assert_eq!(paged, whole);
}

/// Files and shared pages page the same way; a cursor without a limit reads 100.
async fn files_and_shared_pages_are_paged(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let files: Vec<Value> = (0..7)
        .map(|n| json!({"path": format!("f{n}.html"), "content": "x"}))
        .collect();
    let r = srv
        .post(
            PAGES,
            &ann.key,
            json!({"title": "Files", "files": files, "entrypoint": "f0.html"}),
        )
        .await;
    let id = r.assert_status(201)["id"].as_str().unwrap().to_owned();
    let path = format!("{PAGES}/{id}/files");
    let paged = page_through(&srv, &ann.key, &path, "files", 3).await;
    let whole = srv.get(&path, &ann.key).await;
    assert_eq!(&Value::Array(paged), &whole.assert_status(200)["files"]);
    assert!(whole.body.get("nextCursor").is_none());
    let first = srv.get(&format!("{path}?limit=3"), &ann.key).await;
    let cursor = first.assert_status(200)["nextCursor"].as_str().unwrap();
    let rest = srv.get(&format!("{path}?cursor={cursor}"), &ann.key).await;
    let rest = rest.assert_status(200);
    assert_eq!(rest["files"].as_array().unwrap().len(), 4);
    assert!(rest.get("nextCursor").is_none());

    // Bob shares three pages with ann; she reads them one at a time, newest first.
    let bob = db.create_account("bob", &[]);
    let mut shared = Vec::new();
    for n in 0..3 {
        let r = srv
            .post(
                PAGES,
                &bob.key,
                json!({
                    "title": format!("For ann {n}"),
                    "access": "allow_list",
                    "allow": ["ann"],
                    "files": [{"path": "index.html", "content": "hi"}]
                }),
            )
            .await;
        shared.push(r.assert_status(201)["id"].as_str().unwrap().to_owned());
    }
    shared.reverse();
    let paged = page_through(&srv, &ann.key, "/api/page/v1/shared", "pages", 1).await;
    assert_eq!(ids(&paged, "pageId"), shared);
    let whole = srv.get("/api/page/v1/shared", &ann.key).await;
    assert_eq!(
        ids(
            whole.assert_status(200)["pages"].as_array().unwrap(),
            "pageId"
        ),
        shared
    );
}

/// A limit outside 1-1000 is 400 `invalid_limit`; a cursor the list did not give (garbage,
/// or another list's) is 400 `invalid_cursor`; either way nothing is listed.
async fn bad_limits_and_cursors_are_refused(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let r = srv
        .post(
            PAGES,
            &ann.key,
            json!({"title": "One", "files": [{"path": "index.html", "content": "x"}]}),
        )
        .await;
    let id = r.assert_status(201)["id"].as_str().unwrap().to_owned();
    for limit in ["0", "1001", "-1", "ten", "2.5", ""] {
        for path in [PAGES, "/api/page/v1/shared", &format!("{PAGES}/{id}/files")] {
            let r = srv.get(&format!("{path}?limit={limit}"), &ann.key).await;
            r.assert_error(400, "invalid_limit");
            assert_eq!(
                r.body["message"], "limit must be a whole number from 1 to 1000",
                "{path}?limit={limit}"
            );
        }
    }
    // A files cursor is a real cursor, of another list.
    let files = srv
        .get(&format!("{PAGES}/{id}/files?limit=1"), &ann.key)
        .await;
    assert_eq!(
        files.assert_status(200)["files"].as_array().unwrap().len(),
        1
    );
    let r = srv
        .post(
            PAGES,
            &ann.key,
            json!({"title": "Two", "files": [
                {"path": "index.html", "content": "x"},
                {"path": "b.html", "content": "y"}
            ]}),
        )
        .await;
    let two = r.assert_status(201)["id"].as_str().unwrap().to_owned();
    let files = srv
        .get(&format!("{PAGES}/{two}/files?limit=1"), &ann.key)
        .await;
    let files_cursor = files.assert_status(200)["nextCursor"]
        .as_str()
        .unwrap()
        .to_owned();
    for cursor in ["nope", "%21%21", "cGFnZXM6eA", files_cursor.as_str()] {
        let r = srv.get(&format!("{PAGES}?cursor={cursor}"), &ann.key).await;
        r.assert_error(400, "invalid_cursor");
        assert_eq!(r.body["message"], "cursor is not a nextCursor of this list");
        assert!(r.body.get("pages").is_none());
    }
    // A good cursor with a bad limit: the limit is refused.
    let pages = srv.get(&format!("{PAGES}?limit=1"), &ann.key).await;
    let cursor = pages.assert_status(200)["nextCursor"].as_str().unwrap();
    let r = srv
        .get(&format!("{PAGES}?limit=0&cursor={cursor}"), &ann.key)
        .await;
    r.assert_error(400, "invalid_limit");
}

/// Projects and keys page the same way, oldest first; a projects cursor is not a keys one.
async fn projects_and_keys_are_paged(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for slug in ["ann_b", "ann_c", "ann_d"] {
        srv.project(&ann.key, slug).await;
    }
    let projects = "/api/platform/v1/projects";
    let whole = srv.get(projects, &ann.key).await;
    let whole = whole.assert_status(200)["projects"].clone();
    assert_eq!(whole.as_array().unwrap().len(), 4);
    assert_eq!(
        Value::Array(page_through(&srv, &ann.key, projects, "projects", 3).await),
        whole
    );
    let keys = "/api/platform/v1/keys";
    for _ in 0..4 {
        srv.mint(&ann.key, &["page"], None).await;
    }
    let whole = srv.get(keys, &ann.key).await;
    let whole = whole.assert_status(200)["keys"].clone();
    assert_eq!(whole.as_array().unwrap().len(), 5);
    assert_eq!(
        Value::Array(page_through(&srv, &ann.key, keys, "keys", 2).await),
        whole
    );
    let first = srv.get(&format!("{projects}?limit=1"), &ann.key).await;
    let cursor = first.assert_status(200)["nextCursor"].as_str().unwrap();
    let r = srv.get(&format!("{keys}?cursor={cursor}"), &ann.key).await;
    r.assert_error(400, "invalid_cursor");
    let r = srv.get(&format!("{projects}?limit=5000"), &ann.key).await;
    r.assert_error(400, "invalid_limit");
}

const KINDS: [&str; 5] = ["pages", "objects", "links", "databases", "keys"];

/// A project's resources read `limit` at a time: each kind's entries in the order the pages
/// gave them, and how many reads it took.
async fn resources_through(srv: &Server, key: &str, path: &str, limit: u32) -> (Value, usize) {
    let mut all = json!({"pages": [], "objects": [], "links": [], "databases": [], "keys": []});
    let mut url = format!("{path}?limit={limit}");
    for reads in 1.. {
        let r = srv.get(&url, key).await;
        let body = r.assert_status(200);
        let mut held = 0;
        for kind in KINDS {
            let page = body["resources"][kind]
                .as_array()
                .expect("every kind")
                .clone();
            held += page.len();
            all[kind].as_array_mut().unwrap().extend(page);
        }
        assert!(held <= limit as usize, "{held} entries");
        match body.get("nextCursor").and_then(Value::as_str) {
            Some(cursor) => {
                assert!(held > 0, "an empty page with a nextCursor");
                url = format!("{path}?limit={limit}&cursor={cursor}");
            }
            None => return (all, reads),
        }
    }
    unreachable!()
}

/// A project's resources page through its kinds, pages then links then keys, each entry
/// once; the whole answer is unchanged without `limit`; a cursor of another list is refused.
async fn project_resources_are_paged(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for n in 0..3 {
        let r = srv
            .post(
                PAGES,
                &ann.key,
                json!({"title": format!("R{n}"), "files": [{"path": "index.html", "content": "x"}]}),
            )
            .await;
        r.assert_status(201);
        srv.mint(&ann.key, &["page"], Some(&ann.project_slug)).await;
    }
    let path = format!("/api/platform/v1/projects/{}/resources", ann.project_id);
    let whole = srv.get(&path, &ann.key).await;
    let whole = whole.assert_status(200).clone();
    assert!(whole.get("nextCursor").is_none(), "{whole}");
    let whole = whole["resources"].clone();
    assert_eq!(whole["pages"].as_array().unwrap().len(), 3, "{whole}");
    assert_eq!(whole["keys"].as_array().unwrap().len(), 3, "{whole}");
    let held: usize = KINDS
        .iter()
        .map(|k| whole[k].as_array().unwrap().len())
        .sum();
    for limit in [1, 2, 1000] {
        let (paged, reads) = resources_through(&srv, &ann.key, &path, limit).await;
        assert_eq!(paged, whole, "in pages of {limit}");
        assert_eq!(
            reads,
            held.div_ceil(limit as usize).max(1),
            "in pages of {limit}"
        );
    }
    // The first page holds the oldest page, under its kind, and every kind's array.
    let first = srv.get(&format!("{path}?limit=1"), &ann.key).await;
    let first = first.assert_status(200).clone();
    assert_eq!(first["resources"]["pages"], json!([whole["pages"][0]]));
    assert_eq!(first["resources"]["keys"], json!([]));
    let cursor = first["nextCursor"].as_str().unwrap();
    srv.get(
        &format!("/api/platform/v1/projects?cursor={cursor}"),
        &ann.key,
    )
    .await
    .assert_error(400, "invalid_cursor");
    let other = foreign_cursor("projects");
    for cursor in [other.as_str(), "nope"] {
        let r = srv.get(&format!("{path}?cursor={cursor}"), &ann.key).await;
        r.assert_error(400, "invalid_cursor");
        assert!(r.body.get("resources").is_none());
    }
    srv.get(&format!("{path}?limit=1001"), &ann.key)
        .await
        .assert_error(400, "invalid_limit");
}

/// A well-formed cursor of the list `list` (base64url of `<list>:<key>`), for a list that
/// gave none because it fits in one page.
fn foreign_cursor(list: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!(
        "{list}:1700000000000000.00000000000000000000000000000001"
    ))
}

/// The OAuth client registry pages oldest first; its cursors are its own.
async fn oauth_clients_are_paged(b: Backend) {
    let Some((db, srv, _ann)) = setup(b).await else {
        return;
    };
    let root = db.create_account("root", &["--platform-admin"]);
    let clients = "/api/platform/v1/oauth-clients";
    for n in 0..5 {
        let body = json!({"name": format!("Client {n}"), "client_type": "public",
            "redirect_uris": ["http://127.0.0.1/cb"]});
        srv.post(clients, &root.key, body).await.assert_status(201);
    }
    let whole = srv.get(clients, &root.key).await;
    let whole = whole.assert_status(200).clone();
    assert!(whole.get("nextCursor").is_none(), "{whole}");
    assert_eq!(whole["clients"].as_array().unwrap().len(), 5);
    for limit in [1, 2, 5] {
        assert_eq!(
            Value::Array(page_through(&srv, &root.key, clients, "clients", limit).await),
            whole["clients"],
            "in pages of {limit}"
        );
    }
    let first = srv.get(&format!("{clients}?limit=2"), &root.key).await;
    let cursor = first.assert_status(200)["nextCursor"].as_str().unwrap();
    srv.get(&format!("/api/platform/v1/keys?cursor={cursor}"), &root.key)
        .await
        .assert_error(400, "invalid_cursor");
    let keys_cursor = foreign_cursor("keys");
    for cursor in [keys_cursor.as_str(), "cGFnZXM6eA"] {
        let r = srv
            .get(&format!("{clients}?cursor={cursor}"), &root.key)
            .await;
        r.assert_error(400, "invalid_cursor");
        assert!(r.body.get("clients").is_none());
    }
    srv.get(&format!("{clients}?limit=0"), &root.key)
        .await
        .assert_error(400, "invalid_limit");
}

on_both_backends!(
    paging_across_2500_pages_gives_each_once_while_pages_are_added,
    projects_and_keys_are_paged,
    files_and_shared_pages_are_paged,
    bad_limits_and_cursors_are_refused,
    project_resources_are_paged,
    oauth_clients_are_paged,
);
