//! The hosted agent endpoint (`/mcp`) on the real server, both databases: each refusal of
//! the gate with its exact challenge and body, `not_activated`, foreign `Origin` and `Host`,
//! GET and DELETE, the modern era's header rules, and the tools end to end: a publish that
//! retries is replayed from the database, the page is served, errors carry Quire's codes.

use serde_json::{Value, json};

use crate::harness::{Backend, Reply, Server, TestDb, on_both_backends, setup};

on_both_backends!(
    refusals_carry_the_challenge_and_quire_bodies,
    an_account_not_activated_is_sent_to_activation_without_a_challenge,
    foreign_origins_and_hosts_are_refused,
    get_and_delete_are_challenged_then_405,
    the_modern_era_header_rules_hold,
    a_retried_publish_is_replayed_and_the_page_served,
    tools_list_fits_and_tool_errors_carry_quire_codes,
    protocol_errors_are_json_rpc_errors,
);

/// What every `/mcp` request of these tests sends, and the answer.
async fn mcp(srv: &Server, key: Option<&str>, headers: &[(&str, &str)], body: &Value) -> Reply {
    raw(srv, key, headers, &body.to_string()).await
}

/// [`mcp`] with a body that need not be JSON.
async fn raw(srv: &Server, key: Option<&str>, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut req = srv
        .http
        .post(format!("{}/mcp", srv.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(key) = key {
        req = req.header("authorization", format!("Bearer {key}"));
    }
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let resp = req.body(body.to_owned()).send().await.expect("request");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.expect("body");
    Reply {
        status,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
        headers,
    }
}

/// A 2026-07-28 `tools/call`.
pub(crate) async fn call(srv: &Server, key: &str, tool: &str, arguments: Value) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    mcp(
        srv,
        Some(key),
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", tool),
        ],
        &body,
    )
    .await
}

#[track_caller]
fn result(r: &Reply) -> &Value {
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["result"]["isError"], false, "{}", r.text);
    &r.body["result"]["structuredContent"]
}

#[track_caller]
pub(crate) fn tool_error(r: &Reply) -> String {
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["result"]["isError"], true, "{}", r.text);
    r.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn header<'a>(r: &'a Reply, name: &str) -> &'a str {
    r.headers.get(name).map_or("", |v| v.to_str().unwrap())
}

