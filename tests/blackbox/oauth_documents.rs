//! Client ID Metadata Documents against the real server, on both databases: a document on
//! a loopback HTTP server (the test switch on) drives a whole flow, from a URL `client_id`
//! to a call of `/mcp`; the operator's switch and the discovery field. What is refused
//! (documents that lie or misbehave, inner addresses, certificates no one trusts) is in
//! `oauth_documents_refused.rs`.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::{Backend, Server, TestDb, on_both_backends};
use crate::oauth_flow::{REDIRECT, claims, consent, query, token_endpoint};

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
/// Lets documents be fetched from a loopback HTTP server, as these tests serve them.
pub(crate) const SWITCH: (&str, &str) = ("QUIRE_OAUTH_CIMD_ALLOW_LOOPBACK_HTTP", "true");

on_both_backends!(
    a_metadata_document_client_connects_to_the_agent_endpoint,
    the_operator_turns_metadata_documents_off,
);

/// A document server on a loopback port: each path answers one way.
pub(crate) struct Documents {
    base: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Documents {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Documents {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

fn document(client_id: &str) -> String {
    json!({
        "client_id": client_id,
        "client_name": "Notes",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "logo_uri": "https://ignored.example/logo.png"
    })
    .to_string()
}

/// The raw answer to `path`; `None`: never answer.
fn answer(base: &str, path: &str) -> Option<Vec<u8>> {
    let json = |body: String, extra: &str| {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    };
    match path {
        "/good.json" => Some(json(
            document(&format!("{base}/good.json")),
            "cache-control: max-age=600\r\n",
        )),
        "/other.json" => Some(json(document(&format!("{base}/good.json")), "")),
        "/redirect.json" => Some(
            format!(
                "HTTP/1.1 302 Found\r\nlocation: {base}/good.json\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            .into_bytes(),
        ),
        // No Content-Length: the body ends when the connection closes.
        "/big.json" => {
            let mut doc: Value = serde_json::from_str(&document(&format!("{base}/big.json"))).unwrap();
            doc["padding"] = Value::String("x".repeat(20 * 1024));
            Some(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{doc}"
                )
                .into_bytes(),
            )
        }
        "/page.html" => Some(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 2\r\nconnection: close\r\n\r\nhi"
                .as_bytes()
                .to_vec(),
        ),
        "/slow.json" => None,
        _ => Some(
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec(),
        ),
    }
}

pub(crate) async fn serve_documents() -> Documents {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let served = base.clone();
    let task = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let base = served.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                match answer(&base, &path) {
                    Some(bytes) => {
                        let _ = socket.write_all(&bytes).await;
                        let _ = socket.shutdown().await;
                    }
                    // Hold the connection, silent, longer than the server's deadline.
                    None => tokio::time::sleep(Duration::from_secs(30)).await,
                }
            });
        }
    });
    Documents { base, task }
}

fn authorize_url(srv: &Server, client_id: &str, redirect_uri: &str) -> String {
    let pairs = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect_uri),
        ("scope", "page"),
        ("state", "st-1"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    format!(
        "{}/oauth/authorize?{}",
        srv.base,
        serde_urlencoded::to_string(pairs).unwrap()
    )
}

/// `/oauth/authorize` for `client_id`, signed out: the error page (400, no redirect) with
/// `message` on it.
pub(crate) async fn refused(srv: &Server, client_id: &str, redirect_uri: &str, message: &str) {
    let r = srv
        .http
        .get(authorize_url(srv, client_id, redirect_uri))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400, "{client_id}");
    assert!(r.headers().get("location").is_none(), "{client_id}");
    let page = r.text().await.unwrap();
    assert!(
        page.contains(message),
        "{client_id}: {message:?} missing from {page}"
    );
    assert!(!page.contains("ignored.example"), "the body leaked: {page}");
}

async fn metadata(srv: &Server) -> Value {
    srv.call("GET", "/.well-known/oauth-authorization-server", None, None)
        .await
        .assert_status(200)
        .clone()
}

