//! The OAuth authorization code flow against the real server, driven by the third-party
//! `oauth2` crate: PKCE, consent in the dashboard, a bearer publishing a page and refused
//! on grants and key mint, refresh, revocation, code reuse, nothing secret in the log; the
//! metadata and JWKS documents field by field. The token endpoint's errors and the consent
//! decision's refusals are in `oauth_refusals.rs`. The helpers here (a server with an
//! admin, a registered client, consent as ann) serve `oauth_tokens.rs` and others too.

use std::time::Duration;

use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, HttpRequest, PkceCodeChallenge,
    RedirectUrl, RefreshToken, Scope, TokenResponse, TokenUrl,
};
use serde_json::{Value, json};

use crate::dashboard::{Browser, PASSWORD};
use crate::harness::{Account, Backend, Server, TestDb, on_both_backends};
use crate::interop::send;

pub(crate) const CLIENTS: &str = "/api/platform/v1/oauth-clients";
pub(crate) const REDIRECT: &str = "http://127.0.0.1:4711/callback";

pub(crate) struct Registered {
    pub(crate) id: String,
    pub(crate) secret: String,
}

/// The claims of an access token (its payload, unverified: the server verified it).
pub(crate) fn claims(token: &str) -> Value {
    use base64::Engine;
    let part = token.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// A form posted to the token endpoint: its status and JSON body.
pub(crate) async fn token_endpoint(srv: &Server, form: &[(&str, &str)]) -> (u16, Value) {
    let r = srv
        .http
        .post(format!("{}/api/oauth/token", srv.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string(form).unwrap())
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

pub(crate) async fn register(srv: &Server, admin: &str) -> Registered {
    let r = srv
        .post(
            CLIENTS,
            admin,
            json!({"name": "Notes", "client_type": "confidential", "redirect_uris": ["http://127.0.0.1/callback"]}),
        )
        .await;
    let c = &r.assert_status(201)["client"];
    Registered {
        id: c["client_id"].as_str().unwrap().to_owned(),
        secret: c["client_secret"].as_str().unwrap().to_owned(),
    }
}

/// A database with ann (a password, platform admin) and a server on it.
pub(crate) async fn world(b: Backend) -> Option<(TestDb, Server, Account)> {
    let db = TestDb::create(b).await?;
    let ann = db.create_account("ann", &["--password", PASSWORD, "--platform-admin"]);
    let srv = db.start();
    Some((db, srv, ann))
}

/// The value of the hidden field `name` in a form of `html`.
pub(crate) fn value_of(html: &str, name: &str) -> String {
    let at = html.find(&format!("name=\"{name}\" value=\"")).unwrap() + name.len() + 15;
    html[at..at + html[at..].find('"').unwrap()].to_owned()
}

/// Signs in as ann, approves (or denies) the request at `authorize_url`, and returns the
/// client's redirect with its query.
pub(crate) async fn consent(srv: &Server, authorize_url: &str, decision: &str) -> url::Url {
    let mut browser = Browser::new(srv);
    let path = authorize_url.strip_prefix(&srv.base).unwrap();
    // Signed out: to the sign-in page, and back.
    let r = browser.get_url(authorize_url).await;
    assert_eq!(r.status, 303);
    let r = browser
        .post(
            "/login",
            &[("login", "ann"), ("password", PASSWORD), ("next", path)],
        )
        .await;
    assert_eq!(r.headers["location"].to_str().unwrap(), path);
    let page = browser.get_url(authorize_url).await;
    assert_eq!(page.status, 200, "{}", page.text);
    // The pages scope is described when asked, or when no scope is (the default).
    let asks_pages = url::Url::parse(authorize_url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "scope")
        .is_none_or(|(_, v)| v.split(' ').any(|s| s == "page"));
    for shown in [
        "Notes",
        "127.0.0.1",
        "ann",
        "publish, change and delete pages",
        "never mint API keys",
    ] {
        if shown.starts_with("publish") && !asks_pages {
            continue;
        }
        assert!(
            page.text.contains(shown),
            "{shown} missing from the consent page"
        );
    }
    assert!(page.text.contains("id=\"local-warning\""));
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("http://127.0.0.1:4711"));
    let request = value_of(&page.text, "request");
    let r = browser
        .post(
            "/api/oauth/decision",
            &[("request", &request), ("decision", decision)],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.text);
    url::Url::parse(r.headers["location"].to_str().unwrap()).unwrap()
}

pub(crate) fn query(url: &url::Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

async fn oauth2_crate_completes_the_code_flow_and_its_bearer_publishes(b: Backend) {
    let Some((_db, srv, ann)) = world(b).await else {
        return;
    };
    let registered = register(&srv, &ann.key).await;
    let client = BasicClient::new(ClientId::new(registered.id.clone()))
        .set_client_secret(ClientSecret::new(registered.secret.clone()))
        .set_auth_uri(AuthUrl::new(format!("{}/oauth/authorize", srv.base)).unwrap())
        .set_token_uri(TokenUrl::new(format!("{}/api/oauth/token", srv.base)).unwrap())
        .set_redirect_uri(RedirectUrl::new(REDIRECT.into()).unwrap());
    let http = reqwest::Client::new();
    let http_client = |req: HttpRequest| send(&http, req);

    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (authorize_url, csrf) = client
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new("page".into()))
        .set_pkce_challenge(challenge)
        .url();
    let back = consent(&srv, authorize_url.as_str(), "approve").await;
    assert_eq!(back.origin().ascii_serialization(), "http://127.0.0.1:4711");
    assert_eq!(
        query(&back, "state").as_deref(),
        Some(csrf.secret().as_str())
    );
    let code = query(&back, "code").unwrap();

    let token = client
        .exchange_code(AuthorizationCode::new(code.clone()))
        .set_pkce_verifier(verifier)
        .request_async(&http_client)
        .await
        .unwrap();
    assert_eq!(token.token_type().as_ref(), "bearer");
    assert_eq!(token.expires_in(), Some(Duration::from_secs(900)));
    let access = token.access_token().secret().clone();

    // The bearer publishes in ann's default project, lists projects, and nothing more.
    let page =
        json!({"title": "From Notes", "files": [{"path": "index.html", "content": "<h1>hi</h1>"}]});
    let r = srv.post("/api/page/v1/pages", &access, page).await;
    assert_eq!(r.assert_status(201)["project"], "ann");
    srv.get("/api/platform/v1/projects", &access)
        .await
        .assert_status(200);
    srv.get("/api/platform/v1/keys", &access)
        .await
        .assert_error(403, "insufficient_scope");
    srv.post(
        "/api/platform/v1/keys",
        &access,
        json!({"name": "k", "apps": ["page"]}),
    )
    .await
    .assert_error(403, "insufficient_scope");
    let (_, app_key_id) = srv.mint(&ann.key, &["page"], None).await;
    srv.post(
        &format!("/api/platform/v1/projects/{}/grants", ann.project_id),
        &access,
        json!({"key_id": app_key_id, "level": "read"}),
    )
    .await
    .assert_error(403, "insufficient_scope");

    // The code is single use; its reuse revokes what it issued.
    let reuse = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(oauth2::PkceCodeVerifier::new("x".repeat(43)))
        .request_async(&http_client)
        .await;
    assert!(reuse.is_err());
    let refused = client
        .exchange_refresh_token(token.refresh_token().unwrap())
        .request_async(&http_client)
        .await;
    assert!(
        refused.is_err(),
        "a reused code must revoke its refresh token"
    );

    // A second authorization: refresh rotates, revocation ends it.
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (authorize_url, _) = client
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .url();
    let back = consent(&srv, authorize_url.as_str(), "approve").await;
    let token = client
        .exchange_code(AuthorizationCode::new(query(&back, "code").unwrap()))
        .set_pkce_verifier(verifier)
        .request_async(&http_client)
        .await
        .unwrap();
    let refreshed = client
        .exchange_refresh_token(token.refresh_token().unwrap())
        .request_async(&http_client)
        .await
        .unwrap();
    let next = refreshed.refresh_token().unwrap().clone();
    assert_ne!(next.secret(), token.refresh_token().unwrap().secret());
    // A refresh cannot widen the approved scopes; an access token cannot be revoked alone.
    let form_post = |path: &'static str, form: Vec<(&'static str, String)>| {
        let http = srv.http.clone();
        let url = format!("{}{path}", srv.base);
        let (id, secret) = (registered.id.clone(), registered.secret.clone());
        async move {
            let r = http
                .post(url)
                .basic_auth(id, Some(secret))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(serde_urlencoded::to_string(&form).unwrap())
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let (status, body) = form_post(
        "/api/oauth/token",
        vec![
            ("grant_type", "refresh_token".into()),
            ("refresh_token", next.secret().clone()),
            ("scope", "page base".into()),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_scope")),
        "{body}"
    );
    let (status, body) = form_post(
        "/api/oauth/revoke",
        vec![("token", refreshed.access_token().secret().clone())],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unsupported_token_type")),
        "{body}"
    );
    // The crate revokes over https only; the same RFC 7009 request by hand, Basic auth.
    let revoked = srv
        .http
        .post(format!("{}/api/oauth/revoke", srv.base))
        .basic_auth(&registered.id, Some(&registered.secret))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            serde_urlencoded::to_string([
                ("token", next.secret().as_str()),
                ("token_type_hint", "refresh_token"),
            ])
            .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status().as_u16(), 200);
    let after = client
        .exchange_refresh_token(&RefreshToken::new(next.secret().clone()))
        .request_async(&http_client)
        .await;
    assert!(after.is_err());

    // Deny: back to the client with access_denied and the state.
    let (challenge, _) = PkceCodeChallenge::new_random_sha256();
    let (authorize_url, csrf) = client
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .url();
    let back = consent(&srv, authorize_url.as_str(), "deny").await;
    assert_eq!(query(&back, "error").as_deref(), Some("access_denied"));
    assert_eq!(
        query(&back, "state").as_deref(),
        Some(csrf.secret().as_str())
    );
}

async fn metadata_and_keys_are_published(b: Backend) {
    let Some((_db, srv, _admin)) = world(b).await else {
        return;
    };
    let get = |path: &'static str| {
        let http = srv.http.clone();
        let url = format!("{}{path}", srv.base);
        async move {
            http.get(url)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let m = get("/.well-known/oauth-authorization-server").await;
    let base = &srv.base;
    assert_eq!(m["issuer"], base.as_str());
    assert_eq!(
        m["authorization_endpoint"],
        format!("{base}/oauth/authorize")
    );
    assert_eq!(m["token_endpoint"], format!("{base}/api/oauth/token"));
    assert_eq!(m["revocation_endpoint"], format!("{base}/api/oauth/revoke"));
    assert_eq!(m["jwks_uri"], format!("{base}/.well-known/jwks.json"));
    assert_eq!(m["response_types_supported"], json!(["code"]));
    assert_eq!(
        m["grant_types_supported"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(m["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(
        m["token_endpoint_auth_methods_supported"],
        json!(["client_secret_basic", "client_secret_post", "none"])
    );
    assert_eq!(
        m["scopes_supported"],
        json!([
            "page",
            "serve",
            "link",
            "base",
            "page:read",
            "offline_access"
        ])
    );

    let jwks = get("/.well-known/jwks.json").await;
    let keys = jwks["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    let k = &keys[0];
    assert_eq!(
        (k["kty"].as_str(), k["crv"].as_str()),
        (Some("OKP"), Some("Ed25519"))
    );
    assert_eq!(
        (k["alg"].as_str(), k["use"].as_str()),
        (Some("EdDSA"), Some("sig"))
    );
    assert_eq!(k["x"].as_str().unwrap().len(), 43);
    assert_eq!(k["kid"].as_str().unwrap().len(), 22);
    // The same key on every read: it is stored, not made per request.
    assert_eq!(get("/.well-known/jwks.json").await, jwks);
}

on_both_backends!(
    oauth2_crate_completes_the_code_flow_and_its_bearer_publishes,
    metadata_and_keys_are_published,
);