async fn refusals_carry_the_challenge_and_quire_bodies(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let metadata = format!("{}/.well-known/oauth-protected-resource/mcp", srv.base);
    let none = mcp(&srv, None, &[], &json!({})).await;
    assert_eq!(none.status, 401, "{}", none.text);
    assert_eq!(
        header(&none, "www-authenticate"),
        format!(r#"Bearer resource_metadata="{metadata}", scope="page""#)
    );
    assert_eq!(
        none.body,
        json!({"error": "invalid_api_key", "error_description": "missing credential"})
    );
    assert_eq!(header(&none, "cache-control"), "no-store");

    let unknown = format!("qk_{}", "A".repeat(43));
    let bad = mcp(&srv, Some(&unknown), &[], &json!({})).await;
    assert_eq!(bad.status, 401, "{}", bad.text);
    assert_eq!(
        header(&bad, "www-authenticate"),
        format!(
            r#"Bearer error="invalid_token", error_description="unknown or revoked API key", resource_metadata="{metadata}", scope="page""#
        )
    );
    assert_eq!(
        bad.body,
        json!({"error": "invalid_api_key", "error_description": "unknown or revoked API key"})
    );

    let malformed_jwt = mcp(&srv, Some("aaa.bbb.ccc"), &[], &json!({})).await;
    assert_eq!(malformed_jwt.status, 401, "{}", malformed_jwt.text);
    assert_eq!(malformed_jwt.body["error"], "invalid_token");
    let description = malformed_jwt.body["error_description"].as_str().unwrap();
    assert_eq!(
        header(&malformed_jwt, "www-authenticate"),
        format!(
            r#"Bearer error="invalid_token", error_description="{description}", resource_metadata="{metadata}", scope="page""#
        )
    );

    // An app key without the page app: the step-up challenge.
    let (link_key, _) = srv.mint(&ann.key, &["link"], None).await;
    let scoped = mcp(&srv, Some(&link_key), &[], &json!({})).await;
    assert_eq!(scoped.status, 403, "{}", scoped.text);
    assert_eq!(
        header(&scoped, "www-authenticate"),
        format!(
            r#"Bearer error="insufficient_scope", scope="page", resource_metadata="{metadata}", error_description="the MCP endpoint needs the page scope""#
        )
    );
    assert_eq!(
        scoped.body,
        json!({"error": "insufficient_scope", "error_description": "the MCP endpoint needs the page scope"})
    );
}

async fn an_account_not_activated_is_sent_to_activation_without_a_challenge(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let dormant = db.create_account("dormant", &["--not-activated"]);
    let srv = db.start();
    let r = mcp(&srv, Some(&dormant.key), &[], &json!({})).await;
    assert_eq!(r.status, 403, "{}", r.text);
    assert!(r.headers.get("www-authenticate").is_none());
    let activation = format!("{}/account/activate", srv.base);
    assert_eq!(
        r.body,
        json!({"error": "not_activated",
               "error_description": format!("This account is not activated yet. Activate it at {activation}, then reconnect."),
               "activation_url": activation})
    );
}

async fn foreign_origins_and_hosts_are_refused(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let evil = mcp(
        &srv,
        Some(&ann.key),
        &[("origin", "https://evil.test")],
        &list,
    )
    .await;
    assert_eq!(evil.status, 403, "{}", evil.text);
    assert_eq!(evil.body["error"], "invalid_origin");
    assert!(evil.headers.get("access-control-allow-origin").is_none());
    let host = mcp(&srv, Some(&ann.key), &[("host", "evil.test")], &list).await;
    assert_eq!(host.status, 403, "{}", host.text);
    assert_eq!(host.body["error"], "invalid_host");
    let own = mcp(
        &srv,
        Some(&ann.key),
        &[("origin", srv.base.as_str())],
        &list,
    )
    .await;
    assert_eq!(own.status, 200, "{}", own.text);
    assert_eq!(header(&own, "access-control-allow-origin"), srv.base);
}

async fn get_and_delete_are_challenged_then_405(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for method in ["GET", "DELETE"] {
        for path in ["/mcp", "/mcp/"] {
            let anonymous = srv.call(method, path, None, None).await;
            assert_eq!(anonymous.status, 401, "{method} {path}");
            assert!(
                header(&anonymous, "www-authenticate").starts_with("Bearer resource_metadata=")
            );
            let known = srv.call(method, path, Some(&ann.key), None).await;
            assert_eq!(known.status, 405, "{method} {path}");
            assert_eq!(header(&known, "allow"), "POST");
        }
    }
}

async fn the_modern_era_header_rules_hold(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let meta = |version: &str| {
        json!({"io.modelcontextprotocol/protocolVersion": version,
               "io.modelcontextprotocol/clientCapabilities": {}})
    };
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                      "params": {"_meta": meta("2026-07-28")}});
    let mismatch = mcp(
        &srv,
        Some(&ann.key),
        &[
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-method", "tools/list"),
        ],
        &body,
    )
    .await;
    assert_eq!(mismatch.status, 400, "{}", mismatch.text);
    assert_eq!(mismatch.body["error"]["code"], -32020, "{}", mismatch.text);
    let future = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                        "params": {"_meta": meta("2099-01-01")}});
    let unsupported = mcp(
        &srv,
        Some(&ann.key),
        &[
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/list"),
        ],
        &future,
    )
    .await;
    assert_eq!(unsupported.status, 400, "{}", unsupported.text);
    assert_eq!(
        unsupported.body["error"]["code"], -32022,
        "{}",
        unsupported.text
    );
    assert!(
        unsupported.body["error"]["data"]["supported"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "{}",
        unsupported.text
    );
}

async fn a_retried_publish_is_replayed_and_the_page_served(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let publish = json!({"title": "Notes", "slug": "notes", "access": "public",
        "request_id": "retry-me",
        "files": [{"path": "index.html", "content": "<h1>agent notes</h1>"}]});
    let first = result(&call(&srv, &ann.key, "publish_page", publish.clone()).await).clone();
    assert_eq!(first["replayed"], false);
    let again = result(&call(&srv, &ann.key, "publish_page", publish.clone()).await).clone();
    assert_eq!(again["replayed"], true);
    assert_eq!(again["id"], first["id"]);
    // Another credential of the account does not share the first one's request ids.
    let (other, _) = srv.mint(&ann.key, &["page"], None).await;
    let conflict = tool_error(&call(&srv, &other, "publish_page", publish).await);
    assert!(conflict.starts_with("slug_conflict: "), "{conflict}");

    let url = first["url"].as_str().unwrap();
    let served = srv.http.get(url).send().await.unwrap();
    assert_eq!(served.status(), 200);
    assert_eq!(served.text().await.unwrap(), "<h1>agent notes</h1>");

    let listed = result(&call(&srv, &ann.key, "list_pages", json!({"limit": 1})).await).clone();
    assert_eq!(listed["pages"][0]["id"], first["id"]);
    let deleted = call(
        &srv,
        &ann.key,
        "delete_page",
        json!({"page": url, "confirm": "notes"}),
    )
    .await;
    assert_eq!(result(&deleted)["deleted"], true);
}

