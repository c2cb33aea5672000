//! Key use cases against the in-memory store: verification of every credential shape,
//! minting, listing and revocation, and a failing store.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::sync::Arc;

use quire_accounts::{AccountService, CreateAccount, CreatedAccount};
use quire_bearer::{BearerPorts, BearerVerifier};
use quire_kernel::{App, Apps, Principal, PrincipalKind, Tier};
use quire_keys::{
    AuthError, KeyService, MintError, MintRequest, PlaintextKey, RevokeError, RevokeSelfError,
};
use quire_oauth::TokenAudience;
use quire_testkit::fixtures::new_account;
use quire_testkit::memory::Op;
use quire_testkit::{FixedClock, MemoryStore, ThreadOffload};

async fn setup(activated: bool) -> (Arc<MemoryStore>, KeyService, CreatedAccount) {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(FixedClock::new());
    let created = AccountService::new(store.clone(), clock.clone(), Arc::new(ThreadOffload))
        .create(CreateAccount {
            platform_admin: true,
            activated,
            ..new_account("ann")
        })
        .await
        .unwrap();
    // JWT-shaped credentials go to the real verifier, over the same fakes.
    let bearers = BearerVerifier::new(
        BearerPorts {
            keys: store.clone(),
            clients: store.clone(),
            accounts: store.clone(),
            projects: store.clone(),
            clock: clock.clone(),
        },
        TokenAudience::for_base_url("http://quire.test"),
    );
    let keys = KeyService::new(store.clone(), store.clone(), Arc::new(bearers), clock);
    (store, keys, created)
}

fn bearer(k: &PlaintextKey) -> String {
    format!("Bearer {}", k.expose())
}

#[tokio::test]
async fn a_master_key_verifies_to_its_account_and_default_project() {
    let (_, keys, ann) = setup(true).await;
    let p = keys
        .authenticate(Some(&bearer(&ann.master_key)))
        .await
        .unwrap();
    assert_eq!(p.account_id, ann.account.id);
    assert_eq!(p.home_project_id, ann.project.id);
    assert!(p.is_master() && p.is_platform_admin);
}

