//! The endpoint over the testkit's world: the gate's refusals, both protocol eras, and the
//! tools end to end (publish, replay, read, update, delete; an object's upload URL, its
//! bytes, change and delete), as a client sees them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)] // test code: a panic is the failure report; values built in place

use actix_web::dev::ServiceResponse;
use actix_web::{App, test, web};
use quire_testkit::World;
use serde_json::{Value, json};

const HOST: &str = "quire.test";
const METADATA: &str = "https://quire.test/.well-known/oauth-protected-resource/mcp";

struct Answer {
    status: u16,
    headers: actix_web::http::header::HeaderMap,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", |v| v.to_str().unwrap())
    }
}

async fn read(r: ServiceResponse) -> Answer {
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let bytes = test::read_body(r).await;
    let body = serde_json::from_slice(&bytes)
        .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    Answer {
        status,
        headers,
        body,
    }
}

fn post(key: Option<&str>, body: &Value) -> test::TestRequest {
    let mut r = test::TestRequest::post()
        .uri("/mcp")
        .insert_header(("Host", HOST))
        .insert_header(("Content-Type", "application/json"))
        .insert_header(("Accept", "application/json, text/event-stream"))
        .set_payload(body.to_string());
    if let Some(key) = key {
        r = r.insert_header(("Authorization", format!("Bearer {key}")));
    }
    r
}

/// A legacy-era (2025-06-18) request.
fn legacy(key: &str, method: &str, params: Value) -> test::TestRequest {
    post(
        Some(key),
        &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
    )
    .insert_header(("MCP-Protocol-Version", "2025-06-18"))
}

/// A modern-era (2026-07-28) `tools/call`.
fn modern_call(key: &str, tool: &str, arguments: Value) -> test::TestRequest {
    post(
        Some(key),
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments,
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}}),
    )
    .insert_header(("MCP-Protocol-Version", "2026-07-28"))
    .insert_header(("Mcp-Method", "tools/call"))
    .insert_header(("Mcp-Name", tool))
}

async fn world() -> World {
    World::builder().accounts(&["ann"]).build().await
}

macro_rules! send {
    ($app:expr, $req:expr $(,)?) => {
        read(test::call_service($app, $req.to_request()).await).await
    };
}

macro_rules! app {
    ($world:expr) => {{
        let state = $world.app_state();
        test::init_service(App::new().configure(move |cfg: &mut web::ServiceConfig| {
            quire_mcp::register(cfg, &state, &["http://localhost:6274".to_owned()]);
        }))
        .await
    }};
}

fn structured(a: &Answer) -> &Value {
    assert_eq!(a.status, 200, "{}", a.body);
    let result = &a.body["result"];
    assert_eq!(result["isError"], json!(false), "{}", a.body);
    &result["structuredContent"]
}

fn tool_error(a: &Answer) -> String {
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["result"]["isError"], json!(true), "{}", a.body);
    a.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[actix_web::test]
async fn no_credential_gets_the_challenge_naming_the_resource_metadata() {
    let w = world().await;
    let app = app!(w);
    for method in ["POST", "GET", "DELETE"] {
        let req = post(None, &json!({})).method(method.parse().unwrap());
        let a = send!(&app, req);
        assert_eq!(a.status, 401, "{method}");
        assert_eq!(
            a.header("www-authenticate"),
            format!(r#"Bearer resource_metadata="{METADATA}", scope="page""#)
        );
        assert_eq!(
            a.body,
            json!({"error": "invalid_api_key", "error_description": "missing credential"})
        );
        assert_eq!(a.header("cache-control"), "no-store");
        assert_eq!(a.header("vary"), "Authorization, Origin");
    }
    let a = send!(&app, post(Some("qk_nope"), &json!({})));
    assert_eq!(a.status, 401);
    assert_eq!(
        a.header("www-authenticate"),
        format!(
            r#"Bearer error="invalid_token", error_description="unknown or revoked API key", resource_metadata="{METADATA}", scope="page""#
        )
    );
    assert_eq!(a.body["error"], "invalid_api_key");
}

#[actix_web::test]
async fn an_authenticated_get_or_delete_is_405_post_only() {
    let w = world().await;
    let app = app!(w);
    for method in ["GET", "DELETE"] {
        let req = post(Some(&w.key("ann")), &json!({})).method(method.parse().unwrap());
        let a = send!(&app, req);
        assert_eq!(a.status, 405, "{method}");
        assert_eq!(a.header("allow"), "POST");
    }
}

#[actix_web::test]
async fn foreign_origins_and_hosts_are_refused_and_allowed_origins_get_cors() {
    let w = world().await;
    let app = app!(w);
    let key = w.key("ann");
    let a = send!(
        &app,
        legacy(&key, "tools/list", json!({})).insert_header(("Origin", "https://evil.test")),
    );
    assert_eq!(a.status, 403);
    assert_eq!(a.body["error"], "invalid_origin");
    assert!(a.headers.get("access-control-allow-origin").is_none());
    let a = send!(
        &app,
        legacy(&key, "tools/list", json!({})).insert_header(("Host", "evil.test")),
    );
    assert_eq!(a.status, 403);
    assert_eq!(a.body["error"], "invalid_host");
    let a = send!(
        &app,
        legacy(&key, "tools/list", json!({})).insert_header(("Origin", "http://localhost:6274")),
    );
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.header("access-control-allow-origin"),
        "http://localhost:6274"
    );
    let preflight = send!(
        &app,
        test::TestRequest::default()
            .method(actix_web::http::Method::OPTIONS)
            .uri("/mcp")
            .insert_header(("Host", HOST))
            .insert_header(("Origin", "https://quire.test")),
    );
    assert_eq!(preflight.status, 204);
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        "https://quire.test"
    );
    assert!(
        preflight
            .header("access-control-allow-headers")
            .contains("Authorization")
    );
}

