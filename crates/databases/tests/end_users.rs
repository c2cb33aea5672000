//! The owner's view of a database's end users, over a data API instance of memory: the
//! list with its count, newest first and cut at the limit; deleting one, and `NotFound` for
//! a user that is not there; nothing for another account; refused while the data API is
//! off or was never on; an instance that cannot start is the infrastructure's failure.
//! And a sign-up whose confirmation email the relay refuses leaves no user behind; one of a
//! registered address, while confirmations are on, is answered with a stand-in and changes
//! nothing.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use quire_accounts::SealingKey;
use quire_dataapi::{Plan, PlanRow, SchemaCache};
use quire_databases::{
    AuthError, AuthSettings, Cluster, ClusterError, DataApiInstance, DataApiRuntime,
    DataApiSignals, DatabaseConfig, DatabaseError, DatabasePorts, DatabaseService, EndUser,
    EndUserMail, EndUserMailError, GatewayTarget, InstanceError, KeyRole, NewDatabase, NewEndUser,
    Rotation, RunError, SignOutScope, SqlOutcome, TenantAccess, TenantNames, TenantUsers,
    UserChange, UserWriteError,
};
use quire_kernel::{AccountId, DatabaseId, InfraError, Principal};
use quire_testkit::{ThreadOffload, World};
use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

/// A cluster that does what it is told and holds nothing.
#[derive(Debug)]
struct NoopCluster;

#[async_trait]
impl Cluster for NoopCluster {
    async fn create_roles(&self, _: &TenantAccess) -> Result<(), InfraError> {
        Ok(())
    }
    async fn create_database(&self, _: &TenantNames) -> Result<(), InfraError> {
        Ok(())
    }
    async fn prepare_database(&self, _: &TenantAccess) -> Result<(), InfraError> {
        Ok(())
    }
    async fn drop_tenant(&self, _: &TenantNames) -> Result<(), InfraError> {
        Ok(())
    }
    async fn run_sql(
        &self,
        _: &TenantAccess,
        _: &str,
        _: usize,
    ) -> Result<SqlOutcome, ClusterError> {
        Err(ClusterError::Infra(InfraError::new("no SQL here")))
    }
    async fn announce_reload(&self, _: &TenantAccess) -> Result<(), InfraError> {
        Ok(())
    }
    async fn sizes(&self, _: &[TenantNames]) -> Result<HashMap<String, u64>, InfraError> {
        Ok(HashMap::new())
    }
}

/// No mail goes out here.
#[derive(Debug)]
struct NoMail;

#[async_trait]
impl EndUserMail for NoMail {
    async fn send(&self, _: AccountId, _: &str, _: &str, _: &str) -> Result<(), EndUserMailError> {
        Err(EndUserMailError::Failed("no mail in these tests".into()))
    }
}

/// The users of one database, newest last.
#[derive(Debug, Default)]
struct MemoryUsers(Mutex<Vec<EndUser>>, std::sync::atomic::AtomicBool);

fn no_such(what: &str) -> InfraError {
    InfraError::new(format!("{what} is not used by these tests"))
}

