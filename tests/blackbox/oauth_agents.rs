//! OAuth for agents against the real server, on both databases: dynamic registration
//! (RFC 7591) with its refusals, rate limit and off switch; resource indicators (RFC 8707)
//! binding a token's audience, with `invalid_target` at both endpoints; `iss` on every
//! authorization redirect (RFC 9207); the read-only `page:read` scope refused on the REST
//! API's writes; the discovery documents (RFC 8414 additions, RFC 9728 for `/mcp`).

use serde_json::{Value, json};

use crate::dashboard::{Browser, PASSWORD};
use crate::harness::{Backend, Server, TestDb, on_both_backends};
use crate::oauth_flow::{REDIRECT, claims, consent, query, register, world};

const REGISTER: &str = "/api/oauth/register";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const MISMATCH: &str = "token issuer or audience mismatch";

async fn register_dynamic(srv: &Server, metadata: &Value) -> crate::harness::Reply {
    srv.call("POST", REGISTER, None, Some(&metadata.to_string()))
        .await
}

fn authorize_url(srv: &Server, client_id: &str, scope: &str, resource: Option<&str>) -> String {
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
        "{}/oauth/authorize?{}",
        srv.base,
        serde_urlencoded::to_string(pairs).unwrap()
    )
}

/// A token request by hand (form fields as given), with its status and JSON body.
async fn token_request(srv: &Server, form: &[(&str, &str)]) -> (u16, Value, String) {
    let r = srv
        .http
        .post(format!("{}/api/oauth/token", srv.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string(form).unwrap())
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let cache = r.headers()["cache-control"].to_str().unwrap().to_owned();
    (status, r.json().await.unwrap(), cache)
}

#[track_caller]
fn assert_oauth_error(status: u16, body: &Value, want_status: u16, code: &str) {
    assert_eq!(status, want_status, "{body}");
    assert_eq!(body["error"], code, "{body}");
    assert!(
        body["error_description"]
            .as_str()
            .is_some_and(|d| !d.is_empty()),
        "{body}"
    );
}

async fn an_agent_registers_itself_and_gets_a_token_for_the_mcp_resource(b: Backend) {
    let Some((_db, srv, _ann)) = world(b).await else {
        return;
    };
    let r = register_dynamic(
        &srv,
        &json!({
            "client_name": "Notes",
            "redirect_uris": [REDIRECT, "cursor://anysphere.cursor-mcp/oauth/callback", "http://localhost:8787/callback"],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "logo_uri": "https://ignored.example/logo.png",
            "software_statement": "ignored"
        }),
    )
    .await;
    let c = r.assert_status(201).clone();
    let id = c["client_id"].as_str().unwrap().to_owned();
    assert!(c.get("client_secret").is_none(), "{c}");
    assert_eq!(c["token_endpoint_auth_method"], "none");
    assert_eq!(c["client_name"], "Notes");
    assert_eq!(c["redirect_uris"].as_array().unwrap().len(), 3);
    assert!(c["client_id_issued_at"].as_i64().unwrap() > 1_700_000_000);
    let uri = format!("{}{REGISTER}/{id}", srv.base);
    assert_eq!(c["registration_client_uri"], uri.as_str());
    assert_eq!(r.headers["cache-control"], "no-store");
    assert_eq!(r.headers["location"].to_str().unwrap(), uri);
    let read = srv
        .call("GET", &format!("{REGISTER}/{id}"), None, None)
        .await;
    assert_eq!(read.assert_status(200)["client_id"], id.as_str());

    // No resource named: a dynamic client's token is for the agent endpoint.
    let back = consent(&srv, &authorize_url(&srv, &id, "page", None), "approve").await;
    assert_eq!(query(&back, "iss").as_deref(), Some(srv.base.as_str()));
    let code = query(&back, "code").unwrap();
    let mcp = format!("{}/mcp", srv.base);
    let (status, body, cache) = token_request(
        &srv,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("client_id", &id),
            ("resource", &mcp),
        ],
    )
    .await;
    assert_eq!((status, cache.as_str()), (200, "no-store"), "{body}");
    let token = body["access_token"].as_str().unwrap();
    assert_eq!(claims(token)["aud"], mcp.as_str());
    assert_eq!(claims(token)["client_id"], id.as_str());

    // The REST API refuses a token minted for the agent endpoint.
    let r = srv.get("/api/page/v1/pages", token).await;
    r.assert_error(401, "invalid_token");
    assert_eq!(r.body["error_description"], MISMATCH);
    assert_eq!(
        r.headers["www-authenticate"].to_str().unwrap(),
        format!(r#"Bearer realm="quire", error="invalid_token", error_description="{MISMATCH}""#)
    );

    // A refresh keeps the resource; naming the API instead is invalid_target.
    let refresh = body["refresh_token"].as_str().unwrap();
    let api = format!("{}/api", srv.base);
    let (status, body, _) = token_request(
        &srv,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", &id),
            ("resource", &api),
        ],
    )
    .await;
    assert_oauth_error(status, &body, 400, "invalid_target");
    let (status, body, _) = token_request(
        &srv,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", &id),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        claims(body["access_token"].as_str().unwrap())["aud"],
        mcp.as_str()
    );
}

