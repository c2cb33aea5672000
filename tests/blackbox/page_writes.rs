//! Writes to one page that race each other: concurrent add-files hold the page's limits
//! together and leave its counters equal to its files, and add-files racing a delete is a
//! 404, never a 500. Also the rules on new slugs and page passwords, and replacing a page's
//! whole file set (`PUT …/files`): same page, new files, and each refusal.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::harness::{Account, Backend, Server, TestDb, on_both_backends, setup};

const PAGES: &str = "/api/page/v1/pages";

on_both_backends!(
    concurrent_add_files_hold_the_file_limit,
    concurrent_add_files_hold_the_size_limit,
    add_files_racing_a_delete_is_not_found,
    slugs_start_and_end_with_a_letter_or_digit,
    new_page_passwords_have_at_least_8_characters,
    put_files_replaces_the_file_set_and_keeps_the_page,
    put_files_refusals,
);

/// A server with its bundles in a known folder.
async fn start(b: Backend) -> Option<(TestDb, Server, Account, std::path::PathBuf)> {
    let db = TestDb::create(b).await?;
    let ann = db.create_account("ann", &[]);
    let storage = db.dir.path().join("bundles");
    std::fs::create_dir_all(&storage).unwrap();
    let srv = db.start_with(&[(
        "QUIRE_STORAGE_URL",
        &format!("file://{}", storage.display()),
    )]);
    Some((db, srv, ann, storage))
}

async fn publish_one_file(srv: &Server, key: &str) -> String {
    let r = srv
        .post(
            PAGES,
            key,
            json!({"title": "Race", "access": "public",
                   "files": [{"path": "index.html", "content": "<p>1</p>"}]}),
        )
        .await;
    r.assert_status(201)["id"].as_str().unwrap().to_owned()
}

