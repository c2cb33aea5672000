//! The authorization code flow against the in-memory world with a fixed clock: the consent
//! request bound to its session, codes (60 s, single use, reuse revokes), PKCE, client
//! authentication, refresh rotation with reuse detection, the token endpoint's rate limit.

use crate::common;

use common::{REDIRECT, SESSION, VERIFIER, flow, query_of};
use quire_kernel::{App, Apps, PrincipalKind};
use quire_oauth::consent::RedirectedError;
use quire_oauth::{
    AuthorizeError, AuthorizeRequest, ClientCredentials, DecisionError, TokenError, TokenRequest,
};
use quire_testkit::memory::Op;
use time::Duration;

#[tokio::test]
async fn a_code_becomes_tokens_once_and_its_reuse_revokes_what_it_issued() {
    let f = flow().await;
    let code = f.code().await;
    let tokens = f.exchange(&code).await.unwrap();
    assert_eq!(tokens.expires_in, 900);
    assert_eq!(tokens.scope, "page link");

    let principal = f.authenticate(&tokens.access_token).await.unwrap();
    let ann = f.w.account("ann");
    assert_eq!(principal.account_id, ann.account.id);
    assert_eq!(principal.home_project_id, ann.project.id);
    assert_eq!(
        principal.kind,
        PrincipalKind::OAuthClient {
            client_id: f.client.id.as_str().into(),
            scopes: Apps::new([App::Page, App::Link]).unwrap().into(),
        }
    );

    let again = f.exchange(&code).await.unwrap_err();
    assert_eq!(
        again,
        TokenError::InvalidGrant(
            "the authorization code was already used; every token it issued is revoked"
        )
    );
    assert_eq!(
        f.refresh(tokens.refresh_token.expose()).await.unwrap_err(),
        TokenError::InvalidGrant("this authorization was revoked")
    );
}

#[tokio::test]
async fn a_code_lives_sixty_seconds() {
    let f = flow().await;
    let code = f.code().await;
    f.w.clock.advance(Duration::seconds(59));
    assert!(f.exchange(&code).await.is_ok());

    let late = f.code().await;
    f.w.clock.advance(Duration::seconds(60));
    assert_eq!(
        f.exchange(&late).await.unwrap_err(),
        TokenError::InvalidGrant("the authorization code has expired")
    );
}

#[tokio::test]
async fn the_consent_request_belongs_to_its_session_and_is_decided_once_within_ten_minutes() {
    let f = flow().await;
    let consent = &f.w.services.oauth_consent;
    let ann = f.w.account("ann").account.id;
    let pending = consent.begin(&f.request(), ann, SESSION).await.unwrap();
    let id = pending.request_id.expose();
    assert_eq!(pending.project.id, f.w.account("ann").project.id);
    assert_eq!(
        consent
            .decide(id, "another-session", Some(f.approve()))
            .await,
        Err(DecisionError::UnknownRequest)
    );
    let denied = consent.decide(id, SESSION, None).await.unwrap();
    let q = query_of(&denied);
    assert_eq!(
        (q["error"].as_str(), q["state"].as_str()),
        ("access_denied", "st-1")
    );
    assert_eq!(
        consent.decide(id, SESSION, Some(f.approve())).await,
        Err(DecisionError::UnknownRequest)
    );

    let stale = consent.begin(&f.request(), ann, SESSION).await.unwrap();
    f.w.clock.advance(Duration::minutes(10));
    assert_eq!(
        consent
            .decide(stale.request_id.expose(), SESSION, Some(f.approve()))
            .await,
        Err(DecisionError::UnknownRequest)
    );
}

#[tokio::test]
async fn bad_requests_go_back_to_the_client_but_an_unknown_client_or_uri_never_does() {
    let f = flow().await;
    let consent = &f.w.services.oauth_consent;
    let ann = f.w.account("ann").account.id;
    let plain = AuthorizeRequest {
        code_challenge_method: Some("plain".into()),
        ..f.request()
    };
    let Err(AuthorizeError::Redirect(RedirectedError { error, state, .. })) =
        consent.begin(&plain, ann, SESSION).await
    else {
        panic!("plain PKCE must be refused on the redirect");
    };
    assert_eq!((error, state.as_deref()), ("invalid_request", Some("st-1")));
    let no_pkce = AuthorizeRequest {
        code_challenge: None,
        ..f.request()
    };
    assert!(matches!(
        consent.begin(&no_pkce, ann, SESSION).await,
        Err(AuthorizeError::Redirect(_))
    ));
    // RFC 8707: a resource of another server goes back as invalid_target, with iss (RFC 9207).
    let elsewhere = AuthorizeRequest {
        resource: Some("https://other.example/mcp".into()),
        ..f.request()
    };
    let Err(AuthorizeError::Redirect(refused)) = consent.begin(&elsewhere, ann, SESSION).await
    else {
        panic!("a foreign resource must be refused on the redirect");
    };
    let q = query_of(&refused.location());
    assert_eq!(q["error"], "invalid_target");
    assert_eq!(q["state"], "st-1");
    assert_eq!(q["iss"], consent.issuer());
    for request in [
        AuthorizeRequest {
            redirect_uri: Some("https://evil.example/callback".into()),
            ..f.request()
        },
        AuthorizeRequest {
            client_id: Some("qc_nobody".into()),
            ..f.request()
        },
    ] {
        assert!(matches!(
            consent.begin(&request, ann, SESSION).await,
            Err(AuthorizeError::NotRedirectable(_))
        ));
    }
    // Nothing refused was stored.
    assert!(f.w.store.snapshot().oauth_grants.is_empty());
}

