//! The refusals of the code flow's two posts against the real server, on both databases:
//! the token endpoint's RFC 6749 errors (status, `error`, `no-store`), and the consent
//! decision refusing cross-site, signed-out, second-factor-owing and malformed posts without
//! deciding anything. The flow that succeeds is in `oauth_flow.rs`.

use serde_json::Value;

use quire_accounts::TotpSecret;
use time::OffsetDateTime;

use crate::dashboard::{Browser, element};
use crate::harness::{Backend, on_both_backends};
use crate::oauth_flow::{REDIRECT, register, value_of, world};

const DECISION: &str = "/api/oauth/decision";

async fn token_endpoint_errors_follow_rfc_6749(b: Backend) {
    let Some((_db, srv, ann)) = world(b).await else {
        return;
    };
    let registered = register(&srv, &ann.key).await;
    let post = |form: Vec<(&'static str, String)>| {
        let http = srv.http.clone();
        let url = format!("{}/api/oauth/token", srv.base);
        async move {
            let r = http
                .post(url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(serde_urlencoded::to_string(&form).unwrap())
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let store = r.headers()["cache-control"].to_str().unwrap().to_owned();
            let body: Value = r.json().await.unwrap();
            (status, store, body)
        }
    };
    let id = registered.id.clone();
    let cases = [
        (
            vec![("grant_type", "password".into())],
            400,
            "unsupported_grant_type",
        ),
        (
            vec![("grant_type", "authorization_code".into())],
            400,
            "invalid_request",
        ),
        (
            vec![
                ("grant_type", "authorization_code".into()),
                ("client_id", id.clone()),
                ("client_secret", "wrong".into()),
            ],
            401,
            "invalid_client",
        ),
        (
            vec![
                ("grant_type", "authorization_code".into()),
                ("client_id", id.clone()),
                ("client_secret", registered.secret.clone()),
                ("code", "nope".into()),
                ("redirect_uri", REDIRECT.into()),
                ("code_verifier", "v".repeat(43)),
            ],
            400,
            "invalid_grant",
        ),
    ];
    for (form, status, error) in cases {
        let (got, cache, body) = post(form).await;
        assert_eq!(
            (got, body["error"].as_str()),
            (status, Some(error)),
            "{body}"
        );
        assert!(body["error_description"].is_string());
        assert_eq!(cache, "no-store");
    }
}

/// The decision endpoint refuses as the agent-login decision does, and a refused post
/// decides nothing.
async fn the_decision_refuses_cross_site_signed_out_unfinished_and_malformed_posts(b: Backend) {
    let Some((_db, srv, ann)) = world(b).await else {
        return;
    };
    let registered = register(&srv, &ann.key).await;
    let authorize = format!(
        "/oauth/authorize?response_type=code&client_id={}&redirect_uri={}&state=s1&code_challenge={}&code_challenge_method=S256",
        registered.id,
        "http%3A%2F%2F127.0.0.1%3A4711%2Fcallback",
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    );
    let mut browser = Browser::new(&srv);
    assert_eq!(browser.sign_in("ann").await.status, 303);
    let page = browser.get(&authorize).await;
    let request = value_of(&page.text, "request");
    let approve = [("request", request.as_str()), ("decision", "approve")];

    browser.origin = Some("http://evil.example".into());
    browser
        .post(DECISION, &approve)
        .await
        .assert_error(403, "invalid origin");
    browser.origin = Some(srv.base.clone());
    Browser::new(&srv)
        .post(DECISION, &approve)
        .await
        .assert_error(401, "not signed in");
    browser
        .post(
            DECISION,
            &[("request", request.as_str()), ("decision", "maybe")],
        )
        .await
        .assert_error(400, "invalid request");
    browser
        .post(DECISION, &[("decision", "approve")])
        .await
        .assert_error(400, "invalid request");
    browser
        .post(
            DECISION,
            &[("request", "not-a-request"), ("decision", "approve")],
        )
        .await
        .assert_error(400, "invalid request");

    // A session that still owes its second factor.
    let r = browser.get("/account/security").await;
    let secret = TotpSecret::parse(&element(&r.text, "totp-secret").unwrap()).unwrap();
    let code = secret.code_at(OffsetDateTime::now_utc());
    let enrolled = browser
        .post(
            "/account/security",
            &[("secret", secret.expose()), ("code", &code)],
        )
        .await;
    assert_eq!(enrolled.status, 200, "{}", enrolled.text);
    let mut halfway = Browser::new(&srv);
    assert_eq!(halfway.sign_in("ann").await.status, 303);
    halfway
        .post(DECISION, &approve)
        .await
        .assert_error(403, "mfa_required");

    // None of those decided it: the request still approves, once.
    let r = browser.post(DECISION, &approve).await;
    assert_eq!(r.status, 303, "{}", r.text);
    assert!(r.headers["location"].to_str().unwrap().contains("code="));
    browser
        .post(DECISION, &approve)
        .await
        .assert_error(400, "invalid request");
}

on_both_backends!(
    token_endpoint_errors_follow_rfc_6749,
    the_decision_refuses_cross_site_signed_out_unfinished_and_malformed_posts,
);