/// Sends every body to the page's add-files at once (released together by a barrier);
/// returns the answers in order.
async fn add_files_at_once(srv: &Arc<Server>, key: &str, id: &str, bodies: Vec<Value>) -> Vec<u16> {
    let barrier = Arc::new(tokio::sync::Barrier::new(bodies.len()));
    let tasks: Vec<_> = bodies
        .into_iter()
        .map(|body| {
            let (srv, barrier) = (srv.clone(), barrier.clone());
            let (key, path) = (key.to_owned(), format!("{PAGES}/{id}/files"));
            let body = body.to_string();
            tokio::spawn(async move {
                barrier.wait().await;
                let r = srv.call("POST", &path, Some(&key), Some(&body)).await;
                assert!(
                    r.status == 200 || r.status == 413,
                    "{} {}",
                    r.status,
                    r.text
                );
                if r.status == 413 {
                    assert_eq!(r.body["error"], "payload_too_large", "{}", r.text);
                    assert!(
                        r.body["limit"] == "files_per_page" || r.body["limit"] == "page_size",
                        "{}",
                        r.text
                    );
                }
                r.status
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    statuses
}

/// The page's counters, its listed files (count, bytes), and the objects its folder holds
/// against the distinct objects its files name.
async fn counters_and_files(
    srv: &Server,
    key: &str,
    id: &str,
    storage: &std::path::Path,
) -> ((u64, u64), (u64, u64)) {
    let page = srv.get(&format!("{PAGES}/{id}"), key).await;
    let page = page.assert_status(200);
    let files = srv.get(&format!("{PAGES}/{id}/files"), key).await;
    let files = files.assert_status(200)["files"]
        .as_array()
        .unwrap()
        .clone();
    let named: HashSet<String> = files
        .iter()
        .map(|f| f["sha256"].as_str().unwrap().to_owned())
        .collect();
    let stored: HashSet<String> = std::fs::read_dir(storage.join("pages").join(id))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(stored, named, "the refused requests' objects are removed");
    (
        (
            page["fileCount"].as_u64().unwrap(),
            page["sizeBytes"].as_u64().unwrap(),
        ),
        (
            files.len() as u64,
            files.iter().map(|f| f["sizeBytes"].as_u64().unwrap()).sum(),
        ),
    )
}

async fn concurrent_add_files_hold_the_file_limit(b: Backend) {
    let Some((_db, srv, ann, storage)) = start(b).await else {
        return;
    };
    let srv = Arc::new(srv);
    let id = publish_one_file(&srv, &ann.key).await;
    // Eight batches of 999 new files into a page of one, under the limit of 1,000 files.
    let bodies = (0..8)
        .map(|t| {
            let files: Vec<Value> = (0..999)
                .map(|n| json!({"path": format!("t{t}/{n:03}.txt"), "content": format!("{t}:{n:03}")}))
                .collect();
            json!({ "files": files })
        })
        .collect();
    let statuses = add_files_at_once(&srv, &ann.key, &id, bodies).await;
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    let (counters, files) = counters_and_files(&srv, &ann.key, &id, &storage).await;
    assert_eq!(files, (1_000, 8 + 999 * 5));
    assert_eq!(counters, files);
}

async fn concurrent_add_files_hold_the_size_limit(b: Backend) {
    let Some((_db, srv, ann, storage)) = start(b).await else {
        return;
    };
    let srv = Arc::new(srv);
    let id = publish_one_file(&srv, &ann.key).await;
    // Eight files of 9 MiB into a page of 8 bytes, under the limit of 50 MiB: five fit.
    let bodies = (0..8u8)
        .map(|t| {
            let content = char::from(b'a' + t).to_string().repeat(9 << 20);
            json!({"files": [{"path": format!("big{t}.txt"), "content": content}]})
        })
        .collect();
    let statuses = add_files_at_once(&srv, &ann.key, &id, bodies).await;
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        5,
        "{statuses:?}"
    );
    let (counters, files) = counters_and_files(&srv, &ann.key, &id, &storage).await;
    assert_eq!(files, (6, 8 + 5 * (9 << 20)));
    assert_eq!(counters, files);
}

async fn add_files_racing_a_delete_is_not_found(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let srv = Arc::new(srv);
    for round in 0..3 {
        let id = publish_one_file(&srv, &ann.key).await;
        let barrier = Arc::new(tokio::sync::Barrier::new(9));
        let tasks: Vec<_> = (0..9)
            .map(|t| {
                let (srv, barrier, key, id) =
                    (srv.clone(), barrier.clone(), ann.key.clone(), id.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    if t == 4 {
                        let r = srv.delete(&format!("{PAGES}/{id}"), &key, None).await;
                        assert_eq!(r.status, 204, "{}", r.text);
                        return;
                    }
                    let files: Vec<Value> = (0..50)
                        .map(|n| json!({"path": format!("r{round}/t{t}/{n}.txt"), "content": format!("{t}:{n}")}))
                        .collect();
                    let r = srv
                        .post(&format!("{PAGES}/{id}/files"), &key, json!({ "files": files }))
                        .await;
                    if r.status != 200 {
                        r.assert_error(404, "not_found");
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        srv.get(&format!("{PAGES}/{id}"), &ann.key)
            .await
            .assert_error(404, "not_found");
        srv.get(&format!("{PAGES}/{id}/files"), &ann.key)
            .await
            .assert_error(404, "not_found");
    }
    assert!(
        !srv.logs().contains("FOREIGN KEY") && !srv.logs().contains("foreign key"),
        "{}",
        srv.logs()
    );
}

async fn page_count(srv: &Server, key: &str) -> usize {
    srv.get(PAGES, key).await.assert_status(200)["pages"]
        .as_array()
        .map_or(0, Vec::len)
}

async fn slugs_start_and_end_with_a_letter_or_digit(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let page = |slug: &str| {
        json!({"title": "Slug", "slug": slug, "access": "public",
               "files": [{"path": "index.html", "content": "x"}]})
    };
    for bad in ["-", "--", "-a", "a-", "-a-"] {
        let r = srv.post(PAGES, &ann.key, page(bad)).await;
        r.assert_error(400, "invalid_request");
        assert!(
            r.body["message"].as_str().unwrap().contains("slug"),
            "{}",
            r.text
        );
    }
    assert_eq!(page_count(&srv, &ann.key).await, 0, "nothing stored");
    let r = srv.post(PAGES, &ann.key, page("a-b-9")).await;
    let id = r.assert_status(201)["id"].as_str().unwrap().to_owned();
    srv.post(PAGES, &ann.key, page("7"))
        .await
        .assert_status(201);
    for bad in ["-", "b-"] {
        srv.patch(&format!("{PAGES}/{id}"), &ann.key, json!({ "slug": bad }))
            .await
            .assert_error(400, "invalid_request");
    }
    let got = srv.get(&format!("{PAGES}/{id}"), &ann.key).await;
    assert_eq!(got.assert_status(200)["slug"], "a-b-9", "unchanged");
}

async fn new_page_passwords_have_at_least_8_characters(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let page = |password: &str| {
        json!({"title": "Secret", "access": "password", "password": password,
               "files": [{"path": "index.html", "content": "x"}]})
    };
    for short in ["a", "1234567", "ééééééé"] {
        let r = srv.post(PAGES, &ann.key, page(short)).await;
        r.assert_error(400, "invalid_request");
        assert_eq!(
            r.body["message"], "password must be at least 8 characters",
            "{}",
            r.text
        );
    }
    assert_eq!(page_count(&srv, &ann.key).await, 0, "nothing stored");
    let r = srv.post(PAGES, &ann.key, page("éééééééé")).await;
    let id = r.assert_status(201)["id"].as_str().unwrap().to_owned();
    let before = srv.get(&format!("{PAGES}/{id}"), &ann.key).await;
    let updated_at = before.assert_status(200)["updatedAt"].clone();
    let r = srv
        .patch(
            &format!("{PAGES}/{id}"),
            &ann.key,
            json!({"password": "short", "title": "Changed"}),
        )
        .await;
    r.assert_error(400, "invalid_request");
    assert_eq!(r.body["message"], "password must be at least 8 characters");
    let got = srv.get(&format!("{PAGES}/{id}"), &ann.key).await;
    let got = got.assert_status(200);
    assert_eq!(got["title"], "Secret", "nothing changed");
    assert_eq!(got["updatedAt"], updated_at);
    srv.patch(
        &format!("{PAGES}/{id}"),
        &ann.key,
        json!({"password": "long enough"}),
    )
    .await
    .assert_status(200);
}

/// Fetches a page's URL: (status, body).
async fn visit(url: &str) -> (u16, String) {
    let r = crate::harness::client()
        .build()
        .unwrap()
        .get(url)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

async fn put_files_replaces_the_file_set_and_keeps_the_page(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let storage = db.dir.path().join("bundles");
    let srv = db.start_with(&[
        (
            "QUIRE_STORAGE_URL",
            &format!("file://{}", storage.display()),
        ),
        ("QUIRE_REPLACED_FILES_KEEP_SECS", "3"),
        ("QUIRE_JANITOR_INTERVAL_SECS", "1"),
    ]);
    let r = srv
        .post(
            PAGES,
            &ann.key,
            json!({"title": "Site", "access": "public", "maxViews": 50, "alias": "my-site",
                   "files": [{"path": "index.html", "content": "<p>one</p>"},
                             {"path": "old.css", "content": "p{}"}]}),
        )
        .await;
    let id = r.assert_status(201)["id"].as_str().unwrap().to_owned();
    let before = srv.get(&format!("{PAGES}/{id}"), &ann.key).await;
    let before = before.assert_status(200).clone();
    let url = before["url"].as_str().unwrap().to_owned();
    assert_eq!(visit(&url).await, (200, "<p>one</p>".to_owned()));

    let body = json!({"files": [{"path": "index.html", "content": "<p>two</p>"},
                                {"path": "app.js", "content": "let two = 2;"}]});
    let r = srv
        .call(
            "PUT",
            &format!("{PAGES}/{id}/files"),
            Some(&ann.key),
            Some(&body.to_string()),
        )
        .await;
    let done = r.assert_status(200);
    assert_eq!(done["id"], id.as_str());
    assert_eq!(done["fileCount"], 2);
    assert_eq!(done["sizeBytes"], 10 + 12);

    let after = srv.get(&format!("{PAGES}/{id}"), &ann.key).await;
    let after = after.assert_status(200);
    for field in [
        "url",
        "shortUrl",
        "slug",
        "publicId",
        "access",
        "maxViews",
        "createdAt",
    ] {
        assert_eq!(after[field], before[field], "{field} is kept");
    }
    assert_eq!(after["fileCount"], 2);
    assert_ne!(after["updatedAt"], before["updatedAt"]);
    // Served at once: the serving caches do not keep the old files.
    assert_eq!(visit(&url).await, (200, "<p>two</p>".to_owned()));
    assert_eq!(visit(&format!("{url}app.js")).await.0, 200);
    assert_eq!(
        visit(&format!("{url}old.css")).await.0,
        404,
        "a file not sent again is gone"
    );
    // The old files' objects stay a while (a backup under way still finds them), then the
    // janitor removes them and only the new files' objects are stored.
    let page_dir = storage.join("pages").join(&id);
    let stored = || -> HashSet<String> {
        std::fs::read_dir(&page_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let old: HashSet<String> = [b"<p>one</p>".as_slice(), b"p{}"]
        .into_iter()
        .map(crate::harness::sha256sum)
        .collect();
    assert!(stored().is_superset(&old), "{:?}", stored());
    assert_eq!(stored().len(), 4);
    crate::harness::eventually("the replaced files removed", || async {
        stored().is_disjoint(&old)
    })
    .await;
    let ((count, bytes), listed) = counters_and_files(&srv, &ann.key, &id, &storage).await;
    assert_eq!((count, bytes), listed);
    assert_eq!(visit(&url).await, (200, "<p>two</p>".to_owned()));
}

async fn put_files_refusals(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let bob = db.create_account("bob", &[]);
    let srv = db.start_with(&[
        ("QUIRE_MAX_FILES", "3"),
        ("QUIRE_MAX_FILE_BYTES", "100"),
        ("QUIRE_MAX_PAGE_BYTES", "150"),
    ]);
    let r = srv
        .post(
            PAGES,
            &ann.key,
            json!({"title": "Site", "files": [{"path": "index.html", "content": "<p>kept</p>"}]}),
        )
        .await;
    let id = r.assert_status(201)["id"].as_str().unwrap().to_owned();
    let path = format!("{PAGES}/{id}/files");
    let put = |key: String, path: String, body: Value| {
        let srv = &srv;
        async move {
            srv.call("PUT", &path, Some(&key), Some(&body.to_string()))
                .await
        }
    };
    let file = |p: &str, n: usize| json!({"path": p, "content": "x".repeat(n)});
    let ok_body = json!({"files": [file("index.html", 1)]});

    put(
        ann.key.clone(),
        format!("{PAGES}/{}/files", uuid::Uuid::new_v4()),
        ok_body.clone(),
    )
    .await
    .assert_error(404, "not_found");
    put(bob.key.clone(), path.clone(), ok_body.clone())
        .await
        .assert_error(404, "not_found");
    let (link_only, _) = srv.mint(&ann.key, &["link"], None).await;
    put(link_only, path.clone(), ok_body.clone())
        .await
        .assert_error(403, "insufficient_scope");
    for (body, why) in [
        (json!({"files": []}), "files must be a non-empty array"),
        (json!({"files": [file("../x", 1)]}), ""),
        (
            json!({"files": [file("index.html", 1), file("index.html", 2)]}),
            "appears twice",
        ),
        (
            json!({"files": [file("other.html", 1)]}),
            "entrypoint \"index.html\"",
        ),
        (
            json!({"files": [{"path": "index.html", "content": "%%%", "encoding": "base64"}]}),
            "",
        ),
    ] {
        let r = put(ann.key.clone(), path.clone(), body.clone()).await;
        r.assert_error(400, "invalid_request");
        assert!(
            r.body["message"].as_str().unwrap().contains(why),
            "{body}: {}",
            r.text
        );
    }
    for (files, limit) in [
        (
            json!([
                file("index.html", 1),
                file("a", 1),
                file("b", 1),
                file("c", 1)
            ]),
            "files_per_page",
        ),
        (json!([file("index.html", 101)]), "file_size"),
        (json!([file("index.html", 100), file("a", 60)]), "page_size"),
    ] {
        let r = put(ann.key.clone(), path.clone(), json!({ "files": files })).await;
        r.assert_error(413, "payload_too_large");
        assert_eq!(r.body["limit"], limit, "{}", r.text);
    }
    // Nothing of the refused requests: the page still has its one file.
    let files = srv.get(&path, &ann.key).await;
    let files = files.assert_status(200)["files"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["sizeBytes"], 11);
}
