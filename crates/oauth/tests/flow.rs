//! The authorization code flow against the in-memory world with a fixed clock: the consent
//! request bound to its session, codes (60 s, single use, reuse revokes), PKCE, client
//! authentication, refresh rotation with reuse detection, and the verification steps of
//! the tokens it issues, each with the spec's exact description.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use quire_kernel::{App, Apps, PrincipalKind};
use quire_keys::AuthError;
use quire_oauth::access_token::{AccessClaims, issue};
use quire_oauth::consent::RedirectedError;
use quire_oauth::{
    AuthorizeError, AuthorizeRequest, ClientCredentials, ClientId, ClientSecret, ClientStore,
    ClientType, DecisionError, OAuthClient, RedirectUri, TokenAudience, TokenError, TokenRequest,
};
use quire_testkit::World;
use quire_testkit::memory::Op;
use time::Duration;

const SESSION: &str = "session-hash-of-ann";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const REDIRECT: &str = "https://notes.example/callback";

struct Flow {
    w: World,
    client: OAuthClient,
    secret: ClientSecret,
}

async fn flow() -> Flow {
    flow_in(World::builder().accounts(&["ann"]).build().await).await
}

async fn flow_in(w: World) -> Flow {
    let secret = ClientSecret::generate();
    let client = OAuthClient {
        id: ClientId::generate(),
        name: "Notes".into(),
        client_type: ClientType::Confidential,
        redirect_uris: vec![RedirectUri::stored(REDIRECT)],
        secret_hash: Some(secret.hash()),
        created_at: w.clock_now(),
        deleted_at: None,
    };
    w.store.insert_client(&client).await.unwrap();
    Flow { w, client, secret }
}

trait Now {
    fn clock_now(&self) -> time::OffsetDateTime;
}

impl Now for World {
    fn clock_now(&self) -> time::OffsetDateTime {
        quire_kernel::Clock::now(self.clock.as_ref())
    }
}

fn query_of(location: &str) -> std::collections::HashMap<String, String> {
    let url = url::Url::parse(location).unwrap();
    url.query_pairs().into_owned().collect()
}

impl Flow {
    fn request(&self) -> AuthorizeRequest {
        AuthorizeRequest {
            response_type: Some("code".into()),
            client_id: Some(self.client.id.as_str().into()),
            redirect_uri: Some(REDIRECT.into()),
            scope: Some("page link".into()),
            state: Some("st-1".into()),
            code_challenge: Some(CHALLENGE.into()),
            code_challenge_method: Some("S256".into()),
        }
    }

    async fn code(&self) -> String {
        let ann = self.w.account("ann").account.id;
        let consent = self
            .w
            .services
            .oauth_consent
            .begin(&self.request(), ann, SESSION)
            .await
            .unwrap();
        let location = self
            .w
            .services
            .oauth_consent
            .decide(consent.request_id.expose(), SESSION, true)
            .await
            .unwrap();
        let q = query_of(&location);
        assert_eq!(q["state"], "st-1");
        q["code"].clone()
    }

    fn credentials(&self) -> ClientCredentials {
        ClientCredentials {
            client_id: Some(self.client.id.as_str().into()),
            secret: Some(self.secret.expose().into()),
            basic: true,
        }
    }

    async fn exchange(&self, code: &str) -> Result<quire_oauth::IssuedTokens, TokenError> {
        let request = TokenRequest {
            grant_type: Some("authorization_code".into()),
            code: Some(code.into()),
            redirect_uri: Some(REDIRECT.into()),
            code_verifier: Some(VERIFIER.into()),
            ..TokenRequest::default()
        };
        self.w
            .services
            .oauth_tokens
            .token(&self.credentials(), &request, "192.0.2.1")
            .await
    }

    async fn refresh(&self, token: &str) -> Result<quire_oauth::IssuedTokens, TokenError> {
        let request = TokenRequest {
            grant_type: Some("refresh_token".into()),
            refresh_token: Some(token.into()),
            ..TokenRequest::default()
        };
        self.w
            .services
            .oauth_tokens
            .token(&self.credentials(), &request, "192.0.2.1")
            .await
    }

    async fn authenticate(&self, token: &str) -> Result<quire_kernel::Principal, AuthError> {
        self.w
            .services
            .keys
            .authenticate(Some(&format!("Bearer {token}")))
            .await
    }
}

