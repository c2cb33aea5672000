//! Interop with independent MCP clients against the real server, with an API key: the
//! official Python SDK (`mcp` 2.3.0) in both protocol eras, each step a new client: list the
//! tools, publish a page (then fetch it from the pages origin), put it behind a password
//! (the origin then asks for it), delete it (the origin then has nothing); and the same SDK
//! through the whole OAuth flow (discovery from the 401, dynamic registration, the person's
//! sign-in and consent, PKCE, `resource`) in both eras. The SDK is installed by `.ci/run` in
//! a virtual environment under `target/mcp-python`.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::harness::{Backend, Server, on_both_backends, setup};
use crate::oauth_flow::{REDIRECT, claims, consent, query, world};

on_both_backends!(
    #[cfg_attr(
        no_mcp_python,
        ignore = "needs the MCP Python SDK: python3 -m venv target/mcp-python && target/mcp-python/bin/pip install mcp==2.3.0"
    )]
    python_sdk_in_both_eras_publishes_protects_and_deletes,
    python_sdk_connects_through_oauth_with_dynamic_registration
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
        assert_eq!(tools.len(), 23, "{listed}");
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

async fn python_sdk_connects_through_oauth_with_dynamic_registration(b: Backend) {
    let Some((_db, srv, _ann)) = world(b).await else {
        return;
    };
    let mcp = format!("{}/mcp", srv.base);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/blackbox/mcp_clients/python_oauth.py");
    for mode in ["legacy", "2026-07-28"] {
        let mut child = Command::new(target().join("mcp-python/bin/python"))
            .arg(&script)
            .args([&mcp, REDIRECT, mode])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the Python SDK runs");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut next = |prefix: &str| -> String {
            for line in lines.by_ref() {
                let line = line.unwrap();
                if let Some(rest) = line.strip_prefix(prefix) {
                    return rest.to_owned();
                }
            }
            panic!("{mode}: the SDK ended before `{prefix}`:\n{}", srv.logs());
        };

        // The SDK found the authorization server from the 401 and registered itself.
        let authorize = next("AUTHORIZE ");
        let asked = url::Url::parse(&authorize).unwrap();
        assert_eq!(query(&asked, "resource").as_deref(), Some(mcp.as_str()));
        assert_eq!(
            query(&asked, "code_challenge_method").as_deref(),
            Some("S256")
        );
        let back = consent(&srv, &authorize, "approve").await;
        assert_eq!(query(&back, "iss").as_deref(), Some(srv.base.as_str()));
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{back}").unwrap();

        let result: Value = serde_json::from_str(&next("RESULT ")).unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "{mode}: {result}");
        assert_eq!(result["tools"].as_array().unwrap().len(), 9, "{result}");
        assert_eq!(result["list_pages_is_error"], false, "{result}");
        assert_eq!(
            result["token_request_resources"][0],
            mcp.as_str(),
            "{result}"
        );
        let token = result["access_token"].as_str().unwrap();
        assert_eq!(claims(token)["aud"], mcp.as_str());
        assert_eq!(claims(token)["client_id"], result["client_id"]);
        // A token for the agent endpoint is no key to the REST API.
        let refused = srv.get("/api/page/v1/pages", token).await;
        refused.assert_error(401, "invalid_token");
        assert_eq!(
            refused.body["error_description"],
            "token issuer or audience mismatch"
        );
    }
}