#[async_trait]
impl TenantUsers for MemoryUsers {
    async fn settings(&self) -> Result<AuthSettings, InfraError> {
        Ok(AuthSettings {
            confirm_email: self.1.load(std::sync::atomic::Ordering::SeqCst),
            ..AuthSettings::default()
        })
    }
    async fn sign_up_user(&self, new: &NewEndUser) -> Result<EndUser, UserWriteError> {
        if self
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|u| u.email == new.email && u.email_confirmed_at.is_some())
        {
            return Err(UserWriteError::EmailTaken);
        }
        let user = EndUser {
            id: new.id,
            email: new.email.clone(),
            email_confirmed_at: new.email_confirmed_at,
            user_metadata: new.user_metadata.clone(),
            app_metadata: json!({"provider": "email"}),
            created_at: new.now,
            updated_at: new.now,
            last_sign_in_at: None,
        };
        self.0.lock().unwrap().push(user.clone());
        Ok(user)
    }
    async fn user_by_email(&self, _: &str) -> Result<Option<(EndUser, String)>, InfraError> {
        Err(no_such("user_by_email"))
    }
    async fn user(&self, id: Uuid) -> Result<Option<EndUser>, InfraError> {
        Ok(self.0.lock().unwrap().iter().find(|u| u.id == id).cloned())
    }
    async fn confirmation_pending(
        &self,
        _: &str,
        _: OffsetDateTime,
        _: Duration,
    ) -> Result<bool, InfraError> {
        Err(no_such("confirmation_pending"))
    }
    async fn confirm_email(
        &self,
        _: &str,
        _: OffsetDateTime,
        _: Duration,
    ) -> Result<Option<EndUser>, InfraError> {
        Err(no_such("confirm_email"))
    }
    async fn update_user(
        &self,
        _: Uuid,
        _: &UserChange,
        _: OffsetDateTime,
    ) -> Result<Option<EndUser>, UserWriteError> {
        Err(no_such("update_user").into())
    }
    async fn start_session(
        &self,
        _: Uuid,
        _: Uuid,
        _: &str,
        _: OffsetDateTime,
    ) -> Result<EndUser, InfraError> {
        Err(no_such("start_session"))
    }
    async fn rotate(
        &self,
        _: &str,
        _: &str,
        _: OffsetDateTime,
        _: Duration,
    ) -> Result<Rotation, InfraError> {
        Err(no_such("rotate"))
    }
    async fn session_open(&self, _: Uuid) -> Result<bool, InfraError> {
        Err(no_such("session_open"))
    }
    async fn end_sessions(&self, _: Uuid, _: Uuid, _: SignOutScope) -> Result<(), InfraError> {
        Err(no_such("end_sessions"))
    }
    async fn list_users(&self, limit: u32) -> Result<(Vec<EndUser>, u64), InfraError> {
        let users = self.0.lock().unwrap();
        let newest_first = users.iter().rev().take(limit as usize).cloned().collect();
        Ok((newest_first, users.len() as u64))
    }
    async fn delete_user(&self, id: Uuid) -> Result<bool, InfraError> {
        let mut users = self.0.lock().unwrap();
        let before = users.len();
        users.retain(|u| u.id != id);
        Ok(users.len() < before)
    }
}

#[derive(Debug)]
struct MemoryInstance {
    target: GatewayTarget,
    users: Arc<MemoryUsers>,
}

#[async_trait]
impl DataApiInstance for MemoryInstance {
    fn target(&self) -> &GatewayTarget {
        &self.target
    }
    fn users(&self) -> &dyn TenantUsers {
        self.users.as_ref()
    }
    fn schema(&self) -> Arc<SchemaCache> {
        Arc::new(SchemaCache::default())
    }
    async fn reload_schema(&self) -> bool {
        false
    }
    async fn run(&self, _: KeyRole, _: &str, _: &Plan) -> Result<PlanRow, RunError> {
        Err(RunError::Instance(InstanceError::Unavailable))
    }
}

/// One instance per database, its users kept across starts; `down` makes every start
/// fail as a cluster that does not answer.
#[derive(Debug, Default)]
struct MemoryRuntime {
    users: Mutex<HashMap<DatabaseId, Arc<MemoryUsers>>>,
    started: Mutex<Vec<String>>,
    down: Mutex<bool>,
}

impl MemoryRuntime {
    fn users_of(&self, id: DatabaseId) -> Arc<MemoryUsers> {
        self.users.lock().unwrap().entry(id).or_default().clone()
    }
}

impl DataApiSignals for MemoryRuntime {
    fn stop(&self, _: DatabaseId) {}
}

#[async_trait]
impl DataApiRuntime for MemoryRuntime {
    fn fresh(&self, _: &str) -> Option<Arc<dyn DataApiInstance>> {
        None
    }

    async fn instance(
        &self,
        target: GatewayTarget,
    ) -> Result<Arc<dyn DataApiInstance>, InstanceError> {
        if *self.down.lock().unwrap() {
            return Err(InstanceError::Unavailable);
        }
        self.started
            .lock()
            .unwrap()
            .push(target.database.slug.as_str().to_owned());
        let users = self.users_of(target.database.id);
        Ok(Arc::new(MemoryInstance { target, users }))
    }
}

