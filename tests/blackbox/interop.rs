//! Interoperability: a third-party RFC 8628 client, the `oauth2` crate, completes the
//! device login against the real server while a person approves in the dashboard.

use std::time::Duration;

use oauth2::basic::BasicClient;
use oauth2::{
    ClientId, DeviceAuthorizationUrl, HttpRequest, HttpResponse,
    StandardDeviceAuthorizationResponse, TokenResponse, TokenUrl,
};

use crate::dashboard::{Browser, DECISION, with_password};
use crate::harness::{Backend, on_both_backends};

/// The `oauth2` crate's HTTP client, over this workspace's reqwest (its own reqwest
/// feature would pull a second reqwest and TLS stack).
pub(crate) async fn send(
    http: &reqwest::Client,
    req: HttpRequest,
) -> Result<HttpResponse, reqwest::Error> {
    let (parts, body) = req.into_parts();
    let mut out = http.request(parts.method, parts.uri.to_string()).body(body);
    for (name, value) in &parts.headers {
        out = out.header(name, value);
    }
    let resp = out.send().await?;
    let mut builder = oauth2::http::Response::builder().status(resp.status());
    for (name, value) in resp.headers() {
        builder = builder.header(name, value);
    }
    let body = resp.bytes().await?.to_vec();
    Ok(builder.body(body).expect("response parts are valid"))
}

async fn oauth2_crate_completes_the_flow(b: Backend) {
    let Some((_db, srv)) = with_password(b).await else {
        return;
    };
    let client = BasicClient::new(ClientId::new("interop-test".into()))
        .set_device_authorization_url(
            DeviceAuthorizationUrl::new(format!(
                "{}/api/agent-login/device_authorization",
                srv.base
            ))
            .unwrap(),
        )
        .set_token_uri(TokenUrl::new(format!("{}/api/agent-login/token", srv.base)).unwrap());
    let http = reqwest::Client::new();
    let http_client = |req: HttpRequest| send(&http, req);

    let details: StandardDeviceAuthorizationResponse = client
        .exchange_device_code()
        .request_async(&http_client)
        .await
        .unwrap();
    assert_eq!(details.expires_in(), Duration::from_secs(600));
    assert_eq!(details.interval(), Duration::from_secs(3));
    let user_code = details.user_code().secret().clone();
    assert!(
        details
            .verification_uri_complete()
            .unwrap()
            .secret()
            .ends_with(&format!("?code={user_code}"))
    );

    // A person approves while the library polls (it sleeps the interval between polls).
    let approver = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut browser = Browser::new(&srv);
        assert_eq!(browser.sign_in("ann").await.status, 303);
        let r = browser
            .post(DECISION, &[("code", &user_code), ("decision", "approve")])
            .await;
        assert_eq!(r.status, 303, "{}", r.text);
    };
    let poller = client.exchange_device_access_token(&details).request_async(
        &http_client,
        tokio::time::sleep,
        Some(Duration::from_secs(60)),
    );
    let (token, ()) = tokio::join!(poller, approver);
    let token = token.unwrap();
    assert_eq!(token.token_type().as_ref(), "quire_key");
    assert_eq!(token.expires_in(), None);
    assert_eq!(
        token
            .scopes()
            .map(|s| s.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
        Some(vec!["master".to_owned()])
    );
    srv.get("/api/platform/v1/keys", token.access_token().secret())
        .await
        .assert_status(200);
}

async fn oauth2_crate_reports_denial(b: Backend) {
    let Some((_db, srv)) = with_password(b).await else {
        return;
    };
    let client = BasicClient::new(ClientId::new("interop-test".into()))
        .set_device_authorization_url(
            DeviceAuthorizationUrl::new(format!(
                "{}/api/agent-login/device_authorization",
                srv.base
            ))
            .unwrap(),
        )
        .set_token_uri(TokenUrl::new(format!("{}/api/agent-login/token", srv.base)).unwrap());
    let http = reqwest::Client::new();
    let http_client = |req: HttpRequest| send(&http, req);
    let details: StandardDeviceAuthorizationResponse = client
        .exchange_device_code()
        .request_async(&http_client)
        .await
        .unwrap();
    let user_code = details.user_code().secret().clone();
    let denier = async {
        let mut browser = Browser::new(&srv);
        assert_eq!(browser.sign_in("ann").await.status, 303);
        browser
            .post(DECISION, &[("code", &user_code), ("decision", "deny")])
            .await;
    };
    let poller = client.exchange_device_access_token(&details).request_async(
        &http_client,
        tokio::time::sleep,
        Some(Duration::from_secs(60)),
    );
    let (result, ()) = tokio::join!(poller, denier);
    match result.unwrap_err() {
        oauth2::RequestTokenError::ServerResponse(e) => {
            assert_eq!(e.error().as_ref(), "access_denied");
        }
        other => panic!("expected access_denied, got {other:?}"),
    }
}

on_both_backends!(oauth2_crate_completes_the_flow, oauth2_crate_reports_denial);