fn refused(description: &'static str) -> AuthError {
    AuthError::InvalidToken(description)
}

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
            scopes: Apps::new([App::Page, App::Link]).unwrap(),
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
        consent.decide(id, "another-session", true).await,
        Err(DecisionError::UnknownRequest)
    );
    let denied = consent.decide(id, SESSION, false).await.unwrap();
    let q = query_of(&denied);
    assert_eq!(
        (q["error"].as_str(), q["state"].as_str()),
        ("access_denied", "st-1")
    );
    assert_eq!(
        consent.decide(id, SESSION, true).await,
        Err(DecisionError::UnknownRequest)
    );

    let stale = consent.begin(&f.request(), ann, SESSION).await.unwrap();
    f.w.clock.advance(Duration::minutes(10));
    assert_eq!(
        consent
            .decide(stale.request_id.expose(), SESSION, true)
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
    let bad_scope = AuthorizeRequest {
        scope: Some("admin".into()),
        ..f.request()
    };
    assert!(matches!(
        consent.begin(&bad_scope, ann, SESSION).await,
        Err(AuthorizeError::Redirect(RedirectedError {
            error: "invalid_scope",
            ..
        }))
    ));
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

fn sign(f: &Flow, header: &Header, claims: &AccessClaims) -> String {
    let key = f.w.store.snapshot().signing_keys[0].clone();
    jsonwebtoken::encode(
        header,
        claims,
        &EncodingKey::from_ed_der(&key.private_pkcs8),
    )
    .unwrap()
}

fn claims_of(token: &str) -> (Header, AccessClaims) {
    let header = jsonwebtoken::decode_header(token).unwrap();
    let payload = token.split('.').nth(1).unwrap();
    (
        header,
        serde_json::from_slice(&base64_decode(payload)).unwrap(),
    )
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .unwrap()
}

#[tokio::test]
async fn each_verification_failure_answers_its_own_description_in_order() {
    let f = flow().await;
    let tokens = f.exchange(&f.code().await).await.unwrap();
    let good = tokens.access_token.clone();
    let (header, claims) = claims_of(&good);
    assert_eq!(header.typ.as_deref(), Some("at+jwt"));
    assert_eq!(header.alg, Algorithm::EdDSA);
    assert_eq!(claims.iss, "https://quire.test");
    assert_eq!(claims.aud, "https://quire.test/api");
    assert_eq!(claims.exp - claims.iat, 900);

    // 1. Not a JWT, or JSON that is not, or another algorithm.
    let parts: Vec<&str> = good.split('.').collect();
    let hs256 = b64(br#"{"alg":"HS256","typ":"at+jwt","kid":"k"}"#);
    let no_kid = b64(br#"{"alg":"EdDSA","typ":"at+jwt"}"#);
    for malformed in [
        "a.b.c".to_owned(),
        format!("{}.{}.{}", b64(b"not json"), parts[1], parts[2]),
        format!("{}.{}.{}", parts[0], b64(b"[1,2]"), parts[2]),
        format!("{hs256}.{}.{}", parts[1], parts[2]),
        format!("{no_kid}.{}.{}", parts[1], parts[2]),
    ] {
        assert_eq!(
            f.authenticate(&malformed).await.unwrap_err(),
            refused("malformed bearer token"),
            "{malformed}"
        );
    }
    // 2. A signature that does not verify, or a key we never had.
    // One signature character changed, in the middle (the last one carries padding bits).
    let mut chars: Vec<char> = good.chars().collect();
    let at = chars.len() - 10;
    chars[at] = if chars[at] == 'A' { 'B' } else { 'A' };
    let tampered: String = chars.into_iter().collect();
    assert_eq!(
        f.authenticate(&tampered).await.unwrap_err(),
        refused("unknown signing key")
    );
    let foreign = Header {
        kid: Some("no-such-key".into()),
        ..header.clone()
    };
    assert_eq!(
        f.authenticate(&sign(&f, &foreign, &claims))
            .await
            .unwrap_err(),
        refused("unknown signing key")
    );
    // 3. Signed by us, but not an access token.
    let other_kind = Header {
        typ: Some("JWT".into()),
        ..header.clone()
    };
    assert_eq!(
        f.authenticate(&sign(&f, &other_kind, &claims))
            .await
            .unwrap_err(),
        refused("not an OAuth-obtained token")
    );
    // 4. Another issuer or audience.
    let elsewhere = AccessClaims {
        aud: "https://other.example/api".into(),
        ..claims.clone()
    };
    assert_eq!(
        f.authenticate(&sign(&f, &header, &elsewhere))
            .await
            .unwrap_err(),
        refused("token issuer or audience mismatch")
    );
    // 5. Expired: 900 s plus 30 s of leeway.
    f.w.clock.advance(Duration::seconds(929));
    assert!(f.authenticate(&good).await.is_ok());
    f.w.clock.advance(Duration::seconds(1));
    assert_eq!(
        f.authenticate(&good).await.unwrap_err(),
        refused("token expired")
    );
}

#[tokio::test]
async fn a_deleted_client_and_an_unreadable_registry_are_refused() {
    let f = flow().await;
    let tokens = f.exchange(&f.code().await).await.unwrap();
    // 7. The registry cannot be read (first lookup of this client): fail closed.
    f.w.store.fail(Op::Client);
    assert_eq!(
        f.authenticate(&tokens.access_token).await.unwrap_err(),
        refused("client registry unavailable")
    );
    f.w.store.heal();

    // 6. A deleted client, on a replica that never saw the token before.
    let replica = f.w.replica();
    let now = f.w.clock_now();
    f.w.store.delete_client(&f.client.id, now).await.unwrap();
    assert_eq!(
        replica
            .keys
            .authenticate(Some(&format!("Bearer {}", tokens.access_token)))
            .await
            .unwrap_err(),
        refused("unknown or deleted client")
    );
    // Its refresh tokens were revoked with it.
    assert!(
        f.w.store
            .snapshot()
            .oauth_grants
            .iter()
            .all(|g| g.revoked_at.is_some())
    );
}

#[tokio::test]
async fn a_bearer_of_an_account_not_activated_is_refused() {
    let f = flow().await;
    let ann = f.w.account("ann").account.id;
    let audience = TokenAudience::for_base_url("https://quire.test");
    let key =
        f.w.services
            .oauth_tokens
            .signing_key(f.w.clock_now())
            .await
            .unwrap();
    let scopes = Apps::new([App::Page]).unwrap();
    let token = issue(&key, &audience, ann, &f.client.id, &scopes, f.w.clock_now()).unwrap();
    assert!(f.authenticate(&token).await.is_ok());
    f.w.store.alter(|s| s.accounts[0].activated_at = None);
    assert_eq!(
        f.authenticate(&token).await.unwrap_err(),
        AuthError::NotActivated
    );
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
