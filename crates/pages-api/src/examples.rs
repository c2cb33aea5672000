//! Examples of every request and answer body of the page API, for Swagger UI's "Try it out"
//! and Schemathesis' examples phase, which sends each request example to the real server.
//! The platform API's story: ann's page "Launch notes" in her project `marketing`, on the
//! hosts a local server uses (`127.0.0.1:8080` for the API, `ann.localhost:8081` for her
//! pages). Each is named on its type (`#[schema(example = …)]`), so answers built of other
//! answers reuse theirs.

use serde_json::{Value, json};

// Answers.

pub fn page_dto() -> Value {
    json!({
        "id": "9a3e5c7d-1b2f-4e8a-b6c4-0d9f2e7a5b13",
        "public_id": "k3x9qa2m",
        "url": "http://ann.localhost:8081/launch-notes/",
        "shortUrl": "http://localhost:8081/s/Tq4wZp",
        "slug": "launch-notes",
        "title": "Launch notes",
        "entrypoint": "index.html",
        "access": "password",
        "status": "active",
        "expiresAt": "2031-06-30T12:00:00Z",
        "maxViews": 500,
        "viewCount": 42,
        "sizeBytes": 18432,
        "fileCount": 3,
        "createdAt": "2026-11-25T09:30:00Z",
        "updatedAt": "2026-11-26T14:05:00Z",
        "archivedAt": null,
        "database": "shop"
    })
}

pub fn page_list() -> Value {
    json!({
        "pages": [page_dto()],
        "project": "marketing",
        "nextCursor": "cGFnZXM6MTc2NDA2NzQwMDAwMDAwMC45YTNlNWM3ZDFiMmY0ZThhYjZjNDBkOWYyZTdhNWIxMw"
    })
}

pub fn published_dto() -> Value {
    json!({
        "id": "9a3e5c7d-1b2f-4e8a-b6c4-0d9f2e7a5b13",
        "public_id": "k3x9qa2m",
        "url": "http://ann.localhost:8081/launch-notes/",
        "shortUrl": "http://localhost:8081/s/Tq4wZp",
        "slug": "launch-notes",
        "access": "password",
        "fileCount": 3,
        "sizeBytes": 18432,
        "project": "marketing",
        "database": "shop"
    })
}

pub fn file_dto() -> Value {
    json!({
        "path": "index.html",
        "sizeBytes": 5120,
        "contentType": "text/html; charset=utf-8",
        "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    })
}

pub fn file_list() -> Value {
    json!({"files": [file_dto()], "nextCursor": "ZmlsZXM6aW5kZXguaHRtbA"})
}

pub fn files_added_dto() -> Value {
    json!({
        "id": "9a3e5c7d-1b2f-4e8a-b6c4-0d9f2e7a5b13",
        "fileCount": 4,
        "sizeBytes": 19210
    })
}

pub fn shared_page_dto() -> Value {
    json!({
        "pageId": "9a3e5c7d-1b2f-4e8a-b6c4-0d9f2e7a5b13",
        "title": "Launch notes",
        "slug": "launch-notes",
        "public_id": "k3x9qa2m",
        "ownerHandle": "bob",
        "url": "http://bob.localhost:8081/launch-notes/",
        "sharedAt": "2026-11-25T09:30:00Z",
        "expiresAt": null,
        "maxViews": null
    })
}

pub fn shared_list() -> Value {
    json!({
        "pages": [shared_page_dto()],
        "nextCursor": "c2hhcmVkOjE3NjQwNjMwMDAwMDAwMDAuOWEzZTVjN2QxYjJmNGU4YWI2YzQwZDlmMmU3YTViMTM"
    })
}

// A file of a page request.

pub fn file_body() -> Value {
    json!({
        "path": "index.html",
        "content": "<!doctype html><title>Launch notes</title><h1>We launch on Monday</h1>",
        "encoding": "utf8"
    })
}

// Page requests.

pub fn publish_body() -> Value {
    json!({
        "title": "Launch notes",
        "files": [file_body()],
        "slug": "launch-notes",
        "entrypoint": "index.html",
        "access": "password",
        "password": "correct horse battery",
        "expiresAt": "2031-06-30T12:00:00Z",
        "maxViews": 500,
        "project": "marketing",
        "database": "shop"
    })
}

pub fn patch_page_body() -> Value {
    json!({
        "title": "Launch notes (final)",
        "access": "public",
        "expiresAt": null,
        "maxViews": 1000
    })
}

pub fn add_files_body() -> Value {
    json!({
        "files": [
            {
                "path": "style.css",
                "content": "body { font-family: system-ui, sans-serif; }",
                "encoding": "utf8"
            }
        ]
    })
}
