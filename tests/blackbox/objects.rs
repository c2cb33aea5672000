//! The object API over HTTP on both databases: uploads (multipart and raw), list, fetch,
//! the owner's download, change, replace and delete, with every refusal's code; nothing of a
//! refused upload stays in storage (`objects_refusals.rs`). Projects are in
//! `object_projects.rs`, large uploads and S3 in `objects_large.rs`, visitors in
//! `objects_serving.rs`.

use serde_json::{Value, json};

use crate::harness::{Backend, Reply, Server, on_both_backends, setup};
use crate::pages::{PAGES, site, with};

on_both_backends!(
    objects_are_uploaded_fetched_changed_replaced_and_deleted,
    slugs_are_one_namespace_with_pages,
);

pub(crate) const OBJECTS: &str = "/api/object/v1/objects";
pub(crate) const BOUNDARY: &str = "quire-test-boundary-7MA4YWxkTrZu0gW";

/// A part of a `multipart/form-data` body.
pub(crate) enum Part<'a> {
    Field(&'a str, &'a str),
    File(Option<&'a str>, &'a [u8]),
}

pub(crate) fn form(parts: &[Part<'_>]) -> Vec<u8> {
    let mut body = Vec::new();
    for part in parts {
        body.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match part {
            Part::Field(name, value) => {
                body.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                        .as_bytes(),
                );
            }
            Part::File(filename, bytes) => {
                let name = filename.map_or(String::new(), |f| format!("; filename=\"{f}\""));
                body.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"file\"{name}\r\n\
                         Content-Type: application/octet-stream\r\n\r\n"
                    )
                    .as_bytes(),
                );
                body.extend_from_slice(bytes);
                body.extend_from_slice(b"\r\n");
            }
        }
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

/// Sends `body` with `content_type` to `path` as `method`.
pub(crate) async fn send(
    srv: &Server,
    method: &str,
    path: &str,
    key: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Reply {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let resp = srv
        .http
        .request(method, format!("{}{path}", srv.base))
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    Reply {
        status,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
        headers,
    }
}

pub(crate) async fn upload(srv: &Server, key: &str, parts: &[Part<'_>]) -> Reply {
    send(
        srv,
        "POST",
        OBJECTS,
        key,
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        form(parts),
    )
    .await
}

/// The owner's download: status, headers and bytes.
pub(crate) async fn download(
    srv: &Server,
    key: &str,
    id: &str,
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let resp = srv
        .http
        .get(format!("{}{OBJECTS}/{id}/content", srv.base))
        .header("authorization", format!("Bearer {key}"))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.bytes().await.unwrap().to_vec())
}

/// The files under the server's object storage (`data/bundles/objects`).
pub(crate) fn stored_files(db: &crate::harness::TestDb) -> Vec<String> {
    let root = db.dir.path().join("data/bundles/objects");
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                found.push(entry.path().display().to_string());
            }
        }
    }
    found
}