async fn a_metadata_document_client_connects_to_the_agent_endpoint(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account(
        "ann",
        &["--password", crate::dashboard::PASSWORD, "--platform-admin"],
    );
    let srv = db.start_with(&[SWITCH]);
    let docs = serve_documents().await;
    assert_eq!(
        metadata(&srv).await["client_id_metadata_document_supported"],
        true
    );
    let id = docs.url("/good.json");

    // The consent page marks the client unverified and names the document's host.
    let url = authorize_url(&srv, &id, REDIRECT);
    let mut browser = crate::dashboard::Browser::new(&srv);
    assert_eq!(browser.get_url(&url).await.status, 303);
    let path = url.strip_prefix(&srv.base).unwrap();
    browser
        .post(
            "/login",
            &[
                ("login", "ann"),
                ("password", crate::dashboard::PASSWORD),
                ("next", path),
            ],
        )
        .await;
    let page = browser.get_url(&url).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("id=\"unverified\""), "{}", page.text);
    assert!(
        page.text.contains(
            "Described by a document on <strong class=\"redirect-host\">127.0.0.1</strong>"
        ),
        "{}",
        page.text
    );

    let back = consent(&srv, &url, "approve").await;
    assert_eq!(query(&back, "iss").as_deref(), Some(srv.base.as_str()));
    let code = query(&back, "code").unwrap();

    // A public client: no secret, PKCE binds the code.
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
        ("client_id", id.as_str()),
    ];
    let (status, body) = token_endpoint(&srv, &form).await;
    assert_eq!(status, 200, "{body}");
    let token = body["access_token"].as_str().unwrap();
    let mcp = format!("{}/mcp", srv.base);
    assert_eq!(
        claims(token)["aud"],
        mcp.as_str(),
        "no resource: the agent endpoint"
    );
    assert_eq!(claims(token)["client_id"], id.as_str());

    let list = srv
        .http
        .post(&mcp)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(list.status().as_u16(), 200);
    let tools: Value = list.json().await.unwrap();
    assert!(
        tools["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{tools}"
    );

    // The client is in the registry under its URL, where the admin sees (and may block) it.
    let clients = srv.get("/api/platform/v1/oauth-clients", &ann.key).await;
    assert!(
        clients.assert_status(200).to_string().contains(&id),
        "{}",
        clients.text
    );
    // Refreshing works like for any public client.
    let refresh = [
        ("grant_type", "refresh_token"),
        ("refresh_token", body["refresh_token"].as_str().unwrap()),
        ("client_id", id.as_str()),
    ];
    let (status, refreshed) = token_endpoint(&srv, &refresh).await;
    assert_eq!(status, 200, "{refreshed}");

    // Disconnected from the dashboard: the URL id is one path segment, percent-encoded.
    let path: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
    let disconnect = format!("/account/agents/{path}/disconnect");
    let agents = browser.get("/account/agents").await;
    assert!(
        agents.text.contains(&format!("action=\"{disconnect}\"")),
        "{}",
        agents.text
    );
    let done = browser
        .post(&disconnect, &[("project", &ann.project_id)])
        .await;
    assert_eq!(done.status, 303, "{}", done.text);
    assert!(!browser.get("/account/agents").await.text.contains(&path));
    let refresh = [
        ("grant_type", "refresh_token"),
        (
            "refresh_token",
            refreshed["refresh_token"].as_str().unwrap(),
        ),
        ("client_id", id.as_str()),
    ];
    let (status, body) = token_endpoint(&srv, &refresh).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"], "invalid_grant", "{body}");
}

async fn the_operator_turns_metadata_documents_off(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let srv = db.start_with(&[SWITCH, ("QUIRE_OAUTH_CLIENT_METADATA_DOCUMENTS", "false")]);
    let docs = serve_documents().await;
    assert_eq!(
        metadata(&srv).await["client_id_metadata_document_supported"],
        false
    );
    refused(
        &srv,
        &docs.url("/good.json"),
        REDIRECT,
        "client metadata documents are turned off",
    )
    .await;
}