async fn a_foreign_resource_is_invalid_target_at_both_endpoints_and_errors_carry_iss(b: Backend) {
    let Some((_db, srv, ann)) = world(b).await else {
        return;
    };
    let registered = register(&srv, &ann.key).await;
    // At /authorize: back to the client, with state and iss.
    let url = authorize_url(
        &srv,
        &registered.id,
        "page",
        Some("https://elsewhere.example/mcp"),
    );
    let mut browser = Browser::new(&srv);
    let path = url.strip_prefix(&srv.base).unwrap().to_owned();
    assert_eq!(browser.get_url(&url).await.status, 303);
    browser
        .post(
            "/login",
            &[("login", "ann"), ("password", PASSWORD), ("next", &path)],
        )
        .await;
    let r = browser.get_url(&url).await;
    assert_eq!(r.status, 303, "{}", r.text);
    let back = url::Url::parse(r.headers["location"].to_str().unwrap()).unwrap();
    assert!(back.as_str().starts_with(REDIRECT), "{back}");
    assert_eq!(query(&back, "error").as_deref(), Some("invalid_target"));
    assert!(query(&back, "error_description").is_some());
    assert_eq!(query(&back, "state").as_deref(), Some("st-1"));
    assert_eq!(query(&back, "iss").as_deref(), Some(srv.base.as_str()));

    // An admin client naming no resource gets the API; the REST API takes its token.
    let back = consent(
        &srv,
        &authorize_url(&srv, &registered.id, "page", None),
        "approve",
    )
    .await;
    assert_eq!(query(&back, "iss").as_deref(), Some(srv.base.as_str()));
    let code = query(&back, "code").unwrap();
    let base_form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
        ("client_id", registered.id.as_str()),
        ("client_secret", registered.secret.as_str()),
    ];
    // At /token: a 400, and the code stays unspent.
    let mut foreign = base_form.to_vec();
    foreign.push(("resource", "https://elsewhere.example/api"));
    let (status, body, cache) = token_request(&srv, &foreign).await;
    assert_oauth_error(status, &body, 400, "invalid_target");
    assert_eq!(cache, "no-store");
    let (status, body, _) = token_request(&srv, &base_form).await;
    assert_eq!(status, 200, "{body}");
    let token = body["access_token"].as_str().unwrap();
    assert_eq!(claims(token)["aud"], format!("{}/api", srv.base).as_str());
    srv.get("/api/page/v1/pages", token)
        .await
        .assert_status(200);

    // Denial carries iss too.
    let back = consent(
        &srv,
        &authorize_url(&srv, &registered.id, "page", None),
        "deny",
    )
    .await;
    assert_eq!(query(&back, "error").as_deref(), Some("access_denied"));
    assert_eq!(query(&back, "iss").as_deref(), Some(srv.base.as_str()));
}

async fn a_read_only_token_reads_pages_and_writes_none(b: Backend) {
    let Some((_db, srv, ann)) = world(b).await else {
        return;
    };
    let registered = register(&srv, &ann.key).await;
    let back = consent(
        &srv,
        &authorize_url(&srv, &registered.id, "page:read claudeai", None),
        "approve",
    )
    .await;
    let code = query(&back, "code").unwrap();
    let (status, body, _) = token_request(
        &srv,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("client_id", &registered.id),
            ("client_secret", &registered.secret),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["scope"], "page:read");
    let token = body["access_token"].as_str().unwrap();
    srv.get("/api/page/v1/pages", token)
        .await
        .assert_status(200);
    let r = srv
        .post(
            "/api/page/v1/pages",
            token,
            json!({"slug": "nope", "files": [{"path": "index.html", "content": "<p>x</p>"}]}),
        )
        .await;
    r.assert_error(403, "insufficient_scope");
    assert_eq!(
        r.body["message"],
        "this token may only read (page:read); changing anything needs the page scope"
    );
    let r = srv.delete("/api/page/v1/pages/whatever", token, None).await;
    r.assert_error(403, "insufficient_scope");
}

