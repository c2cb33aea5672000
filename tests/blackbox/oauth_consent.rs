//! The agent consent page's choices against the real server, on both databases: the project
//! picker (the account's projects, the home one preselected; the token acts in the project
//! picked, through `/mcp` and through refreshes; another account's project refused with
//! nothing stored), "read only" (`page:read`: only read tools at `/mcp`, 403 on REST
//! writes), the activate-first screen of an account not activated, and the Agents page
//! listing each connection's project and scopes.

use serde_json::{Value, json};

use crate::dashboard::{Browser, PASSWORD, element};
use crate::harness::{Backend, Reply, Server, on_both_backends};
use crate::oauth_flow::{REDIRECT, claims, query, token_endpoint, world};

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const PROJECTS: &str = "/api/platform/v1/projects";

/// A client registered the way agents do (RFC 7591, public): its id.
async fn agent(srv: &Server) -> String {
    let metadata = json!({"client_name": "Notes", "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none"});
    let r = srv
        .call(
            "POST",
            "/api/oauth/register",
            None,
            Some(&metadata.to_string()),
        )
        .await;
    r.assert_status(201)["client_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn authorize_path(client_id: &str, scope: &str, resource: Option<&str>) -> String {
    let mut pairs = vec![
        ("response_type", "code".to_owned()),
        ("client_id", client_id.to_owned()),
        ("redirect_uri", REDIRECT.to_owned()),
        ("scope", scope.to_owned()),
        ("state", "st-1".to_owned()),
        ("code_challenge", CHALLENGE.to_owned()),
        ("code_challenge_method", "S256".to_owned()),
    ];
    if let Some(resource) = resource {
        pairs.push(("resource", resource.to_owned()));
    }
    format!(
        "/oauth/authorize?{}",
        serde_urlencoded::to_string(pairs).unwrap()
    )
}

/// The HTML from the element with this id to the first `end` after it.
fn block<'h>(html: &'h str, id: &str, end: &str) -> Option<&'h str> {
    let start = html.find(&format!("id=\"{id}\""))?;
    let stop = html[start..].find(end)? + start;
    Some(&html[start..stop])
}

fn value_of(html: &str, name: &str) -> String {
    let at = html.find(&format!("name=\"{name}\" value=\"")).unwrap() + name.len() + 15;
    html[at..at + html[at..].find('"').unwrap()].to_owned()
}

/// A signed-in person on the consent page of `path`: the page, and the request id.
async fn consent_page<'a>(browser: &mut Browser<'a>, path: &str) -> (Reply, String) {
    let page = browser.get(path).await;
    assert_eq!(page.status, 200, "{}", page.text);
    let request = value_of(&page.text, "request");
    (page, request)
}

async fn decide(browser: &mut Browser<'_>, request: &str, extra: &[(&str, &str)]) -> Reply {
    let mut form = vec![("request", request), ("decision", "approve")];
    form.extend_from_slice(extra);
    browser.post("/api/oauth/decision", &form).await
}

/// Redeems the code on `approved` (a 303 to the client); the token answer.
async fn redeem(srv: &Server, client_id: &str, approved: &Reply) -> Value {
    assert_eq!(approved.status, 303, "{}", approved.text);
    let back = url::Url::parse(approved.headers["location"].to_str().unwrap()).unwrap();
    let code = query(&back, "code").unwrap();
    token(
        srv,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("client_id", client_id),
        ],
    )
    .await
}