struct Fixture {
    world: World,
    runtime: Arc<MemoryRuntime>,
    service: DatabaseService,
}

async fn fixture() -> Fixture {
    let world = World::builder().accounts(&["ann", "bob"]).build().await;
    let runtime = Arc::new(MemoryRuntime::default());
    let service = DatabaseService::new(
        DatabasePorts {
            records: world.store.clone(),
            cluster: Some(Arc::new(NoopCluster)),
            projects: world.store.clone(),
            clock: world.clock.clone(),
            runtime: runtime.clone(),
            sealing: SealingKey::ephemeral(),
            offload: Arc::new(ThreadOffload),
            limiter: world.store.clone(),
            mail: Arc::new(NoMail),
        },
        DatabaseConfig::default(),
    );
    Fixture {
        world,
        runtime,
        service,
    }
}

impl Fixture {
    fn ann(&self) -> Principal {
        self.world.master("ann")
    }

    async fn database(&self, slug: &str) -> DatabaseId {
        self.service
            .create(
                &self.ann(),
                NewDatabase {
                    slug: slug.into(),
                    ..NewDatabase::default()
                },
            )
            .await
            .unwrap()
            .database
            .id
    }

    /// `n` users of database `id`, made one second apart (`user-0` first).
    fn users(&self, id: DatabaseId, n: usize) -> Vec<EndUser> {
        let now = OffsetDateTime::now_utc();
        let made: Vec<_> = (0..n)
            .map(|i| EndUser {
                id: Uuid::new_v4(),
                email: format!("user-{i}@example.com"),
                email_confirmed_at: Some(now),
                user_metadata: json!({}),
                app_metadata: json!({"provider": "email"}),
                created_at: now + time::Duration::seconds(i as i64),
                updated_at: now,
                last_sign_in_at: (i % 2 == 0).then_some(now),
            })
            .collect();
        self.runtime
            .users_of(id)
            .0
            .lock()
            .unwrap()
            .extend(made.iter().cloned());
        made
    }
}

#[tokio::test]
async fn the_owner_lists_the_users_newest_first_with_their_count() {
    let f = fixture().await;
    let id = f.database("shop").await;
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    let made = f.users(id, 3);

    let all = f.service.end_users(&f.ann(), id, 50).await.unwrap();
    assert_eq!(all.total, 3);
    let emails: Vec<_> = all.users.iter().map(|u| u.email.as_str()).collect();
    assert_eq!(
        emails,
        [
            "user-2@example.com",
            "user-1@example.com",
            "user-0@example.com"
        ]
    );
    assert_eq!(all.users[2], made[0]);

    let cut = f.service.end_users(&f.ann(), id, 1).await.unwrap();
    assert_eq!((cut.users.len(), cut.total), (1, 3));
    // The instance is the gateway's, started for the database as a request would start it.
    assert!(
        f.runtime
            .started
            .lock()
            .unwrap()
            .iter()
            .all(|s| s == "shop")
    );
}

#[tokio::test]
async fn the_owner_deletes_a_user_and_a_missing_one_is_not_found() {
    let f = fixture().await;
    let id = f.database("shop").await;
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    let made = f.users(id, 2);

    f.service
        .delete_end_user(&f.ann(), id, made[0].id)
        .await
        .unwrap();
    let left = f.service.end_users(&f.ann(), id, 50).await.unwrap();
    assert_eq!(left.total, 1);
    assert_eq!(left.users, vec![made[1].clone()]);

    for missing in [made[0].id, Uuid::new_v4()] {
        assert_eq!(
            f.service.delete_end_user(&f.ann(), id, missing).await,
            Err(DatabaseError::NotFound)
        );
    }
}