async fn registration_refuses_bad_metadata_with_rfc_7591_errors(b: Backend) {
    let Some((db, srv, _ann)) = world(b).await else {
        return;
    };
    let cases = [
        (json!({"client_name": "x"}), "invalid_redirect_uri"),
        (
            json!({"redirect_uris": ["https://ok.example/cb", "javascript:alert(1)"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["http://app.example/cb"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["https://ok.example/cb"], "token_endpoint_auth_method": "private_key_jwt"}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["https://ok.example/cb"], "grant_types": ["implicit"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": "https://ok.example/cb"}),
            "invalid_client_metadata",
        ),
        (json!(["not", "an", "object"]), "invalid_client_metadata"),
    ];
    for (metadata, code) in cases {
        let r = register_dynamic(&srv, &metadata).await;
        assert_eq!(
            (r.status, r.body["error"].as_str()),
            (400, Some(code)),
            "{metadata}: {}",
            r.text
        );
        assert!(
            r.body["error_description"]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "{}",
            r.text
        );
    }
    let r = srv.call("POST", REGISTER, None, Some("{not json")).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["error"], "invalid_client_metadata");
    // Nothing was stored.
    use quire_oauth::ClientStore;
    assert!(db.store().live_clients().await.unwrap().is_empty());

    // A confidential client gets its secret once, and it works at the token endpoint.
    let r = register_dynamic(
        &srv,
        &json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post"}),
    )
    .await;
    let c = r.assert_status(201).clone();
    assert_eq!(c["client_secret_expires_at"], 0);
    assert_eq!(c["client_name"], "Unnamed agent");
    let secret = c["client_secret"].as_str().unwrap();
    let id = c["client_id"].as_str().unwrap();
    let read = srv
        .call("GET", &format!("{REGISTER}/{id}"), None, None)
        .await;
    assert!(read.assert_status(200).get("client_secret").is_none());
    assert!(!read.text.contains(secret));
    let stored = db.store().live_clients().await.unwrap();
    assert_eq!(stored[0].secret_hash.as_deref().map(str::len), Some(64));
    srv.call("GET", &format!("{REGISTER}/qc_nobody"), None, None)
        .await
        .assert_error(404, "not_found");
}

async fn registration_is_rate_limited_per_address(b: Backend) {
    let Some((_db, srv, _ann)) = world(b).await else {
        return;
    };
    let http = crate::harness::client()
        .local_address("127.0.0.9".parse::<std::net::IpAddr>().ok())
        .build()
        .unwrap();
    let metadata = json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"});
    let post = || {
        http.post(format!("{}{REGISTER}", srv.base))
            .header("content-type", "application/json")
            .body(metadata.to_string())
            .send()
    };
    for _ in 0..20 {
        assert_eq!(post().await.unwrap().status().as_u16(), 201);
    }
    let r = post().await.unwrap();
    assert_eq!(r.status().as_u16(), 429);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"], "rate_limited");
    assert!(body["error_description"].as_str().is_some(), "{body}");
    // Another address is not held back.
    register_dynamic(&srv, &metadata).await.assert_status(201);
}

async fn the_operator_turns_registration_off(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let srv = db.start_with(&[("QUIRE_OAUTH_DYNAMIC_REGISTRATION", "false")]);
    let r = register_dynamic(&srv, &json!({"redirect_uris": [REDIRECT]})).await;
    r.assert_error(403, "registration_disabled");
    assert!(r.body["error_description"].is_string(), "{}", r.text);
    let m = srv
        .call("GET", "/.well-known/oauth-authorization-server", None, None)
        .await;
    assert!(m.assert_status(200).get("registration_endpoint").is_none());
}

async fn the_discovery_documents_describe_the_agent_endpoint(b: Backend) {
    let Some((_db, srv, _ann)) = world(b).await else {
        return;
    };
    let base = srv.base.as_str();
    let m = srv
        .call("GET", "/.well-known/oauth-authorization-server", None, None)
        .await;
    let doc = m.assert_status(200);
    assert_eq!(
        doc["registration_endpoint"],
        format!("{base}/api/oauth/register").as_str()
    );
    assert_eq!(doc["authorization_response_iss_parameter_supported"], true);
    assert_eq!(
        doc["token_endpoint_auth_methods_supported"],
        json!(["client_secret_basic", "client_secret_post", "none"])
    );
    assert_eq!(
        doc["scopes_supported"],
        json!([
            "page",
            "serve",
            "link",
            "base",
            "page:read",
            "offline_access"
        ])
    );
    assert_eq!(m.headers["access-control-allow-origin"], "*");

    let r = srv
        .call(
            "GET",
            "/.well-known/oauth-protected-resource/mcp",
            None,
            None,
        )
        .await;
    assert_eq!(
        r.assert_status(200),
        &json!({
            "resource": format!("{base}/mcp"),
            "authorization_servers": [base],
            "scopes_supported": ["page", "page:read"],
            "bearer_methods_supported": ["header"],
            "resource_name": "Quire",
            "resource_documentation": format!("{base}/docs/agents"),
        })
    );
    assert_eq!(r.headers["access-control-allow-origin"], "*");
    // The documentation it names is served: the guide to connecting agents.
    let guide = srv
        .http
        .get(format!("{base}/docs/agents"))
        .send()
        .await
        .unwrap();
    assert_eq!(guide.status(), 200);
    assert!(guide.text().await.unwrap().contains("/mcp"));
    // No root document: one naming {base} would send clients after tokens /mcp refuses.
    let root = srv
        .call("GET", "/.well-known/oauth-protected-resource", None, None)
        .await;
    assert_eq!(root.status, 404, "{}", root.text);
}

on_both_backends!(
    an_agent_registers_itself_and_gets_a_token_for_the_mcp_resource,
    a_foreign_resource_is_invalid_target_at_both_endpoints_and_errors_carry_iss,
    a_read_only_token_reads_pages_and_writes_none,
    registration_refuses_bad_metadata_with_rfc_7591_errors,
    registration_is_rate_limited_per_address,
    the_operator_turns_registration_off,
    the_discovery_documents_describe_the_agent_endpoint,
);
