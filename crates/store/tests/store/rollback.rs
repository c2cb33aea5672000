//! Rollback of the adapter's multi-step transactions: a fault injected between two steps
//! leaves nothing of the first, and the same write then succeeds.

use std::sync::Arc;

use quire_accounts::{
    AccountService, AccountStore, Binding, CreateAccount, CreateAccountError, InvitationStore,
    PhoneNumber,
};
use quire_databases::{DatabaseRecords, DatabaseStatus};
use quire_kernel::{AccountId, Clock, DatabaseId, ProjectSlug, SystemClock};
use quire_keys::KeyStore;
use quire_oauth::grant::{CodeChallenge, default_scopes};
use quire_oauth::{
    ClientId, ClientStore, ClientType, Grant, GrantStage, GrantStore, OAuthClient, RedirectUri,
    RefreshRecord,
};
use quire_projects::{DeleteProjectStoreError, ProjectStore};
use quire_store::Database;
use quire_testkit::ThreadOffload;

use crate::common;
use common::on_both_databases;

fn bootstrap(handle: &str) -> CreateAccount {
    CreateAccount {
        password: Some("a long password".into()),
        ..quire_testkit::fixtures::new_account(handle)
    }
}

/// A fault after the account row, or after the project row, leaves no row at all.
async fn create_account_rolls_back(db: Database) {
    db.migrate().await.expect("migrate");
    let db = Arc::new(db);
    let svc = AccountService::new(db.clone(), Arc::new(SystemClock), Arc::new(ThreadOffload));
    for step in ["create_account:account", "create_account:project"] {
        db.fail_at(step);
        let err = svc.create(bootstrap("ann")).await.unwrap_err();
        assert!(
            matches!(err, CreateAccountError::Infra(_)),
            "{step}: {err:?}"
        );
        let slug = ProjectSlug::parse("ann").unwrap();
        assert!(db.project_by_slug(&slug).await.unwrap().is_none(), "{step}");
    }
    // With no fault the same account is created: nothing of the failed attempts blocks it.
    let created = svc.create(bootstrap("ann")).await.expect("create");
    assert!(
        db.account_by_id(created.account.id)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        db.keys_of_account(created.account.id).await.unwrap().len(),
        1
    );
}

/// A fault after the move, or after the delete, restores keys, databases and the default.
async fn delete_with_move_rolls_back(db: Database) {
    db.migrate().await.expect("migrate");
    let db = Arc::new(db);
    let clock = SystemClock;
    let svc = AccountService::new(db.clone(), Arc::new(clock), Arc::new(ThreadOffload));
    let ann = svc.create(bootstrap("ann")).await.expect("create");
    let account: AccountId = ann.account.id;
    let mut second = ann.project.clone();
    second.id = quire_kernel::ProjectId::new();
    second.slug = ProjectSlug::parse("ann_second").unwrap();
    second.created_at = clock.now() + time::Duration::seconds(1);
    db.insert_project(&second).await.unwrap();
    let (_, key) = quire_keys::new_key(
        account,
        "k".into(),
        quire_kernel::Tier::App(quire_kernel::Apps::new([quire_kernel::App::Page]).unwrap()),
        Some(ann.project.id),
        clock.now(),
    );
    db.insert_key(&key).await.unwrap();
    let database = quire_databases::Database {
        id: DatabaseId(uuid::Uuid::now_v7()),
        account_id: account,
        project_id: ann.project.id,
        slug: ProjectSlug::parse("ann_db").unwrap(),
        name: "db".into(),
        status: DatabaseStatus::Provisioning,
        lease_until: Some(clock.now()),
        expires_at: None,
        owner_secret: quire_accounts::SealedSecret::stored("o".into()),
        authenticator_secret: quire_accounts::SealedSecret::stored("a".into()),
        jwt_secret: None,
        data_api_enabled: false,
        data_api_settings: quire_databases::DataApiSettings::default(),
        created_at: clock.now(),
        updated_at: clock.now(),
    };
    db.insert_database(&database).await.unwrap();

    for step in ["delete_project:moved", "delete_project:deleted"] {
        db.fail_at(step);
        let err = db
            .delete_project(&ann.project, Some(second.id))
            .await
            .unwrap_err();
        assert!(matches!(err, DeleteProjectStoreError::Infra(_)), "{step}");
        assert!(
            db.project_by_id(ann.project.id).await.unwrap().is_some(),
            "{step}"
        );
        assert_eq!(
            db.key_by_id(key.id).await.unwrap().unwrap().project_id,
            Some(ann.project.id),
            "{step}: key moved although the delete failed"
        );
        assert_eq!(
            db.database(database.id).await.unwrap().unwrap().project_id,
            ann.project.id,
            "{step}: database moved although the delete failed"
        );
        assert_eq!(
            db.default_project_of(account).await.unwrap(),
            Some(ann.project.id)
        );
    }
    db.delete_project(&ann.project, Some(second.id))
        .await
        .expect("delete");
    assert_eq!(
        db.default_project_of(account).await.unwrap(),
        Some(second.id)
    );
    assert_eq!(
        db.database(database.id).await.unwrap().unwrap().project_id,
        second.id
    );
}

fn public_client(clock: &SystemClock) -> OAuthClient {
    OAuthClient {
        id: ClientId::generate(),
        name: "App".into(),
        client_type: ClientType::Public,
        redirect_uris: vec![RedirectUri::stored("http://127.0.0.1/cb")],
        secret_hash: None,
        created_at: clock.now(),
        deleted_at: None,
        registration: quire_oauth::Registration::Admin,
        last_used_at: None,
    }
}