#[tokio::test]
async fn every_bad_credential_is_refused_with_its_reason() {
    let (_, keys, ann) = setup(true).await;
    let unknown = PlaintextKey::generate();
    let good = ann.master_key.expose();
    let cases: Vec<(Option<String>, AuthError)> = vec![
        (None, AuthError::InvalidApiKey),
        (Some(String::new()), AuthError::InvalidApiKey),
        (Some("Bearer".into()), AuthError::InvalidApiKey),
        (Some(format!("Basic {good}")), AuthError::InvalidApiKey),
        (Some(format!("Token {good}")), AuthError::InvalidApiKey),
        (Some(bearer(&unknown)), AuthError::InvalidApiKey),
        (
            Some(format!("Bearer {}", &good[..40])),
            AuthError::InvalidApiKey,
        ),
        (
            Some("Bearer a.b.c".into()),
            AuthError::InvalidToken("malformed bearer token"),
        ),
    ];
    for (header, expected) in cases {
        assert_eq!(
            keys.authenticate(header.as_deref()).await.unwrap_err(),
            expected,
            "{header:?}"
        );
    }
    assert!(
        keys.authenticate(Some(&format!("bearer  {good} ")))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_key_of_an_account_not_activated_is_not_activated() {
    let (_, keys, ann) = setup(false).await;
    assert_eq!(
        keys.authenticate(Some(&bearer(&ann.master_key)))
            .await
            .unwrap_err(),
        AuthError::NotActivated
    );
}

#[tokio::test]
async fn minted_app_keys_verify_with_their_scope_and_home() {
    let (store, keys, ann) = setup(true).await;
    let master = keys
        .authenticate(Some(&bearer(&ann.master_key)))
        .await
        .unwrap();
    let minted = keys
        .mint(
            &master,
            MintRequest {
                name: "ci".into(),
                apps: vec!["link".into(), "page".into()],
                project: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(minted.project_slug.as_str(), "ann");
    let stored = store.snapshot().keys;
    assert!(
        stored
            .iter()
            .all(|k| k.key_hash.0 != minted.plaintext.expose())
    );
    let app = keys
        .authenticate(Some(&bearer(&minted.plaintext)))
        .await
        .unwrap();
    assert!(!app.is_master());
    assert_eq!(app.home_project_id, ann.project.id);
    match &app.kind {
        PrincipalKind::Key {
            tier: Tier::App(apps),
            ..
        } => assert_eq!(apps.to_csv(), "page,link"),
        other => panic!("{other:?}"),
    }
    // App keys mint nothing; OAuth bearer principals neither.
    let req = || MintRequest {
        name: "x".into(),
        apps: vec!["page".into()],
        project: None,
    };
    assert_eq!(
        keys.mint(&app, req()).await.unwrap_err(),
        MintError::InsufficientScope
    );
    let oauth = Principal {
        kind: PrincipalKind::OAuthClient {
            client_id: "c".into(),
            scopes: Apps::new(App::ALL).unwrap().into(),
        },
        ..master.clone()
    };
    assert_eq!(
        keys.mint(&oauth, req()).await.unwrap_err(),
        MintError::InsufficientScope
    );
}

#[tokio::test]
async fn mint_validates_name_apps_and_project() {
    let (store, keys, ann) = setup(true).await;
    let master = keys
        .authenticate(Some(&bearer(&ann.master_key)))
        .await
        .unwrap();
    let before = store.snapshot();
    let mint = |name: &str, apps: &[&str], project: Option<&str>| MintRequest {
        name: name.into(),
        apps: apps.iter().map(|a| (*a).to_owned()).collect(),
        project: project.map(str::to_owned),
    };
    for bad in [
        mint("", &["page"], None),
        mint("   ", &["page"], None),
        mint(&"n".repeat(61), &["page"], None),
        mint("k", &[], None),
        mint("k", &["pages"], None),
        mint("k", &["page", "page"], None),
    ] {
        assert!(matches!(
            keys.mint(&master, bad).await,
            Err(MintError::InvalidInput(_))
        ));
    }
    assert!(matches!(
        keys.mint(&master, mint("k", &["page"], Some("Bad Slug")))
            .await,
        Err(MintError::InvalidProject(_))
    ));
    assert_eq!(
        keys.mint(&master, mint("k", &["page"], Some("nobody")))
            .await
            .unwrap_err(),
        MintError::ProjectNotOwned
    );
    store.fail(Op::InsertKey);
    assert!(matches!(
        keys.mint(&master, mint("k", &["page"], None)).await,
        Err(MintError::Infra(_))
    ));
    assert_eq!(store.snapshot(), before, "refused mints stored something");
}

#[tokio::test]
async fn revocation_rules() {
    let (_, keys, ann) = setup(true).await;
    let master = keys
        .authenticate(Some(&bearer(&ann.master_key)))
        .await
        .unwrap();
    let minted = keys
        .mint(
            &master,
            MintRequest {
                name: "k".into(),
                apps: vec!["page".into()],
                project: None,
            },
        )
        .await
        .unwrap();
    let app = keys
        .authenticate(Some(&bearer(&minted.plaintext)))
        .await
        .unwrap();
    assert_eq!(
        keys.revoke(&app, minted.record.id).await,
        Err(RevokeError::InsufficientScope)
    );
    assert_eq!(
        keys.revoke(&master, master.key_id().unwrap()).await,
        Err(RevokeError::CurrentKey)
    );
    assert_eq!(
        keys.revoke(&master, quire_kernel::KeyId::new()).await,
        Err(RevokeError::NotFound)
    );
    keys.revoke(&master, minted.record.id).await.unwrap();
    assert_eq!(
        keys.authenticate(Some(&bearer(&minted.plaintext)))
            .await
            .unwrap_err(),
        AuthError::InvalidApiKey
    );
    let listed = keys.list(&master).await.unwrap();
    let revoked = listed
        .iter()
        .find(|k| k.record.id == minted.record.id)
        .unwrap();
    assert!(revoked.record.revoked_at.is_some());
    let master_listed = listed
        .iter()
        .find(|k| k.record.tier == Tier::Master)
        .unwrap();
    assert_eq!(
        master_listed.home_project.as_ref().unwrap().1.as_str(),
        "ann"
    );
    assert!(master_listed.record.revoked_at.is_none());
}

#[tokio::test]
async fn a_key_use_is_recorded_about_once_a_minute_and_never_fails_the_request() {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(FixedClock::new());
    let ann = AccountService::new(store.clone(), clock.clone(), Arc::new(ThreadOffload))
        .create(new_account("ann"))
        .await
        .unwrap();
    let bearers = BearerVerifier::new(
        BearerPorts {
            keys: store.clone(),
            clients: store.clone(),
            accounts: store.clone(),
            projects: store.clone(),
            clock: clock.clone(),
        },
        TokenAudience::for_base_url("http://quire.test"),
    );
    let keys = KeyService::new(
        store.clone(),
        store.clone(),
        Arc::new(bearers),
        clock.clone(),
    );
    let last_used = || store.snapshot().keys[0].last_used_at;
    let header = bearer(&ann.master_key);
    assert_eq!(last_used(), None);

    let first = quire_kernel::Clock::now(clock.as_ref());
    keys.authenticate(Some(&header)).await.unwrap();
    assert_eq!(last_used(), Some(first));
    clock.advance(time::Duration::seconds(40));
    keys.authenticate(Some(&header)).await.unwrap();
    assert_eq!(
        last_used(),
        Some(first),
        "within the minute nothing is written"
    );
    clock.advance(time::Duration::seconds(30));
    keys.authenticate(Some(&header)).await.unwrap();
    assert_eq!(last_used(), Some(first + time::Duration::seconds(70)));

    store.fail(Op::TouchKey);
    clock.advance(time::Duration::minutes(5));
    keys.authenticate(Some(&header)).await.unwrap();
    assert_eq!(last_used(), Some(first + time::Duration::seconds(70)));
}

#[tokio::test]
async fn a_key_revokes_itself_and_only_a_key_can() {
    let (_, keys, ann) = setup(true).await;
    let master = keys
        .authenticate(Some(&bearer(&ann.master_key)))
        .await
        .unwrap();
    let oauth = Principal {
        kind: PrincipalKind::OAuthClient {
            client_id: "c".into(),
            scopes: Apps::new(App::ALL).unwrap().into(),
        },
        ..master.clone()
    };
    assert_eq!(
        keys.revoke_current(&oauth).await,
        Err(RevokeSelfError::NotAnApiKey)
    );
    keys.revoke_current(&master).await.unwrap();
    assert_eq!(
        keys.authenticate(Some(&bearer(&ann.master_key)))
            .await
            .unwrap_err(),
        AuthError::InvalidApiKey
    );
}
