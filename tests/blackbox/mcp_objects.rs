//! The object tools of the agent endpoint, on both databases: an upload URL made by
//! `create_upload` and used by the `curl` line it gives (the object then served with its
//! bytes and the policy given to the tool), refused a second time, over its cap (nothing
//! stored) and once expired, never logged; then the object listed, changed and deleted with
//! the REST API's rules and codes. The same URL through the official MCP Python SDK.

use std::path::{Path, PathBuf};
use std::process::Command;

use quire_objects::ObjectRecords as _;
use serde_json::{Value, json};

use crate::harness::{Backend, Reply, Server, client, on_both_backends, setup};
use crate::mcp::{call, tool_error};

on_both_backends!(agents_upload_files_through_one_time_urls_then_change_and_delete_them);

const NOTES: &[u8] = b"quarterly notes\n";

#[track_caller]
fn result(r: &Reply) -> Value {
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["result"]["isError"], false, "{}", r.text);
    r.body["result"]["structuredContent"].clone()
}

/// Runs a tool's `curl` line in a shell, in a directory holding `file` with `bytes`; the
/// answer's JSON body.
fn run_curl(line: &str, dir: &Path, file: &str, bytes: &[u8]) -> Value {
    std::fs::write(dir.join(file), bytes).expect("the local file");
    let out = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .output()
        .expect("curl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON answer")
}

async fn put(url: &str, body: &'static [u8]) -> (u16, Value, String) {
    let resp = client()
        .build()
        .unwrap()
        .put(url)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
    )
}

async fn visit(url: &str) -> (u16, Vec<u8>) {
    let resp = client().build().unwrap().get(url).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.bytes().await.unwrap().to_vec())
}

async fn upload_url(srv: &Server, key: &str, arguments: Value) -> Value {
    result(&call(srv, key, "create_upload", arguments).await)
}

