//! The dashboard's Agents page on both databases: the empty state with the MCP address,
//! an agent connected through the OAuth code flow listed with its project, scopes and last
//! use, and disconnecting it: refused cross-site, for another account or a project it is
//! not in (nothing changed), and then done, after which its refresh token is refused.

use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, HttpRequest, PkceCodeChallenge,
    RedirectUrl, TokenResponse, TokenUrl,
};
use serde_json::Value;

use crate::dashboard::{Browser, PASSWORD, element, location};
use crate::harness::{Backend, Server, on_both_backends};
use crate::interop::send;
use crate::oauth_flow::{REDIRECT, Registered, consent, query, register, world};

const AGENTS: &str = "/account/agents";

/// Connects the client as ann through the code flow; its access and refresh tokens.
async fn connect(srv: &Server, registered: &Registered) -> (String, String) {
    let client = BasicClient::new(ClientId::new(registered.id.clone()))
        .set_client_secret(ClientSecret::new(registered.secret.clone()))
        .set_auth_uri(AuthUrl::new(format!("{}/oauth/authorize", srv.base)).unwrap())
        .set_token_uri(TokenUrl::new(format!("{}/api/oauth/token", srv.base)).unwrap())
        .set_redirect_uri(RedirectUrl::new(REDIRECT.into()).unwrap());
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, _) = client
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .url();
    let back = consent(srv, url.as_str(), "approve").await;
    let http = reqwest::Client::new();
    let http_client = |req: HttpRequest| send(&http, req);
    let token = client
        .exchange_code(AuthorizationCode::new(query(&back, "code").unwrap()))
        .set_pkce_verifier(verifier)
        .request_async(&http_client)
        .await
        .unwrap();
    (
        token.access_token().secret().clone(),
        token.refresh_token().unwrap().secret().clone(),
    )
}

/// The token endpoint's answer to a refresh with `refresh`.
async fn refresh(srv: &Server, registered: &Registered, refresh: &str) -> (u16, Value) {
    let r = srv
        .http
        .post(format!("{}/api/oauth/token", srv.base))
        .basic_auth(&registered.id, Some(&registered.secret))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            serde_urlencoded::to_string([
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh),
            ])
            .unwrap(),
        )
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn agents_are_listed_and_disconnected(b: Backend) {
    let Some((db, srv, ann)) = world(b).await else {
        return;
    };
    let bob_account = db.create_account("bob", &["--password", PASSWORD]);
    let mut browser = Browser::new(&srv);
    browser.sign_in("ann").await;

    // None yet: where to connect one.
    let page = browser.get(AGENTS).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("aria-current=\"page\">Agents</a>"));
    assert!(
        element(&page.text, "empty-title").is_some(),
        "{}",
        page.text
    );
    assert_eq!(
        element(&page.text, "mcp-url").as_deref(),
        Some(format!("{}/mcp", srv.base).as_str())
    );
    assert!(page.text.contains("quire mcp"));
    assert!(page.text.contains("href=\"/authorize-agent\""));

    // Connected twice (two grants of one client in one project): one row.
    let registered = register(&srv, &ann.key).await;
    let (_, first_refresh) = connect(&srv, &registered).await;
    let (_, second_refresh) = connect(&srv, &registered).await;
    let page = browser.get(AGENTS).await;
    let row = format!("agent-{}-{}", registered.id, ann.project_slug);
    assert_eq!(page.text.matches(&format!("id=\"{row}\"")).count(), 1);
    assert!(element(&page.text, "empty-title").is_none());
    let at = page.text.find(&format!("id=\"{row}\"")).unwrap();
    let row_html = &page.text[at..at + page.text[at..].find("</tr>").unwrap()];
    for shown in [
        "<td class=\"agent-name lead-cell\">Notes</td>",
        "<td class=\"project\" data-label=\"Project\"><code>ann</code></td>",
        "<td class=\"scopes\" data-label=\"Scopes\"><code>page</code></td>",
        ">just now</time>",
        &format!("name=\"project\" value=\"{}\"", ann.project_id),
    ] {
        assert!(row_html.contains(shown), "{shown} missing from {row_html}");
    }
    let disconnect = format!("/account/agents/{}/disconnect", registered.id);

    // Refused, and nothing changed: cross-site; another account; a project it is not in;
    // a project that is no id.
    browser.origin = Some("http://evil.example".into());
    browser
        .post(&disconnect, &[("project", &ann.project_id)])
        .await
        .assert_error(403, "invalid origin");
    browser.origin = Some(srv.base.clone());
    let mut bob = Browser::new(&srv);
    bob.sign_in("bob").await;
    let refused = bob.post(&disconnect, &[("project", &ann.project_id)]).await;
    assert_eq!(refused.status, 404, "{}", refused.text);
    assert!(
        element(&refused.text, "error")
            .unwrap()
            .contains("not connected to your account")
    );
    for project in [bob_account.project_id.as_str(), "not-an-id", ""] {
        let refused = browser.post(&disconnect, &[("project", project)]).await;
        assert_eq!(refused.status, 404, "{project}: {}", refused.text);
        assert!(refused.text.contains(&format!("id=\"{row}\"")));
    }
    let (status, body) = refresh(&srv, &registered, &first_refresh).await;
    assert_eq!(status, 200, "{body}");
    let first_refresh = body["refresh_token"].as_str().unwrap().to_owned();

    // Disconnected: gone from the page, and neither grant refreshes any more.
    let done = browser
        .post(&disconnect, &[("project", &ann.project_id)])
        .await;
    assert_eq!(location(&done), AGENTS);
    let page = browser.get(AGENTS).await;
    assert!(!page.text.contains(&row));
    assert!(element(&page.text, "empty-title").is_some());
    for token in [&first_refresh, &second_refresh] {
        let (status, body) = refresh(&srv, &registered, token).await;
        assert_eq!(
            (
                status,
                body["error"].as_str(),
                body["error_description"].as_str()
            ),
            (
                400,
                Some("invalid_grant"),
                Some("this authorization was revoked")
            ),
            "{body}"
        );
    }
    // Once more: not connected, nothing to do.
    let again = browser
        .post(&disconnect, &[("project", &ann.project_id)])
        .await;
    assert_eq!(again.status, 404);
}

async fn the_agents_page_needs_an_activated_owner(b: Backend) {
    let Some((_db, srv, _ann)) = world(b).await else {
        return;
    };
    let mut browser = Browser::new(&srv);
    let r = browser.get(AGENTS).await;
    assert_eq!(
        location(&r),
        format!("/login?next={}", "%2Faccount%2Fagents")
    );
    let r = browser
        .post("/account/agents/qc_x/disconnect", &[("project", "")])
        .await;
    // A signed-out post learns nothing: to sign in.
    assert!(location(&r).starts_with("/login?next="));
}

on_both_backends!(
    agents_are_listed_and_disconnected,
    the_agents_page_needs_an_activated_owner,
);