#[actix_web::test]
async fn both_eras_list_the_tools_on_one_url() {
    let w = world().await;
    let app = app!(w);
    let key = w.key("ann");
    let init = send!(
        &app,
        post(
            Some(&key),
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}}),
        ),
    );
    assert_eq!(init.status, 200, "{}", init.body);
    assert_eq!(init.body["result"]["protocolVersion"], "2025-06-18");
    assert!(init.headers.get("mcp-session-id").is_none());
    let listed = send!(&app, legacy(&key, "tools/list", json!({})));
    assert_eq!(listed.status, 200, "{}", listed.body);
    let names: Vec<&str> = listed.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "list_projects",
            "list_pages",
            "get_page",
            "read_page_file",
            "publish_page",
            "add_files",
            "update_page",
            "delete_page",
            "list_shared_pages",
            "create_link",
            "list_links",
            "update_link",
            "delete_link",
            "link_stats",
            "list_objects",
            "update_object",
            "delete_object",
            "create_upload",
            "list_databases",
            "create_database",
            "run_sql",
            "database_keys",
            "rotate_database_keys"
        ]
    );
    assert!(listed.body["result"].to_string().len() < 25 * 1024);
    let a = send!(&app, modern_call(&key, "list_pages", json!({})));
    assert_eq!(structured(&a)["pages"], json!([]));
    // The modern era's header rules: a mismatch is 400 -32020.
    let mismatch = send!(
        &app,
        modern_call(&key, "list_pages", json!({})).insert_header(("Mcp-Name", "get_page")),
    );
    assert_eq!(mismatch.status, 400, "{}", mismatch.body);
    assert_eq!(mismatch.body["error"]["code"], -32020);
}

#[actix_web::test]
async fn a_page_is_published_replayed_read_updated_and_deleted_through_the_tools() {
    let w = world().await;
    let app = app!(w);
    let key = w.key("ann");
    let publish = json!({"title": "Report", "slug": "report", "request_id": "r-1", "files": [
        {"path": "index.html", "content": "<h1>hi</h1>"},
        {"path": "logo.bin", "content": "AAEC/w==", "encoding": "base64"}]});
    let first = send!(&app, modern_call(&key, "publish_page", publish.clone()));
    let first = structured(&first).clone();
    assert_eq!(first["access"], "private");
    assert_eq!(first["replayed"], false);
    assert_eq!(first["fileCount"], 2);
    let again = send!(&app, modern_call(&key, "publish_page", publish.clone()));
    let again = structured(&again).clone();
    assert_eq!(again["id"], first["id"]);
    assert_eq!(again["replayed"], true);
    // Without a request id the same slug is the REST API's conflict, as a tool error.
    let mut plain = publish.clone();
    plain.as_object_mut().unwrap().remove("request_id");
    let conflict = tool_error(&send!(&app, modern_call(&key, "publish_page", plain)));
    assert!(conflict.starts_with("slug_conflict: "), "{conflict}");

    let page = send!(
        &app,
        modern_call(
            &key,
            "get_page",
            json!({"page": "report", "include_files": true})
        ),
    );
    let page = structured(&page).clone();
    assert_eq!(page["id"], first["id"]);
    assert_eq!(page["files"].as_array().unwrap().len(), 2);
    assert_eq!(page["filesTruncated"], false);

    let text = send!(
        &app,
        modern_call(
            &key,
            "read_page_file",
            json!({"page": first["id"], "path": "index.html", "max_bytes": 4})
        ),
    );
    let text = structured(&text).clone();
    assert_eq!(text["content"], "<h1>");
    assert_eq!(text["encoding"], "utf8");
    assert_eq!(text["truncated"], true);
    assert_eq!(text["totalBytes"], 11);
    let binary = send!(
        &app,
        modern_call(
            &key,
            "read_page_file",
            json!({"page": "report", "path": "logo.bin"})
        ),
    );
    let binary = structured(&binary).clone();
    assert_eq!(binary["encoding"], "base64");
    assert_eq!(binary["content"], "AAEC/w==");

    let updated = send!(
        &app,
        modern_call(
            &key,
            "update_page",
            json!({"page": "report", "access": "password", "password": "correct horse"})
        ),
    );
    assert_eq!(structured(&updated)["access"], "password");
    let wrong = tool_error(&send!(
        &app,
        modern_call(
            &key,
            "delete_page",
            json!({"page": "report", "confirm": "nope"})
        )
    ));
    assert!(
        wrong.starts_with("invalid_request: confirm must be the page's slug"),
        "{wrong}"
    );
    let deleted = send!(
        &app,
        modern_call(
            &key,
            "delete_page",
            json!({"page": "report", "confirm": "report"})
        ),
    );
    assert_eq!(structured(&deleted)["deleted"], true);
    let gone = tool_error(&send!(
        &app,
        modern_call(&key, "get_page", json!({"page": "report"}))
    ));
    assert!(gone.starts_with("not_found: "), "{gone}");
}