/// A migrated database holding ann and a registered public client.
async fn with_a_client(
    db: Database,
) -> (
    Arc<Database>,
    SystemClock,
    quire_accounts::CreatedAccount,
    OAuthClient,
) {
    db.migrate().await.expect("migrate");
    let db = Arc::new(db);
    let clock = SystemClock;
    let ann = AccountService::new(db.clone(), Arc::new(clock), Arc::new(ThreadOffload))
        .create(bootstrap("ann"))
        .await
        .expect("create");
    let client = public_client(&clock);
    db.insert_client(&client).await.unwrap();
    (db, clock, ann, client)
}

async fn delete_client_rolls_back(db: Database) {
    let (db, clock, ann, client) = with_a_client(db).await;
    let mut home = ann.project.clone();
    home.oauth_client_id = Some(client.id.as_str().to_owned());
    db.update_project(&home).await.unwrap();

    db.fail_at("delete_client:tombstone");
    assert!(db.delete_client(&client.id, clock.now()).await.is_err());
    assert_eq!(db.client(&client.id).await.unwrap(), Some(client.clone()));
    assert_eq!(db.project_by_id(home.id).await.unwrap(), Some(home.clone()));

    assert!(db.delete_client(&client.id, clock.now()).await.unwrap());
    let home = db.project_by_id(home.id).await.unwrap().unwrap();
    assert_eq!(home.oauth_client_id, None);
}

async fn redeeming_and_rotating_roll_back(db: Database) {
    let (db, clock, ann, client) = with_a_client(db).await;
    let now = clock.now();
    let grant = Grant {
        id: "grant-1".into(),
        client_id: client.id.clone(),
        account_id: ann.account.id,
        scopes: default_scopes(),
        project_id: Some(ann.project.id),
        resource: quire_kernel::Resource::Api,
        redirect_uri: "http://127.0.0.1:5000/cb".into(),
        state: Some("s".into()),
        code_challenge: CodeChallenge::parse(&"a".repeat(43)).unwrap(),
        stage: GrantStage::Approved {
            code_hash: "code-hash".into(),
            code_expires_at: now + time::Duration::seconds(60),
        },
        created_at: now,
        revoked_at: None,
    };
    db.insert_oauth_grant(&grant).await.unwrap();
    let (_, first) = RefreshRecord::issue(&grant, now);

    // Redeeming: the grant stays approved and no refresh token exists.
    db.fail_at("redeem_code:redeemed");
    assert!(db.redeem_code(&grant.id, now, &first).await.is_err());
    assert_eq!(
        db.grant_by_code("code-hash").await.unwrap(),
        Some(grant.clone())
    );
    assert_eq!(db.refresh_token(&first.token_hash).await.unwrap(), None);
    assert!(db.redeem_code(&grant.id, now, &first).await.unwrap());
    assert!(
        !db.redeem_code(&grant.id, now, &first).await.unwrap(),
        "single use"
    );

    // Rotating: the old token stays unrotated and its successor does not exist.
    let (_, next) = RefreshRecord::issue(&grant, now);
    db.fail_at("rotate_refresh:rotated");
    let earlier = now - time::Duration::seconds(10);
    assert!(
        db.rotate_refresh(&first.token_hash, now, earlier, &next)
            .await
            .is_err()
    );
    let (old, _) = db.refresh_token(&first.token_hash).await.unwrap().unwrap();
    assert_eq!(old.rotated_at, None);
    assert_eq!(db.refresh_token(&next.token_hash).await.unwrap(), None);
    assert!(
        db.rotate_refresh(&first.token_hash, now, earlier, &next)
            .await
            .unwrap()
    );
    // Rotated before the reuse window: refused, and nothing stored.
    let (_, third) = RefreshRecord::issue(&grant, now);
    let later = now + time::Duration::seconds(20);
    assert!(
        !db.rotate_refresh(
            &first.token_hash,
            later,
            now + time::Duration::seconds(10),
            &third
        )
        .await
        .unwrap()
    );
    assert_eq!(db.refresh_token(&third.token_hash).await.unwrap(), None);
}

/// A fault after the account is marked activated leaves it not activated and the number
/// unbound; the same activation then succeeds.
async fn activation_rolls_back(db: Database) {
    db.migrate().await.expect("migrate");
    let db = Arc::new(db);
    let svc = AccountService::new(db.clone(), Arc::new(SystemClock), Arc::new(ThreadOffload));
    let account = svc
        .create(CreateAccount {
            activated: false,
            ..bootstrap("ann")
        })
        .await
        .expect("create")
        .account
        .id;
    let number = PhoneNumber::parse("+447400123456").unwrap();
    let now = SystemClock.now();
    db.add_invitations(std::slice::from_ref(&number), now)
        .await
        .unwrap();
    db.fail_at("bind_and_activate:activated");
    assert!(db.bind_and_activate(account, &number, now).await.is_err());
    let stored = db.account_by_id(account).await.unwrap().unwrap();
    assert_eq!(stored.activated_at, None);
    assert_eq!(db.invitations().await.unwrap()[0].bound_to, None);
    assert_eq!(
        db.bind_and_activate(account, &number, now).await.unwrap(),
        Binding::Activated
    );
    assert!(
        db.account_by_id(account)
            .await
            .unwrap()
            .unwrap()
            .activated_at
            .is_some()
    );
}

on_both_databases!(
    create_account_rolls_back,
    delete_with_move_rolls_back,
    delete_client_rolls_back,
    redeeming_and_rotating_roll_back,
    activation_rolls_back,
);