#[tokio::test]
async fn the_verifier_redirect_uri_and_secret_must_all_match() {
    let f = flow().await;
    let code = f.code().await;
    let tokens = &f.w.services.oauth_tokens;
    let base = TokenRequest {
        grant_type: Some("authorization_code".into()),
        code: Some(code.clone()),
        redirect_uri: Some(REDIRECT.into()),
        code_verifier: Some(VERIFIER.into()),
        ..TokenRequest::default()
    };
    let wrong_verifier = TokenRequest {
        code_verifier: Some(format!("{}x", &VERIFIER[..43])),
        ..base.clone()
    };
    assert_eq!(
        tokens
            .token(&f.credentials(), &wrong_verifier, "a")
            .await
            .unwrap_err(),
        TokenError::InvalidGrant("code_verifier does not match the code_challenge")
    );
    let wrong_uri = TokenRequest {
        redirect_uri: Some("https://notes.example/other".into()),
        ..base.clone()
    };
    assert!(matches!(
        tokens.token(&f.credentials(), &wrong_uri, "a").await,
        Err(TokenError::InvalidGrant(_))
    ));
    let wrong_secret = ClientCredentials {
        secret: Some("not-the-secret".into()),
        ..f.credentials()
    };
    assert_eq!(
        tokens.token(&wrong_secret, &base, "a").await.unwrap_err(),
        TokenError::InvalidClient { basic: true }
    );
    let no_secret = ClientCredentials {
        secret: None,
        basic: false,
        ..f.credentials()
    };
    assert_eq!(
        tokens.token(&no_secret, &base, "a").await.unwrap_err(),
        TokenError::InvalidClient { basic: false }
    );
    // None of those spent the code.
    assert!(tokens.token(&f.credentials(), &base, "a").await.is_ok());
}

#[tokio::test]
async fn refresh_tokens_rotate_and_a_reuse_after_the_grace_revokes_the_family() {
    let f = flow().await;
    let first = f.exchange(&f.code().await).await.unwrap();
    let r1 = first.refresh_token.expose().to_owned();
    let second = f.refresh(&r1).await.unwrap();
    let r2 = second.refresh_token.expose().to_owned();
    assert_ne!(r1, r2);
    // A client that lost the answer may retry within 10 s.
    f.w.clock.advance(Duration::seconds(5));
    let retried = f.refresh(&r1).await.unwrap();
    assert_ne!(retried.refresh_token.expose(), r2);
    // Later, the old token is a stolen copy: the whole family goes.
    f.w.clock.advance(Duration::seconds(6));
    assert_eq!(
        f.refresh(&r1).await.unwrap_err(),
        TokenError::InvalidGrant(
            "the refresh token was already used; every token of this authorization is revoked"
        )
    );
    assert_eq!(
        f.refresh(&r2).await.unwrap_err(),
        TokenError::InvalidGrant("this authorization was revoked")
    );
    // A refresh may narrow the scopes but never widen them.
    let fresh = f.exchange(&f.code().await).await.unwrap();
    let narrow = TokenRequest {
        grant_type: Some("refresh_token".into()),
        refresh_token: Some(fresh.refresh_token.expose().into()),
        scope: Some("page base".into()),
        ..TokenRequest::default()
    };
    assert!(matches!(
        f.w.services
            .oauth_tokens
            .token(&f.credentials(), &narrow, "a")
            .await,
        Err(TokenError::InvalidScope(_))
    ));
}

#[tokio::test]
async fn a_failed_redemption_leaves_the_code_unspent() {
    let f = flow().await;
    let code = f.code().await;
    f.w.store.fail(Op::RedeemCode);
    assert!(matches!(f.exchange(&code).await, Err(TokenError::Infra(_))));
    f.w.store.heal();
    assert!(f.exchange(&code).await.is_ok());
}

#[tokio::test]
async fn the_token_endpoint_is_rate_limited_per_address() {
    let f = flow().await;
    let tokens = &f.w.services.oauth_tokens;
    let junk = TokenRequest {
        grant_type: Some("refresh_token".into()),
        refresh_token: Some("unknown".into()),
        ..TokenRequest::default()
    };
    for _ in 0..quire_oauth::token::TOKEN_RATE_LIMIT {
        assert!(matches!(
            tokens.token(&f.credentials(), &junk, "198.51.100.7").await,
            Err(TokenError::InvalidGrant(_))
        ));
    }
    assert_eq!(
        tokens
            .token(&f.credentials(), &junk, "198.51.100.7")
            .await
            .unwrap_err(),
        TokenError::RateLimited
    );
    // Another address is not affected.
    assert!(matches!(
        tokens.token(&f.credentials(), &junk, "198.51.100.8").await,
        Err(TokenError::InvalidGrant(_))
    ));
}
