//! Client ID Metadata Documents against the in-memory world: a URL `client_id` resolved
//! through the fetching port before sign-in (nothing stored), stored when an account asks to
//! authorize it, then a public client like any other (PKCE, no secret, the agent endpoint by
//! default); the admin's deletion blocks the URL; the operator's switch; fetch failures and
//! bad documents on the error page.

use crate::common;

use common::{CHALLENGE, REDIRECT, SESSION, VERIFIER, query_of};
use quire_kernel::Resource;
use quire_oauth::{
    Approve, AuthorizeError, AuthorizeRequest, ClientCredentials, ClientId, ClientStore,
    FetchError, Registration, TokenRequest,
};
use quire_testkit::World;

const URL: &str = "https://notes.example/oauth/client.json";

fn document(client_id: &str) -> String {
    serde_json::json!({
        "client_id": client_id,
        "client_name": "Notes",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    })
    .to_string()
}

fn request(client_id: &str) -> AuthorizeRequest {
    AuthorizeRequest {
        response_type: Some("code".into()),
        client_id: Some(client_id.into()),
        redirect_uri: Some(REDIRECT.into()),
        scope: Some("page".into()),
        state: Some("st-1".into()),
        code_challenge: Some(CHALLENGE.into()),
        code_challenge_method: Some("S256".into()),
        resource: None,
    }
}

async fn world() -> World {
    let w = World::builder().accounts(&["ann"]).build().await;
    w.documents.serve(URL, &document(URL));
    w
}

fn page_message(result: Result<impl std::fmt::Debug, AuthorizeError>) -> &'static str {
    match result {
        Err(AuthorizeError::NotRedirectable(message)) => message,
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_document_client_is_stored_when_authorized_and_then_gets_tokens_for_the_agent_endpoint() {
    let w = world().await;
    let consent = &w.services.oauth_consent;
    let id = ClientId::parse(URL).unwrap();
    assert!(consent.metadata_documents_enabled());

    // Before sign-in: resolved, not stored.
    let (client, redirect) = consent.client_of(&request(URL)).await.unwrap();
    assert_eq!(
        (client.name.as_str(), redirect.as_str()),
        ("Notes", REDIRECT)
    );
    assert_eq!(client.registration, Registration::MetadataDocument);
    assert_eq!(w.store.client(&id).await.unwrap(), None);

    let ann = w.account("ann").account.id;
    let pending = consent.begin(&request(URL), ann, SESSION).await.unwrap();
    assert_eq!(
        pending.client_document_host().as_deref(),
        Some("notes.example")
    );
    assert!(pending.client.is_unverified());
    let stored = w.store.client(&id).await.unwrap().unwrap();
    assert_eq!(stored.registration, Registration::MetadataDocument);
    assert_eq!(stored.secret_hash, None);

    // A second authorization leaves the row as it was.
    consent.begin(&request(URL), ann, SESSION).await.unwrap();
    let location = consent
        .decide(
            pending.request_id.expose(),
            SESSION,
            Some(Approve {
                account: ann,
                project: None,
                read_only: false,
            }),
        )
        .await
        .unwrap();
    let code = query_of(&location)["code"].clone();

    let public = ClientCredentials {
        client_id: Some(URL.into()),
        secret: None,
        basic: false,
    };
    let token_request = TokenRequest {
        grant_type: Some("authorization_code".into()),
        code: Some(code),
        redirect_uri: Some(REDIRECT.into()),
        code_verifier: Some(VERIFIER.into()),
        ..TokenRequest::default()
    };
    let tokens = w
        .services
        .oauth_tokens
        .token(&public, &token_request, "192.0.2.1")
        .await
        .unwrap();
    let principal = w
        .services
        .keys
        .authenticate_at(
            Some(&format!("Bearer {}", tokens.access_token)),
            Resource::Mcp,
        )
        .await
        .unwrap();
    assert_eq!(principal.account_id, ann);
    // Its last use is written, like a dynamic client's.
    assert!(
        w.store
            .client(&id)
            .await
            .unwrap()
            .unwrap()
            .last_used_at
            .is_some()
    );
}

#[tokio::test]
async fn the_admins_deletion_blocks_the_url() {
    let w = world().await;
    let consent = &w.services.oauth_consent;
    let ann = w.account("ann").account.id;
    consent.begin(&request(URL), ann, SESSION).await.unwrap();
    let id = ClientId::parse(URL).unwrap();
    let now = quire_kernel::Clock::now(w.clock.as_ref());
    assert!(w.store.delete_client(&id, now).await.unwrap());
    let fetched = w.documents.fetches();
    assert!(page_message(consent.client_of(&request(URL)).await).contains("unknown or deleted"));
    assert_eq!(
        w.documents.fetches(),
        fetched,
        "a blocked URL is not fetched"
    );
}

#[tokio::test]
async fn the_operator_turns_documents_off() {
    let w = World::builder()
        .accounts(&["ann"])
        .settings(|s| s.oauth_client_metadata_documents = false)
        .build()
        .await;
    w.documents.serve(URL, &document(URL));
    let consent = &w.services.oauth_consent;
    assert!(!consent.metadata_documents_enabled());
    assert!(page_message(consent.client_of(&request(URL)).await).contains("turned off"));
    assert_eq!(w.documents.fetches(), 0);
}

#[tokio::test]
async fn failures_and_bad_documents_are_not_redirected_and_say_what_was_wrong() {
    let w = world().await;
    let consent = &w.services.oauth_consent;
    let cases = [
        (
            "https://a.example/redirect",
            Err(FetchError::Redirected),
            "redirect",
        ),
        (
            "https://a.example/private",
            Err(FetchError::ForbiddenAddress),
            "private",
        ),
        (
            "https://a.example/slow",
            Err(FetchError::TimedOut),
            "5 seconds",
        ),
        ("https://a.example/big", Err(FetchError::TooLarge), "16 KiB"),
        (
            "https://a.example/html",
            Err(FetchError::NotJson),
            "application/json",
        ),
        (
            "https://a.example/other",
            Ok(document(URL)),
            "not exactly the URL",
        ),
        (
            "https://a.example/empty",
            Ok("{}".to_owned()),
            "not a JSON object",
        ),
    ];
    for (url, answer, says) in cases {
        match answer {
            Ok(body) => w.documents.serve(url, &body),
            Err(e) => w.documents.fail(url, e),
        }
        let message = page_message(consent.client_of(&request(url)).await);
        assert!(message.contains(says), "{url}: {message}");
    }
    let unregistered = request(URL);
    let elsewhere = AuthorizeRequest {
        redirect_uri: Some("https://evil.example/cb".into()),
        ..unregistered
    };
    assert!(page_message(consent.client_of(&elsewhere).await).contains("redirect_uri"));
    // Not a URL Quire fetches: refused before the port is asked.
    let fetched = w.documents.fetches();
    for url in [
        "http://notes.example/client.json",
        "https://notes.example/",
        "https://notes.example/c#x",
    ] {
        assert!(page_message(consent.client_of(&request(url)).await).contains("https URL"));
    }
    assert_eq!(w.documents.fetches(), fetched);
}
