//! The reference for Quire's own CPU per request: (d), `GET /api/page/v1/pages/{id}` with
//! a key, as `serve` measures it, on the data API's server process.

use serde_json::{Value, json};

/// Publishes a small public page with `key` and returns its page API URL.
pub async fn published(api: &str, key: &str) -> String {
    let resp = reqwest::Client::new()
        .post(format!("{api}/api/page/v1/pages"))
        .bearer_auth(key)
        .json(&json!({
            "title": "Api",
            "slug": "api",
            "access": "public",
            "files": [{ "path": "index.html", "content": "<!doctype html><p>bench</p>" }],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 201);
    let page: Value = resp.json().await.unwrap();
    format!("{api}/api/page/v1/pages/{}", page["id"].as_str().unwrap())
}