async fn token(srv: &Server, form: &[(&str, &str)]) -> Value {
    let (status, body) = token_endpoint(srv, form).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// One JSON-RPC request to `/mcp` with `token`.
async fn mcp(srv: &Server, token: &str, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let mut req = srv
        .http
        .post(format!("{}/mcp", srv.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {token}"))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params["name"].as_str() {
        req = req.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let r = req.body(body.to_string()).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    r.json().await.unwrap()
}

async fn new_project(srv: &Server, key: &str, slug: &str) -> String {
    let body = json!({"name": "Side project", "tag": "web", "color": "emerald", "slug": slug});
    let r = srv.post(PROJECTS, key, body).await;
    r.assert_status(201)["project"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn the_picked_project_is_where_the_agent_publishes(b: Backend) {
    let Some((_db, srv, ann)) = world(b).await else {
        return;
    };
    let side = new_project(&srv, &ann.key, "side").await;
    let client = agent(&srv).await;
    let mut browser = Browser::new(&srv);
    browser.sign_in("ann").await;
    let (page, request) = consent_page(&mut browser, &authorize_path(&client, "page", None)).await;
    // Both projects offered, the home (default) one preselected.
    assert!(
        page.text
            .contains(&format!("<option value=\"{}\" selected>", ann.project_id)),
        "{}",
        page.text
    );
    assert!(page.text.contains(&format!("<option value=\"{side}\">")));
    assert!(element(&page.text, "read-only").is_some());

    let approved = decide(&mut browser, &request, &[("project", &side)]).await;
    let tokens = redeem(&srv, &client, &approved).await;
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(claims(access)["project"], side.as_str());
    let published = mcp(
        &srv,
        access,
        "tools/call",
        json!({"name": "publish_page", "arguments": {"title": "Side notes",
            "files": [{"path": "index.html", "content": "<h1>side</h1>"}]}}),
    )
    .await;
    assert_eq!(published["result"]["isError"], false, "{published}");
    assert_eq!(
        published["result"]["structuredContent"]["project"], "side",
        "{published}"
    );

    // A refresh keeps the project.
    let refreshed = token(
        &srv,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", &client),
        ],
    )
    .await;
    let access = refreshed["access_token"].as_str().unwrap();
    assert_eq!(claims(access)["project"], side.as_str());
    let listed = mcp(
        &srv,
        access,
        "tools/call",
        json!({"name": "list_pages", "arguments": {}}),
    )
    .await;
    assert_eq!(
        listed["result"]["structuredContent"]["project"], "side",
        "{listed}"
    );

    // The Agents page names the project and the scopes.
    let agents = browser.get("/account/agents").await;
    let row = block(&agents.text, &format!("agent-{client}-side"), "</tr>").expect("the side row");
    assert!(
        row.contains("<code>side</code>") && row.contains("<code>page</code>"),
        "{row}"
    );
}

async fn a_project_of_another_account_is_refused_and_nothing_is_stored(b: Backend) {
    let Some((db, srv, ann)) = world(b).await else {
        return;
    };
    let bob = db.create_account("bob", &["--password", PASSWORD]);
    let client = agent(&srv).await;
    let mut browser = Browser::new(&srv);
    browser.sign_in("ann").await;
    let (page, request) = consent_page(&mut browser, &authorize_path(&client, "page", None)).await;
    assert!(!page.text.contains(&bob.project_id));
    for project in [bob.project_id.as_str(), "not-a-project"] {
        let refused = decide(&mut browser, &request, &[("project", project)]).await;
        assert_eq!(refused.status, 400, "{}", refused.text);
        assert!(
            refused.text.contains("pick one of your projects"),
            "{}",
            refused.text
        );
    }
    // Still pending, and approvable in ann's own project.
    let approved = decide(&mut browser, &request, &[("project", &ann.project_id)]).await;
    let tokens = redeem(&srv, &client, &approved).await;
    assert_eq!(
        claims(tokens["access_token"].as_str().unwrap())["project"],
        ann.project_id.as_str()
    );
}

async fn read_only_gives_page_read_only_tools_and_no_rest_writes(b: Backend) {
    let Some((_db, srv, _ann)) = world(b).await else {
        return;
    };
    let client = agent(&srv).await;
    let mut browser = Browser::new(&srv);
    browser.sign_in("ann").await;

    // At /mcp: only the read tools, and a write tool refused.
    let (_, request) = consent_page(&mut browser, &authorize_path(&client, "page", None)).await;
    let approved = decide(&mut browser, &request, &[("read_only", "true")]).await;
    let tokens = redeem(&srv, &client, &approved).await;
    assert_eq!(tokens["scope"], "page:read");
    let access = tokens["access_token"].as_str().unwrap();
    let tools = mcp(&srv, access, "tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{tools}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"list_pages"), "{names:?}");
    for write in ["publish_page", "add_files", "update_page", "delete_page"] {
        assert!(!names.contains(&write), "{names:?}");
    }
    let refused = mcp(
        &srv,
        access,
        "tools/call",
        json!({"name": "publish_page", "arguments": {"title": "No",
            "files": [{"path": "index.html", "content": "x"}]}}),
    )
    .await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("insufficient_scope"), "{text}");

    // At the REST API: reads pass, writes are 403.
    let api = format!("{}/api", srv.base);
    let path = authorize_path(&client, "page", Some(&api));
    let (_, request) = consent_page(&mut browser, &path).await;
    let approved = decide(&mut browser, &request, &[("read_only", "true")]).await;
    let tokens = redeem(&srv, &client, &approved).await;
    assert_eq!(tokens["scope"], "page:read");
    let access = tokens["access_token"].as_str().unwrap();
    srv.get("/api/page/v1/pages", access)
        .await
        .assert_status(200);
    let page = json!({"title": "No", "files": [{"path": "index.html", "content": "x"}]});
    srv.post("/api/page/v1/pages", access, page)
        .await
        .assert_error(403, "insufficient_scope");

    // The Agents page shows the read-only scope.
    let agents = browser.get("/account/agents").await;
    let row = block(&agents.text, &format!("agent-{client}-ann"), "</tr>").expect("the ann row");
    assert!(row.contains("<code>page:read</code>"), "{row}");
}

async fn an_account_not_activated_is_told_to_activate_first(b: Backend) {
    let Some((db, srv, _ann)) = world(b).await else {
        return;
    };
    db.create_account("dormant", &["--not-activated", "--password", PASSWORD]);
    let client = agent(&srv).await;
    let mut browser = Browser::new(&srv);
    browser.sign_in("dormant").await;
    let path = authorize_path(&client, "page", None);
    let page = browser.get(&path).await;
    assert_eq!(page.status, 200, "{}", page.text);
    let notice =
        block(&page.text, "activate-first", "</section>").expect("the activate-first notice");
    assert!(notice.contains("href=\"/account/activate\""), "{notice}");
    assert!(element(&page.text, "approve").is_none());
    assert!(!page.text.contains("name=\"request\""));
}

on_both_backends!(
    the_picked_project_is_where_the_agent_publishes,
    a_project_of_another_account_is_refused_and_nothing_is_stored,
    read_only_gives_page_read_only_tools_and_no_rest_writes,
    an_account_not_activated_is_told_to_activate_first,
);
