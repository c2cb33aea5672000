//! Every verification failure of a bearer token over HTTP against the real server, each
//! with its exact `error_description` in the body and in `WWW-Authenticate`; tokens of
//! other kinds are signed with the server's own key, read from its database and opened with
//! its key file. A client
//! deleted on one server is refused by a second within 5 s, and an unreadable registry
//! fails closed.

use std::time::{Duration, Instant};

use jsonwebtoken::{EncodingKey, Header};
use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, HttpRequest, PkceCodeChallenge,
    RedirectUrl, Scope, TokenResponse, TokenUrl,
};
use quire_oauth::SigningKeyStore;
use quire_oauth::access_token::AccessClaims;

use crate::harness::{Backend, Server, TestDb, on_both_backends};
use crate::interop::send;
use crate::oauth_flow::{CLIENTS, REDIRECT, Registered, consent, query, register, world};

/// Signs `claims` with the server's current key, read from its database.
async fn forge(db: &TestDb, header: &Header, claims: &AccessClaims) -> String {
    // The private key is sealed at rest: forging takes the server's key file too.
    let keys = db.store().signing_keys().await.unwrap();
    let key = keys.last().unwrap();
    let mut header = header.clone();
    header.kid = Some(key.kid.clone());
    jsonwebtoken::encode(
        &header,
        claims,
        &EncodingKey::from_ed_der(&key.private_pkcs8),
    )
    .unwrap()
}

async fn a_token(srv: &Server, registered: &Registered) -> String {
    a_token_for(srv, registered, &[]).await
}

/// A token of the code flow with `scopes` asked (none: the default).
async fn a_token_for(srv: &Server, registered: &Registered, scopes: &[&str]) -> String {
    let client = BasicClient::new(ClientId::new(registered.id.clone()))
        .set_client_secret(ClientSecret::new(registered.secret.clone()))
        .set_auth_uri(AuthUrl::new(format!("{}/oauth/authorize", srv.base)).unwrap())
        .set_token_uri(TokenUrl::new(format!("{}/api/oauth/token", srv.base)).unwrap())
        .set_redirect_uri(RedirectUrl::new(REDIRECT.into()).unwrap());
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, _) = client
        .authorize_url(CsrfToken::new_random)
        .add_scopes(scopes.iter().map(|s| Scope::new((*s).to_owned())))
        .set_pkce_challenge(challenge)
        .url();
    let back = consent(srv, url.as_str(), "approve").await;
    let http = reqwest::Client::new();
    let http_client = |req: HttpRequest| send(&http, req);
    client
        .exchange_code(AuthorizationCode::new(query(&back, "code").unwrap()))
        .set_pkce_verifier(verifier)
        .request_async(&http_client)
        .await
        .unwrap()
        .access_token()
        .secret()
        .clone()
}

async fn refused_with(srv: &Server, token: &str, description: &str) {
    let r = srv.get("/api/platform/v1/projects", token).await;
    r.assert_error(401, "invalid_token");
    assert_eq!(r.body["error_description"], description, "{}", r.text);
    let challenge = r.headers["www-authenticate"].to_str().unwrap();
    assert_eq!(
        challenge,
        format!(
            r#"Bearer realm="quire", error="invalid_token", error_description="{description}""#
        )
    );
}

/// The token with one signature character changed (in the middle: the last character of
/// a base64url signature carries padding bits, and changing those is malformed instead).
fn tamper(token: &str) -> String {
    let mut chars: Vec<char> = token.chars().collect();
    let at = chars.len() - 10;
    chars[at] = if chars[at] == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}

