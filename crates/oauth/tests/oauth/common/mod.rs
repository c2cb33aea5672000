//! The test world of the flow tests: ann, a confidential client, and the steps of the
//! authorization code flow as one call each.

#![allow(dead_code)] // each test file uses its own part of it

use quire_kernel::Principal;
use quire_keys::AuthError;
use quire_oauth::{
    Approve, AuthorizeRequest, ClientCredentials, ClientId, ClientSecret, ClientStore, ClientType,
    IssuedTokens, OAuthClient, RedirectUri, TokenError, TokenRequest,
};
use quire_testkit::World;

pub const SESSION: &str = "session-hash-of-ann";
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
pub const REDIRECT: &str = "https://notes.example/callback";

pub struct Flow {
    pub w: World,
    pub client: OAuthClient,
    pub secret: ClientSecret,
}

pub async fn flow() -> Flow {
    flow_in(World::builder().accounts(&["ann"]).build().await).await
}

pub async fn flow_in(w: World) -> Flow {
    let secret = ClientSecret::generate();
    let client = OAuthClient {
        id: ClientId::generate(),
        name: "Notes".into(),
        client_type: ClientType::Confidential,
        redirect_uris: vec![RedirectUri::stored(REDIRECT)],
        secret_hash: Some(secret.hash()),
        created_at: w.clock_now(),
        deleted_at: None,
        registration: quire_oauth::Registration::Admin,
        last_used_at: None,
    };
    w.store.insert_client(&client).await.unwrap();
    Flow { w, client, secret }
}

pub trait Now {
    fn clock_now(&self) -> time::OffsetDateTime;
}

impl Now for World {
    fn clock_now(&self) -> time::OffsetDateTime {
        quire_kernel::Clock::now(self.clock.as_ref())
    }
}

pub fn query_of(location: &str) -> std::collections::HashMap<String, String> {
    let url = url::Url::parse(location).unwrap();
    url.query_pairs().into_owned().collect()
}

impl Flow {
    pub fn request(&self) -> AuthorizeRequest {
        AuthorizeRequest {
            response_type: Some("code".into()),
            client_id: Some(self.client.id.as_str().into()),
            redirect_uri: Some(REDIRECT.into()),
            scope: Some("page link".into()),
            state: Some("st-1".into()),
            code_challenge: Some(CHALLENGE.into()),
            code_challenge_method: Some("S256".into()),
            resource: None,
        }
    }

    pub async fn code(&self) -> String {
        self.code_for(&self.request()).await
    }

    /// The code of `request`, approved by ann with the page's preselections.
    pub async fn code_for(&self, request: &AuthorizeRequest) -> String {
        self.code_choosing(request, self.approve()).await
    }

    /// Ann's approval, keeping the preselected project and the requested scopes.
    pub fn approve(&self) -> Approve {
        Approve {
            account: self.w.account("ann").account.id,
            project: None,
            read_only: false,
        }
    }

    /// The code of `request`, approved by ann with `choice`.
    pub async fn code_choosing(&self, request: &AuthorizeRequest, choice: Approve) -> String {
        let ann = self.w.account("ann").account.id;
        let consent = self
            .w
            .services
            .oauth_consent
            .begin(request, ann, SESSION)
            .await
            .unwrap();
        let location = self
            .w
            .services
            .oauth_consent
            .decide(consent.request_id.expose(), SESSION, Some(choice))
            .await
            .unwrap();
        let q = query_of(&location);
        assert_eq!(q["state"], "st-1");
        q["code"].clone()
    }

    pub fn credentials(&self) -> ClientCredentials {
        ClientCredentials {
            client_id: Some(self.client.id.as_str().into()),
            secret: Some(self.secret.expose().into()),
            basic: true,
        }
    }

    pub async fn exchange(&self, code: &str) -> Result<IssuedTokens, TokenError> {
        self.exchange_at(code, None).await
    }

    /// Redeems `code`, naming `resource` (RFC 8707) when given.
    pub async fn exchange_at(
        &self,
        code: &str,
        resource: Option<&str>,
    ) -> Result<IssuedTokens, TokenError> {
        let request = TokenRequest {
            grant_type: Some("authorization_code".into()),
            code: Some(code.into()),
            redirect_uri: Some(REDIRECT.into()),
            code_verifier: Some(VERIFIER.into()),
            resource: resource.map(str::to_owned),
            ..TokenRequest::default()
        };
        self.w
            .services
            .oauth_tokens
            .token(&self.credentials(), &request, "192.0.2.1")
            .await
    }

    pub async fn refresh(&self, token: &str) -> Result<IssuedTokens, TokenError> {
        self.refresh_with(token, TokenRequest::default()).await
    }

    /// Refreshes with `extra`'s `scope` and `resource`.
    pub async fn refresh_with(
        &self,
        token: &str,
        extra: TokenRequest,
    ) -> Result<IssuedTokens, TokenError> {
        let request = TokenRequest {
            grant_type: Some("refresh_token".into()),
            refresh_token: Some(token.into()),
            ..extra
        };
        self.w
            .services
            .oauth_tokens
            .token(&self.credentials(), &request, "192.0.2.1")
            .await
    }

    pub async fn authenticate(&self, token: &str) -> Result<Principal, AuthError> {
        self.w
            .services
            .keys
            .authenticate(Some(&format!("Bearer {token}")))
            .await
    }

    /// The principal of `token` presented to `resource`.
    pub async fn authenticate_at(
        &self,
        token: &str,
        resource: quire_kernel::Resource,
    ) -> Result<Principal, AuthError> {
        self.w
            .services
            .keys
            .authenticate_at(Some(&format!("Bearer {token}")), resource)
            .await
    }
}

pub fn refused(description: &'static str) -> AuthError {
    AuthError::InvalidToken(description)
}