#[actix_web::test]
async fn an_upload_url_makes_an_object_that_the_object_tools_change_and_delete() {
    let w = world().await;
    let app = app!(w);
    let key = w.key("ann");
    let made = send!(
        &app,
        modern_call(
            &key,
            "create_upload",
            json!({"filename": "q3 report.pdf", "access": "public", "max_views": 3, "max_bytes": 64})
        ),
    );
    let made = structured(&made).clone();
    let url = made["uploadUrl"].as_str().unwrap();
    let token = url.rsplit('/').next().unwrap();
    assert!(
        url.ends_with(&format!("/api/object/v1/uploads/{token}")),
        "{url}"
    );
    assert_eq!(
        made["curl"],
        format!("curl -sS -T './q3 report.pdf' '{url}'")
    );
    assert_eq!(made["maxBytes"], 64);
    assert_eq!(made["slug"], "q3-report-pdf");
    // The URL's bytes, as the upload route gives them to the service.
    let mut upload = w.services.objects.accept_offer(token, None).await.unwrap();
    upload
        .write(bytes::Bytes::from_static(b"%PDF"))
        .await
        .unwrap();
    upload.finish().await.unwrap();

    let listed = send!(&app, modern_call(&key, "list_objects", json!({})));
    let listed = structured(&listed).clone();
    assert_eq!(listed["objects"][0]["id"], made["id"]);
    assert_eq!(listed["objects"][0]["sizeBytes"], 4);
    assert_eq!(listed["objects"][0]["maxViews"], 3);
    let updated = send!(
        &app,
        modern_call(
            &key,
            "update_object",
            json!({"object": "q3-report-pdf", "title": "Q3", "max_views": null, "status": "archived"})
        ),
    );
    let updated = structured(&updated).clone();
    assert_eq!(updated["title"], "Q3");
    assert_eq!(updated["status"], "archived");
    assert!(updated.get("maxViews").is_none(), "{updated}");
    let unconfirmed = tool_error(&send!(
        &app,
        modern_call(
            &key,
            "delete_object",
            json!({"object": made["id"], "confirm": "yes"})
        )
    ));
    assert!(unconfirmed.starts_with("invalid_request: confirm must be the object's slug"));
    let deleted = send!(
        &app,
        modern_call(
            &key,
            "delete_object",
            json!({"object": made["id"], "confirm": "q3-report-pdf"})
        ),
    );
    assert_eq!(structured(&deleted)["deleted"], made["id"]);
    let gone = tool_error(&send!(
        &app,
        modern_call(
            &key,
            "update_object",
            json!({"object": "q3-report-pdf", "title": "x"})
        )
    ));
    assert!(
        gone.starts_with("not_found: ") && gone.ends_with("Check the object with list_objects."),
        "{gone}"
    );
    let refused = tool_error(&send!(
        &app,
        modern_call(
            &key,
            "create_upload",
            json!({"filename": "a.txt", "max_bytes": 0})
        )
    ));
    assert!(
        refused.starts_with("invalid_request: maxBytes must be from 1 to "),
        "{refused}"
    );
}

#[actix_web::test]
async fn bad_arguments_and_limits_are_tool_errors_with_a_next_step() {
    let w = world().await;
    let app = app!(w);
    let key = w.key("ann");
    let e = tool_error(&send!(
        &app,
        modern_call(&key, "list_pages", json!({"limit": 500}))
    ));
    assert_eq!(
        e,
        "invalid_limit: limit must be a whole number from 1 to 100. Fix the arguments and call again."
    );
    let e = tool_error(&send!(
        &app,
        modern_call(&key, "list_pages", json!({"colour": 1}))
    ));
    assert!(
        e.starts_with("invalid_request: arguments: unknown field `colour`"),
        "{e}"
    );
    let e = tool_error(&send!(
        &app,
        modern_call(
            &key,
            "publish_page",
            json!({"title": "x", "request_id": "r".repeat(65), "files": []})
        )
    ));
    assert!(
        e.starts_with("invalid_request: request_id must be 1 to 64"),
        "{e}"
    );
    let unknown = send!(&app, modern_call(&key, "no_such_tool", json!({})));
    assert_eq!(unknown.body["error"]["code"], -32602, "{}", unknown.body);
}
