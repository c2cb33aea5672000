//! RFC 8707 resource indicators and the read-only scope, through the consent and token use
//! cases: the grant's resource becomes the token's audience, and the token works only there.

use crate::common;

use common::{flow, refused};
use quire_kernel::{App, Resource};
use quire_oauth::{AuthorizeRequest, Registration, TokenError, TokenRequest};

const MISMATCH: &str = "token issuer or audience mismatch";

fn aud_of(token: &str) -> String {
    use base64::Engine;
    let payload = token.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    let claims: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    claims["aud"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_mcp_grant_mints_tokens_only_the_agent_endpoint_accepts() {
    let f = flow().await;
    let base = f.w.services.oauth_consent.issuer().to_owned();
    let request = AuthorizeRequest {
        resource: Some(format!("{base}/mcp/?project=x")),
        ..f.request()
    };
    let code = f.code_for(&request).await;
    let tokens = f
        .exchange_at(&code, Some(&format!("{base}/mcp")))
        .await
        .unwrap();
    assert_eq!(aud_of(&tokens.access_token), format!("{base}/mcp"));
    assert!(
        f.authenticate_at(&tokens.access_token, Resource::Mcp)
            .await
            .is_ok()
    );
    assert_eq!(
        f.authenticate(&tokens.access_token).await.unwrap_err(),
        refused(MISMATCH)
    );

    // A refresh keeps the resource; naming another one is invalid_target.
    let api = TokenRequest {
        resource: Some(format!("{base}/api")),
        ..TokenRequest::default()
    };
    assert_eq!(
        f.refresh_with(tokens.refresh_token.expose(), api)
            .await
            .unwrap_err(),
        TokenError::InvalidTarget("resource differs from the one the account holder authorized")
    );
    let next = f.refresh(tokens.refresh_token.expose()).await.unwrap();
    assert_eq!(aud_of(&next.access_token), format!("{base}/mcp"));
}

#[tokio::test]
async fn an_api_grant_is_refused_at_the_agent_endpoint_and_a_foreign_resource_at_the_token_endpoint()
 {
    let f = flow().await;
    let base = f.w.services.oauth_consent.issuer().to_owned();
    // An admin-registered client that names no resource gets the API.
    let code = f.code().await;
    let tokens = f.exchange(&code).await.unwrap();
    assert_eq!(aud_of(&tokens.access_token), format!("{base}/api"));
    assert!(f.authenticate(&tokens.access_token).await.is_ok());
    assert_eq!(
        f.authenticate_at(&tokens.access_token, Resource::Mcp)
            .await
            .unwrap_err(),
        refused(MISMATCH)
    );

    let code = f.code().await;
    let refusal = f
        .exchange_at(&code, Some("https://other.example/mcp"))
        .await
        .unwrap_err();
    assert_eq!(refusal.code(), "invalid_target");
    let wrong = f.exchange_at(&code, Some(&format!("{base}/mcp"))).await;
    assert_eq!(
        wrong.unwrap_err(),
        TokenError::InvalidTarget("resource differs from the one the account holder authorized")
    );
    // The refused requests spent nothing: the right one still redeems the code.
    assert!(
        f.exchange_at(&code, Some(&format!("{base}/api/")))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_dynamic_client_naming_no_resource_gets_the_agent_endpoint() {
    let mut f = flow().await;
    f.client.registration = Registration::Dynamic;
    f.w.store.alter(|s| {
        for c in &mut s.oauth_clients {
            c.registration = Registration::Dynamic;
        }
    });
    let base = f.w.services.oauth_consent.issuer().to_owned();
    let code = f.code().await;
    let tokens = f.exchange(&code).await.unwrap();
    assert_eq!(aud_of(&tokens.access_token), format!("{base}/mcp"));
}

#[tokio::test]
async fn page_read_reads_without_writing_and_page_covers_it() {
    let f = flow().await;
    let read_only = AuthorizeRequest {
        scope: Some("page:read".into()),
        ..f.request()
    };
    let code = f.code_for(&read_only).await;
    let tokens = f.exchange(&code).await.unwrap();
    assert_eq!(tokens.scope, "page:read");
    let principal = f.authenticate(&tokens.access_token).await.unwrap();
    assert!(principal.has_app(App::Page) && !principal.can_write(App::Page));
    // A refresh cannot widen page:read to page.
    let widen = TokenRequest {
        scope: Some("page".into()),
        ..TokenRequest::default()
    };
    assert_eq!(
        f.refresh_with(tokens.refresh_token.expose(), widen)
            .await
            .unwrap_err()
            .code(),
        "invalid_scope"
    );

    // A page grant may narrow to page:read on refresh.
    let code = f.code().await;
    let tokens = f.exchange(&code).await.unwrap();
    let narrow = TokenRequest {
        scope: Some("page:read".into()),
        ..TokenRequest::default()
    };
    let narrowed = f
        .refresh_with(tokens.refresh_token.expose(), narrow)
        .await
        .unwrap();
    assert_eq!(narrowed.scope, "page:read");
    let principal = f.authenticate(&narrowed.access_token).await.unwrap();
    assert!(!principal.can_write(App::Page));
}

#[tokio::test]
async fn unknown_scopes_are_dropped_not_refused() {
    let f = flow().await;
    let consent = &f.w.services.oauth_consent;
    let ann = f.w.account("ann").account.id;
    // Unknown scopes are dropped, not refused (clients send words of their own).
    let odd_scope = AuthorizeRequest {
        scope: Some("claudeai page:read offline_access".into()),
        ..f.request()
    };
    let asked = consent
        .begin(&odd_scope, ann, common::SESSION)
        .await
        .unwrap();
    assert_eq!(asked.scopes.to_scope_string(), "page:read");
    let only_unknown = AuthorizeRequest {
        scope: Some("admin".into()),
        ..f.request()
    };
    let asked = consent
        .begin(&only_unknown, ann, common::SESSION)
        .await
        .unwrap();
    assert_eq!(asked.scopes.to_scope_string(), "page");
}