async fn objects_are_uploaded_fetched_changed_replaced_and_deleted(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let pdf = b"%PDF-1.7 not really a pdf, but bytes all the same".repeat(100);
    let made = upload(
        &srv,
        &ann.key,
        &[
            Part::Field("title", "Quarterly report"),
            Part::Field("access", "public"),
            Part::Field("maxViews", "20"),
            Part::Field("alias", "q3-report"),
            Part::Field("filename", "../reports/Q3 \"final\".pdf"),
            Part::File(Some("upload.pdf"), &pdf),
        ],
    )
    .await;
    let object = made.assert_status(201).clone();
    let id = object["id"].as_str().unwrap().to_owned();
    assert_eq!(
        made.headers["location"].to_str().unwrap(),
        format!("{OBJECTS}/{id}")
    );
    assert_eq!(object["title"], "Quarterly report");
    assert_eq!(object["slug"], "quarterly-report");
    assert_eq!(object["filename"], "Q3 \"final\".pdf");
    assert_eq!(object["contentType"], "application/pdf");
    assert_eq!(object["sizeBytes"], pdf.len());
    assert_eq!(object["sha256"], crate::harness::sha256sum(&pdf));
    assert_eq!(object["access"], "public");
    assert_eq!(object["maxViews"], 20);
    assert_eq!(object["viewCount"], 0);
    assert_eq!(object["status"], "active");
    assert_eq!(object["project"], ann.project_slug.as_str());
    assert_eq!(
        object["url"],
        format!("{}/quarterly-report", srv.owner("ann"))
    );
    assert_eq!(object["shortUrl"], format!("{}/s/q3-report", srv.pages));
    assert_eq!(
        srv.get(&format!("{OBJECTS}/{id}"), &ann.key)
            .await
            .assert_status(200),
        &object
    );

    let (status, headers, bytes) = download(&srv, &ann.key, &id).await;
    assert_eq!(status, 200);
    assert_eq!(bytes, pdf);
    assert_eq!(headers["content-type"], "application/pdf");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(
        headers["etag"].to_str().unwrap(),
        format!("\"{}\"", crate::harness::sha256sum(&pdf))
    );
    assert_eq!(
        headers["content-disposition"].to_str().unwrap(),
        "attachment; filename=\"Q3 _final_.pdf\"; filename*=UTF-8''Q3%20%22final%22.pdf"
    );

    // A raw body, as `curl -T` sends it.
    let raw = send(
        &srv,
        "PUT",
        &format!("{OBJECTS}?filename=data.csv&access=private&slug=numbers"),
        &ann.key,
        "text/csv",
        b"a,b\n1,2\n".to_vec(),
    )
    .await;
    let raw = raw.assert_status(201).clone();
    assert_eq!(raw["slug"], "numbers");
    assert_eq!(raw["filename"], "data.csv");
    assert_eq!(raw["contentType"], "text/csv");
    assert_eq!(raw["access"], "private");
    assert_eq!(raw["sizeBytes"], 8);

    let listed = srv.get(OBJECTS, &ann.key).await;
    let listed = listed.assert_status(200);
    assert_eq!(listed["project"], ann.project_slug.as_str());
    let ids: Vec<&str> = listed["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![raw["id"].as_str().unwrap(), id.as_str()]);

    let changed = srv
        .patch(
            &format!("{OBJECTS}/{id}"),
            &ann.key,
            json!({"title": "Q3", "access": "password", "password": "correct horse",
                   "maxViews": null, "filename": "q3.pdf", "status": "archived"}),
        )
        .await;
    let changed = changed.assert_status(200);
    assert_eq!(changed["title"], "Q3");
    assert_eq!(changed["access"], "password");
    assert_eq!(changed["maxViews"], Value::Null);
    assert_eq!(changed["filename"], "q3.pdf");
    assert_eq!(changed["status"], "archived");
    assert!(changed["archivedAt"].is_string());
    assert!(changed.get("password").is_none() && !changed.to_string().contains("correct horse"));
    let archived = srv
        .get(&format!("{OBJECTS}?status=archived"), &ann.key)
        .await;
    assert_eq!(
        archived.assert_status(200)["objects"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // New bytes: same id, URL, short link and policy.
    let replaced = send(
        &srv,
        "PUT",
        &format!("{OBJECTS}/{id}/content"),
        &ann.key,
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        form(&[Part::File(Some("q3-v2.pdf"), b"version two")]),
    )
    .await;
    let replaced = replaced.assert_status(200);
    assert_eq!(replaced["id"], id.as_str());
    assert_eq!(replaced["url"], object["url"]);
    assert_eq!(replaced["shortUrl"], object["shortUrl"]);
    assert_eq!(replaced["access"], "password");
    assert_eq!(replaced["filename"], "q3-v2.pdf");
    assert_eq!(replaced["sizeBytes"], 11);
    assert_eq!(
        replaced["sha256"],
        crate::harness::sha256sum(b"version two")
    );
    assert_eq!(download(&srv, &ann.key, &id).await.2, b"version two");
    // The old bytes went: one blob per object.
    assert_eq!(stored_files(&db).len(), 2, "{:?}", stored_files(&db));

    srv.delete(&format!("{OBJECTS}/{id}"), &ann.key, None)
        .await
        .assert_status(204);
    srv.get(&format!("{OBJECTS}/{id}"), &ann.key)
        .await
        .assert_error(404, "not_found");
    assert_eq!(download(&srv, &ann.key, &id).await.0, 404);
    srv.delete(&format!("{OBJECTS}/{id}"), &ann.key, None)
        .await
        .assert_error(404, "not_found");
    assert_eq!(stored_files(&db).len(), 1);
    // Its alias is free again.
    upload(
        &srv,
        &ann.key,
        &[
            Part::Field("alias", "q3-report"),
            Part::File(Some("again.txt"), b"again"),
        ],
    )
    .await
    .assert_status(201);
}

async fn slugs_are_one_namespace_with_pages(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    srv.post(
        PAGES,
        &ann.key,
        with(site("Launch"), "slug", json!("launch")),
    )
    .await
    .assert_status(201);
    upload(
        &srv,
        &ann.key,
        &[
            Part::Field("slug", "launch"),
            Part::File(Some("a.txt"), b"a"),
        ],
    )
    .await
    .assert_error(409, "slug_conflict");
    // A derived slug steps past the page's.
    let derived = upload(
        &srv,
        &ann.key,
        &[
            Part::Field("title", "Launch"),
            Part::File(Some("a.txt"), b"a"),
        ],
    )
    .await;
    assert_eq!(derived.assert_status(201)["slug"], "launch-2");
    let object = upload(
        &srv,
        &ann.key,
        &[Part::Field("slug", "deck"), Part::File(Some("d.pdf"), b"d")],
    )
    .await;
    let object_id = object.assert_status(201)["id"].as_str().unwrap().to_owned();
    srv.post(PAGES, &ann.key, with(site("Deck"), "slug", json!("deck")))
        .await
        .assert_error(409, "slug_conflict");
    let page = srv
        .post(PAGES, &ann.key, with(site("Other"), "slug", json!("other")))
        .await;
    let page_id = page.assert_status(201)["id"].as_str().unwrap().to_owned();
    srv.patch(
        &format!("{PAGES}/{page_id}"),
        &ann.key,
        json!({"slug": "deck"}),
    )
    .await
    .assert_error(409, "slug_taken");
    srv.patch(
        &format!("{OBJECTS}/{object_id}"),
        &ann.key,
        json!({"slug": "other"}),
    )
    .await
    .assert_error(409, "slug_taken");
}
