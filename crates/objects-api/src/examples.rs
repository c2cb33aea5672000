//! An example of every body of the object API, as the OpenAPI document shows them.

use serde_json::{Value, json};

pub fn object_dto() -> Value {
    json!({
        "id": "8c2d4f6a-1b3e-4d5f-9a7c-0e2f4a6c8e1b",
        "public_id": "Hn3vRq7Ld9",
        "url": "http://ann.localhost:8081/q3-report",
        "shortUrl": "http://localhost:8081/s/q3",
        "slug": "q3-report",
        "title": "Q3 report",
        "filename": "Q3 report.pdf",
        "contentType": "application/pdf",
        "sizeBytes": 1_048_576,
        "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "alias": "q3",
        "access": "public",
        "status": "active",
        "expiresAt": null,
        "maxViews": 20,
        "viewCount": 3,
        "createdAt": "2026-11-27T08:00:00Z",
        "updatedAt": "2026-11-27T08:00:00Z",
        "archivedAt": null,
        "project": "default"
    })
}

pub fn object_list() -> Value {
    json!({
        "objects": [object_dto()],
        "project": "default",
        "quota": object_quota()
    })
}

pub fn object_quota() -> Value {
    json!({ "bytes": { "used": 1_048_576, "limit": 10_737_418_240_u64 } })
}

pub fn upload_form() -> Value {
    json!({ "title": "Q3 report", "access": "public", "maxViews": 20, "file": "(the bytes)" })
}

pub fn patch_object_body() -> Value {
    json!({ "title": "Q3 report (final)", "maxViews": null, "access": "password", "password": "correct horse" })
}

/// What an octet-stream body stands for in the document.
pub const BYTES: &str = "(the file's bytes)";
