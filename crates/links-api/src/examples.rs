//! An example of every body of the link API, as the OpenAPI document shows them.

use serde_json::{Value, json};

pub fn link_dto() -> Value {
    json!({
        "id": "3f1c9e2a-7b4d-4c8e-9a6f-2d5b8e1c0a47",
        "public_id": "Tq4wZp8Kx2",
        "shortUrl": "http://localhost:8081/s/launch",
        "alias": "launch",
        "url": "https://example.com/launch?ref=mail",
        "title": "Launch notes",
        "access": "public",
        "allow": [],
        "status": "active",
        "expiresAt": null,
        "expiredUrl": null,
        "maxViews": 100,
        "viewCount": 12,
        "redirectStatus": 302,
        "lastViewedAt": "2026-11-27T09:30:00Z",
        "createdAt": "2026-11-20T08:00:00Z",
        "updatedAt": "2026-11-20T08:00:00Z",
        "archivedAt": null,
        "project": "default"
    })
}

pub fn link_list() -> Value {
    json!({ "links": [link_dto()], "project": "default" })
}

pub fn create_link_body() -> Value {
    json!({
        "url": "https://example.com/launch?ref=mail",
        "alias": "launch",
        "title": "Launch notes",
        "maxViews": 100,
        "expiredUrl": "https://example.com/"
    })
}

pub fn patch_link_body() -> Value {
    json!({ "url": "https://example.com/launch-v2", "maxViews": null })
}

pub fn day() -> Value {
    json!({ "day": "2026-11-27", "views": 12, "bots": 3 })
}

pub fn referrer() -> Value {
    json!({ "host": "news.example.com", "views": 7 })
}

pub fn stats() -> Value {
    json!({
        "from": "2026-11-27",
        "to": "2026-11-27",
        "total": 12,
        "bots": 3,
        "days": [day()],
        "referrers": [referrer()],
        "lastViewedAt": "2026-11-27T09:30:00Z"
    })
}