async fn tools_list_fits_and_tool_errors_carry_quire_codes(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let listed = mcp(
        &srv,
        Some(&ann.key),
        &[("mcp-protocol-version", "2025-11-25")],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    assert_eq!(listed.status, 200, "{}", listed.text);
    assert_eq!(listed.body["result"]["tools"].as_array().unwrap().len(), 23);
    assert!(listed.text.len() < 25 * 1024, "{} bytes", listed.text.len());
    // An app key with `page` sees every tool but list_projects (its route refuses it).
    let (page_key, _) = srv.mint(&ann.key, &["page"], None).await;
    let scoped = mcp(
        &srv,
        Some(&page_key),
        &[("mcp-protocol-version", "2025-11-25")],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    let names: Vec<&str> = scoped.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"list_projects") && names.contains(&"publish_page"));
    assert!(
        !names.contains(&"create_link") && !names.contains(&"list_links"),
        "the link tools need `link`: {names:?}"
    );

    let missing = tool_error(&call(&srv, &ann.key, "get_page", json!({"page": "nope"})).await);
    assert_eq!(
        missing,
        "not_found: page not found. Check the page with list_pages."
    );
    let password = tool_error(
        &call(
            &srv,
            &ann.key,
            "publish_page",
            json!({"title": "P", "access": "password",
                   "files": [{"path": "index.html", "content": "x"}]}),
        )
        .await,
    );
    assert!(password.starts_with("password_required: "), "{password}");
    let forbidden = tool_error(&call(&srv, &page_key, "list_projects", json!({})).await);
    assert!(forbidden.starts_with("insufficient_scope: "), "{forbidden}");
}

/// A JSON-RPC error answer: its status, `application/json`, the id and the code.
#[track_caller]
fn protocol_error(r: &Reply, status: u16, id: &Value, code: i64) {
    assert_eq!(r.status, status, "{}", r.text);
    assert_eq!(header(r, "content-type"), "application/json", "{}", r.text);
    assert_eq!(r.body["jsonrpc"], "2.0", "{}", r.text);
    assert_eq!(&r.body["id"], id, "{}", r.text);
    assert_eq!(r.body["error"]["code"], code, "{}", r.text);
    assert!(r.body["error"]["message"].is_string(), "{}", r.text);
}

async fn protocol_errors_are_json_rpc_errors(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let key = Some(ann.key.as_str());
    let era = [("mcp-protocol-version", "2025-11-25")];
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let batch = json!([ping, ping]).to_string();
    for (body, id, code) in [
        ("not json".to_owned(), Value::Null, -32700),
        (
            r#"{"jsonrpc": "2.0", "id": 1,"#.to_owned(),
            Value::Null,
            -32700,
        ),
        ("[]".to_owned(), Value::Null, -32600),
        (batch, Value::Null, -32600),
        ("42".to_owned(), Value::Null, -32600),
        (
            r#"{"jsonrpc": "1.0", "id": 5, "method": "ping"}"#.to_owned(),
            json!(5),
            -32600,
        ),
        (
            r#"{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}"#.to_owned(),
            Value::Null,
            -32600,
        ),
        (
            r#"{"jsonrpc": "2.0", "id": [1], "method": "ping"}"#.to_owned(),
            Value::Null,
            -32600,
        ),
    ] {
        let r = raw(&srv, key, &era, &body).await;
        protocol_error(&r, 400, &id, code);
    }
    // Nesting past serde_json's 128 levels is refused as it is read, not after.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let started = std::time::Instant::now();
    protocol_error(
        &raw(&srv, key, &era, &deep).await,
        400,
        &Value::Null,
        -32700,
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(3));

    // A version the server does not speak: MCP's -32022, with the ones it does.
    let unsupported = mcp(
        &srv,
        key,
        &[("mcp-protocol-version", "2099-01-01")],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    protocol_error(&unsupported, 400, &json!(2), -32022);
    assert_eq!(unsupported.body["error"]["data"]["requested"], "2099-01-01");
    let supported = unsupported.body["error"]["data"]["supported"].to_string();
    assert!(
        supported.contains("2026-07-28") && supported.contains("2025-11-25"),
        "{supported}"
    );
    // A body that says it is not JSON keeps rmcp's 415, in JSON-RPC's words.
    let text = srv
        .http
        .post(format!("{}/mcp", srv.base))
        .bearer_auth(&ann.key)
        .header("content-type", "text/plain")
        .header("accept", "application/json, text/event-stream")
        .body(ping.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(text.status().as_u16(), 415);
    let body: Value = text.json().await.unwrap();
    assert_eq!(
        (&body["id"], &body["error"]["code"]),
        (&Value::Null, &json!(-32600)),
        "{body}"
    );

    // `arguments` that is not an object: invalid params (not "method not found"), in the
    // answer to the request, in both eras.
    let legacy = mcp(
        &srv,
        key,
        &era,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "list_pages", "arguments": [1, 2]}}),
    )
    .await;
    protocol_error(&legacy, 200, &json!(3), -32602);
    let modern = call(&srv, &ann.key, "list_pages", json!("nope")).await;
    protocol_error(&modern, 200, &json!(1), -32602);
}