fn payload(token: &str) -> AccessClaims {
    use base64::Engine;
    let part = token.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

async fn every_verification_failure_answers_its_exact_description(b: Backend) {
    let Some((db, srv, ann)) = world(b).await else {
        return;
    };
    let admin = ann.key;
    let registered = register(&srv, &admin).await;
    let good = a_token(&srv, &registered).await;
    srv.get("/api/platform/v1/projects", &good)
        .await
        .assert_status(200);
    let header = jsonwebtoken::decode_header(&good).unwrap();
    assert_eq!(header.typ.as_deref(), Some("at+jwt"));
    let claims = payload(&good);
    assert_eq!(claims.iss, srv.base);
    assert_eq!(claims.aud, format!("{}/api", srv.base));
    assert_eq!(claims.client_id, registered.id);
    assert_eq!(claims.scope, "page");
    assert_eq!(claims.exp - claims.iat, 900);

    refused_with(
        &srv,
        "eyJhbGciOiJub25lIn0.e30.c2ln",
        "malformed bearer token",
    )
    .await;
    refused_with(&srv, &tamper(&good), "unknown signing key").await;
    let not_access = Header {
        typ: Some("JWT".into()),
        ..header.clone()
    };
    refused_with(
        &srv,
        &forge(&db, &not_access, &claims).await,
        "not an OAuth-obtained token",
    )
    .await;
    let elsewhere = AccessClaims {
        iss: "https://elsewhere.example".into(),
        ..claims.clone()
    };
    refused_with(
        &srv,
        &forge(&db, &header, &elsewhere).await,
        "token issuer or audience mismatch",
    )
    .await;
    let old = AccessClaims {
        iat: claims.iat - 2000,
        exp: claims.iat - 1000,
        ..claims.clone()
    };
    refused_with(&srv, &forge(&db, &header, &old).await, "token expired").await;

    // A client deleted on one server is refused on another within 5 s.
    // Replicas share the public base URL, the tokens' issuer.
    let second = db.start_with(&[("QUIRE_BASE_URL", &srv.base)]);
    second
        .get("/api/platform/v1/projects", &good)
        .await
        .assert_status(200);
    srv.delete(&format!("{CLIENTS}/{}", registered.id), &admin, None)
        .await
        .assert_status(204);
    let deleted = Instant::now();
    loop {
        let r = second.get("/api/platform/v1/projects", &good).await;
        if r.status == 401 {
            break;
        }
        assert!(
            deleted.elapsed() < Duration::from_secs(5),
            "still accepted after 5 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    refused_with(&second, &good, "unknown or deleted client").await;

    // The registry unreadable (its table gone) while the keys are held: fail closed.
    if let Some(pg) = &db.pg {
        let third = register(&srv, &admin).await;
        let token = a_token(&srv, &third).await;
        let (client, conn) = tokio_postgres::connect(&pg.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
            .batch_execute("ALTER TABLE oauth_clients RENAME TO oauth_clients_away")
            .await
            .unwrap();
        let fresh = db.start_with(&[("QUIRE_BASE_URL", &srv.base)]);
        // The fresh server reads keys first (that works), then the registry (that fails).
        let started = Instant::now();
        loop {
            let r = fresh.get("/api/platform/v1/projects", &token).await;
            if r.body["error_description"] == "client registry unavailable"
                || started.elapsed() > Duration::from_secs(6)
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        refused_with(&fresh, &token, "client registry unavailable").await;
        client
            .batch_execute("ALTER TABLE oauth_clients_away RENAME TO oauth_clients")
            .await
            .unwrap();
    }
}

on_both_backends!(
    every_verification_failure_answers_its_exact_description,
    tokens_open_guarded_pages_only_with_the_serve_or_page_scope,
);

/// On the pages origin a bearer token opens a private or password page of its project only
/// with a scope that serves or publishes pages; without one, the private page answers its
/// sign-in page (403) and the password page its form (401).
async fn tokens_open_guarded_pages_only_with_the_serve_or_page_scope(b: Backend) {
    use crate::serving::{publish_guarded_pair, visit_with};

    let Some((_db, srv, ann)) = world(b).await else {
        return;
    };
    let registered = register(&srv, &ann.key).await;
    publish_guarded_pair(&srv, &ann.key).await;
    for (scopes, private, password) in [
        (&["link"][..], 403, 401),
        (&["link", "base"][..], 403, 401),
        (&["serve"][..], 200, 200),
        (&["page"][..], 200, 200),
    ] {
        let token = a_token_for(&srv, &registered, scopes).await;
        let auth = format!("Bearer {token}");
        let r = visit_with(&srv, "/ann/mine/", &[("authorization", &auth)]).await;
        assert_eq!(r.status, private, "{scopes:?}: {}", r.text);
        let r = visit_with(&srv, "/ann/secret/", &[("authorization", &auth)]).await;
        assert_eq!(r.status, password, "{scopes:?}: {}", r.text);
    }
}