async fn agents_upload_files_through_one_time_urls_then_change_and_delete_them(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let made = upload_url(
        &srv,
        &ann.key,
        json!({"filename": "notes.txt", "slug": "agent-notes", "access": "password",
               "password": "correct horse", "max_views": 2, "alias": "agent-notes",
               "max_bytes": 64}),
    )
    .await;
    let url = made["uploadUrl"].as_str().unwrap().to_owned();
    let token = url.rsplit('/').next().unwrap().to_owned();
    assert_eq!(url, format!("{}/api/object/v1/uploads/{token}", srv.base));
    assert_eq!(made["maxBytes"], 64);
    assert_eq!(made["shortUrl"], format!("{}/s/agent-notes", srv.pages));
    // Waiting for its bytes: nobody sees it yet, and its slug and alias are taken.
    let (status, _) = visit(made["url"].as_str().unwrap()).await;
    assert_eq!(status, 404);
    let taken = tool_error(
        &call(
            &srv,
            &ann.key,
            "create_upload",
            json!({"filename": "b.txt", "alias": "agent-notes"}),
        )
        .await,
    );
    assert!(taken.starts_with("alias_conflict:"), "{taken}");

    // The curl line, as the agent's shell runs it: no credential but the URL.
    let dir = tempfile::tempdir().unwrap();
    let stored = run_curl(
        made["curl"].as_str().unwrap(),
        dir.path(),
        "notes.txt",
        NOTES,
    );
    assert_eq!(stored["id"], made["id"], "{stored}");
    assert_eq!(stored["sizeBytes"], NOTES.len());
    assert_eq!(stored["access"], "password");
    assert_eq!(stored["maxViews"], 2);
    assert_eq!(stored["contentType"], "text/plain; charset=utf-8");
    let id = made["id"].as_str().unwrap();
    let fetched = srv
        .get(&format!("/api/object/v1/objects/{id}/content"), &ann.key)
        .await;
    assert_eq!(fetched.text.as_bytes(), NOTES);
    // The password policy holds for visitors: a form, not the bytes.
    let (status, body) = visit(made["url"].as_str().unwrap()).await;
    assert_ne!(body, NOTES, "{status}");

    // Once only: a replay is refused, in the spec's error shape, without the token.
    let (status, body, text) = put(&url, b"other bytes").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{text}"
    );
    assert!(body["message"].as_str().unwrap().contains("already used"));
    assert!(!text.contains(&token));

    // Over its cap: refused, and nothing is stored.
    let small = upload_url(
        &srv,
        &ann.key,
        json!({"filename": "big.bin", "max_bytes": 4}),
    )
    .await;
    let small_url = small["uploadUrl"].as_str().unwrap();
    let (status, body, text) = put(small_url, b"far more than four bytes").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (413, Some("payload_too_large")),
        "{text}"
    );
    let (status, body, _) = put(small_url, b"abc").await;
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")));

    // Expired: its pending record's lease, which is its expiry, put in the past.
    let late = upload_url(&srv, &ann.key, json!({"filename": "late.txt"})).await;
    let late_id = quire_kernel::ObjectId(late["id"].as_str().unwrap().parse().unwrap());
    let past = time::OffsetDateTime::now_utc() - time::Duration::seconds(1);
    assert!(db.store().renew_lease(late_id, past).await.unwrap());
    let (status, body, text) = put(late["uploadUrl"].as_str().unwrap(), b"late").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("expired_token")),
        "{text}"
    );

    let listed = result(&call(&srv, &ann.key, "list_objects", json!({})).await);
    let objects = listed["objects"].as_array().unwrap();
    assert_eq!(objects.len(), 1, "{listed}");
    assert_eq!(objects[0]["id"], made["id"]);

    // Changed: public, no budget; visitors then get the bytes.
    let changed = result(
        &call(
            &srv,
            &ann.key,
            "update_object",
            json!({"object": "agent-notes", "access": "public", "max_views": null, "title": "Notes"}),
        )
        .await,
    );
    assert_eq!(
        (changed["access"].as_str(), changed["title"].as_str()),
        (Some("public"), Some("Notes"))
    );
    let (status, body) = visit(made["url"].as_str().unwrap()).await;
    assert_eq!((status, body.as_slice()), (200, NOTES));
    let bad = tool_error(
        &call(
            &srv,
            &ann.key,
            "update_object",
            json!({"object": id, "access": "everyone"}),
        )
        .await,
    );
    assert!(bad.starts_with("invalid_request: access must be"), "{bad}");

    let unconfirmed = tool_error(
        &call(
            &srv,
            &ann.key,
            "delete_object",
            json!({"object": id, "confirm": "yes"}),
        )
        .await,
    );
    assert!(unconfirmed.starts_with("invalid_request:"), "{unconfirmed}");
    let deleted = result(
        &call(
            &srv,
            &ann.key,
            "delete_object",
            json!({"object": id, "confirm": "agent-notes"}),
        )
        .await,
    );
    assert_eq!(deleted["deleted"], made["id"]);
    let (status, _) = visit(made["url"].as_str().unwrap()).await;
    assert_eq!(status, 404);

    // A key without `serve` is refused the object tools, with the scope's code.
    let (page_key, _) = srv.mint(&ann.key, &["page"], None).await;
    let hidden =
        tool_error(&call(&srv, &page_key, "create_upload", json!({"filename": "x"})).await);
    assert!(hidden.starts_with("insufficient_scope:"), "{hidden}");
    // The request log names the route, never the token.
    let logs = srv.logs();
    assert!(logs.contains("/api/object/v1/uploads/{token}"), "{logs}");
    assert!(!logs.contains(&token));
}

/// The Python SDK's test, in a module of its own: its attributes are not the others'.
mod sdk {
    use super::*;

    on_both_backends!(
        #[cfg_attr(
            no_mcp_python,
            ignore = "needs the MCP Python SDK: python3 -m venv target/mcp-python && target/mcp-python/bin/pip install mcp==2.3.0"
        )]
        python_sdk_gets_an_upload_url_that_its_curl_line_uses
    );

    fn target() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target")
    }

    async fn python_sdk_gets_an_upload_url_that_its_curl_line_uses(b: Backend) {
        let Some((_db, srv, ann)) = setup(b).await else {
            return;
        };
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/blackbox/mcp_clients/python_sdk.py");
        let arguments = json!({"filename": "sdk notes.txt", "access": "public", "max_views": 5});
        let out = Command::new(target().join("mcp-python/bin/python"))
            .arg(script)
            .args([&format!("{}/mcp", srv.base), &ann.key, "2026-07-28", "tool"])
            .args(["create_upload", &arguments.to_string()])
            .output()
            .expect("the Python SDK runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let answer: Value = serde_json::from_slice(&out.stdout).expect("one JSON answer");
        assert_eq!(answer["isError"], false, "{answer}");
        let made = &answer["structured"];
        let dir = tempfile::tempdir().unwrap();
        let stored = run_curl(
            made["curl"].as_str().unwrap(),
            dir.path(),
            "sdk notes.txt",
            NOTES,
        );
        assert_eq!(stored["maxViews"], 5, "{stored}");
        let (status, body) = visit(made["url"].as_str().unwrap()).await;
        assert_eq!((status, body.as_slice()), (200, NOTES));
    }
}
