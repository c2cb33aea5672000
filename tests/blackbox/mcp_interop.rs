//! Interop with independent MCP clients against the real server, with an API key: the
//! official Python SDK (`mcp` 2.3.0) in both protocol eras, each step a new client: list the
//! tools, publish a page (then fetch it from the pages origin), put it behind a password
//! (the origin then asks for it), delete it (the origin then has nothing). The SDK is
//! installed by `.ci/run` in a virtual environment under `target/mcp-python`.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::harness::{Backend, Server, on_both_backends, setup};

on_both_backends!(
    #[cfg_attr(
        no_mcp_python,
        ignore = "needs the MCP Python SDK: python3 -m venv target/mcp-python && target/mcp-python/bin/pip install mcp==2.3.0"
    )]
    python_sdk_in_both_eras_publishes_protects_and_deletes
);

fn target() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// One step of `mcp_clients/python_sdk.py`; its JSON answer.
fn python(srv: &Server, key: &str, mode: &str, step: &str, slug: &str) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/blackbox/mcp_clients/python_sdk.py");
    let out = Command::new(target().join("mcp-python/bin/python"))
        .arg(script)
        .args([&format!("{}/mcp", srv.base), key, mode, step, slug])
        .output()
        .expect("the Python SDK runs");
    assert!(
        out.status.success(),
        "{mode} {step}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        srv.logs()
    );
    serde_json::from_slice(&out.stdout).expect("one JSON answer")
}

async fn python_sdk_in_both_eras_publishes_protects_and_deletes(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for (mode, slug) in [
        ("legacy", "interop-legacy"),
        ("2026-07-28", "interop-modern"),
    ] {
        let listed = python(&srv, &ann.key, mode, "list", slug);
        let tools = listed["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 9, "{listed}");
        assert!(tools.contains(&Value::from("publish_page")));

        let published = python(&srv, &ann.key, mode, "publish", slug);
        assert_eq!(published["isError"], false, "{published}");
        let url = published["structured"]["url"].as_str().unwrap().to_owned();
        let page = srv.http.get(&url).send().await.unwrap();
        assert_eq!(page.status(), 200, "{url}");
        assert_eq!(
            page.text().await.unwrap(),
            format!("<h1>hello from {mode}</h1>")
        );
        // A retry of the same publish (a new client, same request id) is replayed.
        let again = python(&srv, &ann.key, mode, "publish", slug);
        assert_eq!(again["structured"]["replayed"], true, "{again}");

        let protected = python(&srv, &ann.key, mode, "password", slug);
        assert_eq!(protected["structured"]["access"], "password", "{protected}");
        let asked = srv.http.get(&url).send().await.unwrap();
        assert_eq!(asked.status(), 401, "{url}");

        let deleted = python(&srv, &ann.key, mode, "delete", slug);
        assert_eq!(deleted["structured"]["deleted"], true, "{deleted}");
        let gone = srv.http.get(&url).send().await.unwrap();
        assert_eq!(gone.status(), 404, "{url}");
    }
}