#[tokio::test]
async fn another_account_neither_sees_nor_deletes_the_users() {
    let f = fixture().await;
    let id = f.database("shop").await;
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    let made = f.users(id, 1);
    let bob = f.world.master("bob");

    assert_eq!(
        f.service.end_users(&bob, id, 50).await,
        Err(DatabaseError::NotFound)
    );
    assert_eq!(
        f.service.delete_end_user(&bob, id, made[0].id).await,
        Err(DatabaseError::NotFound)
    );
    assert_eq!(
        f.service.end_users(&f.ann(), id, 50).await.unwrap().total,
        1
    );
    assert!(
        f.runtime.started.lock().unwrap().len() <= 1,
        "bob started nothing"
    );
}

#[tokio::test]
async fn the_users_need_the_data_api_on() {
    let f = fixture().await;
    let id = f.database("shop").await;
    assert_eq!(
        f.service.end_users(&f.ann(), id, 50).await,
        Err(DatabaseError::DataApiNotEnabled)
    );
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    let made = f.users(id, 1);
    f.service.disable_data_api(&f.ann(), id).await.unwrap();
    assert_eq!(
        f.service.end_users(&f.ann(), id, 50).await,
        Err(DatabaseError::DataApiDisabled)
    );
    assert_eq!(
        f.service.delete_end_user(&f.ann(), id, made[0].id).await,
        Err(DatabaseError::DataApiDisabled)
    );
    assert!(f.runtime.started.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_instance_that_cannot_start_is_the_infrastructures_failure() {
    let f = fixture().await;
    let id = f.database("shop").await;
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    *f.runtime.down.lock().unwrap() = true;
    let Err(DatabaseError::Infra(e)) = f.service.end_users(&f.ann(), id, 50).await else {
        panic!("an instance that does not start is Infra");
    };
    assert!(e.to_string().contains("upstream unavailable"), "{e}");
}

#[tokio::test]
async fn a_sign_up_whose_confirmation_is_not_sent_leaves_no_user() {
    let f = fixture().await;
    let id = f.database("club").await;
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    let users = f.runtime.users_of(id);
    users.1.store(true, std::sync::atomic::Ordering::SeqCst);
    let target = f.service.data_api("club").await.unwrap();
    let instance = f.service.serve_data_api(target).await.unwrap();
    let auth = f.service.tenant_auth(instance);

    let refused = auth
        .sign_up("192.0.2.1", "cy@example.com", "long enough".into(), None)
        .await
        .unwrap_err();
    assert!(matches!(refused, AuthError::EmailNotSent(_)), "{refused:?}");
    assert_eq!(
        (refused.status(), refused.error_code()),
        (500, "unexpected_failure")
    );
    assert!(users.0.lock().unwrap().is_empty(), "the user was undone");
}

#[tokio::test]
async fn a_registered_address_signing_up_gets_a_stand_in_and_changes_nothing() {
    let f = fixture().await;
    let id = f.database("club").await;
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    let made = f.users(id, 1);
    let users = f.runtime.users_of(id);
    users.1.store(true, std::sync::atomic::Ordering::SeqCst);
    let target = f.service.data_api("club").await.unwrap();
    let instance = f.service.serve_data_api(target).await.unwrap();
    let auth = f.service.tenant_auth(instance);

    let answer = auth
        .sign_up(
            "192.0.2.1",
            "USER-0@example.com",
            "another password".into(),
            Some(json!({"plan": "free"})),
        )
        .await
        .unwrap();
    let quire_databases::SignedUp::Unconfirmed(stand_in) = answer else {
        panic!("no session for a registered address: {answer:?}");
    };
    assert_eq!(stand_in.email, "user-0@example.com");
    assert_ne!(stand_in.id, made[0].id);
    assert_eq!(stand_in.email_confirmed_at, None);
    assert_eq!(stand_in.user_metadata, json!({"plan": "free"}));
    assert_eq!(*users.0.lock().unwrap(), made, "the user is as it was");
    // With confirmations off, it is GoTrue's refusal.
    users.1.store(false, std::sync::atomic::Ordering::SeqCst);
    let refused = auth
        .sign_up(
            "192.0.2.1",
            "user-0@example.com",
            "another password".into(),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(refused.error_code(), "user_already_exists");
}
