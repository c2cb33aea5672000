//! The fakes the end-user tests run on: a data API instance of memory with its users, a
//! cluster that holds nothing, the account's mail as told, and a service over them.

#![allow(clippy::unwrap_used, dead_code)] // test code: a panic is the failure report

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use quire_accounts::SealingKey;
use quire_dataapi::{Plan, PlanRow, SchemaCache};
use quire_databases::{
    AuthSettings, Cluster, ClusterError, ConfirmationTry, DataApiInstance, DataApiRuntime,
    DataApiSignals, DatabaseConfig, DatabasePorts, DatabaseService, EndUser, EndUserMail,
    EndUserMailError, GatewayTarget, InstanceError, KeyRole, MailSlot, NewDatabase, NewEndUser,
    Rotation, RunError, SignOutScope, SqlOutcome, TenantAccess, TenantAuth, TenantNames,
    TenantUsers, UserChange, UserWriteError,
};
use quire_kernel::{AccountId, DatabaseId, InfraError, Principal};
use quire_testkit::{ThreadOffload, World};
use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

/// A cluster that does what it is told and holds nothing.
#[derive(Debug)]
pub struct NoopCluster;

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

/// The account's mail, as told: slots held and given back, messages queued; `full` refuses
/// every slot (a used-up quota), `unsendable` every message (one that cannot be made).
#[derive(Debug, Default)]
pub struct Mail {
    pub full: AtomicBool,
    pub unsendable: AtomicBool,
    pub held: Mutex<Vec<Uuid>>,
    pub released: Mutex<Vec<Uuid>>,
    pub queued: Mutex<Vec<String>>,
}

#[async_trait]
impl EndUserMail for Mail {
    async fn reserve(&self, _: AccountId) -> Result<MailSlot, EndUserMailError> {
        if self.full.load(Ordering::SeqCst) {
            return Err(EndUserMailError::QuotaExceeded);
        }
        let mail_id = Uuid::new_v4();
        self.held.lock().unwrap().push(mail_id);
        Ok(MailSlot {
            mail_id,
            reply_to: "ann@example.com".into(),
            reply_to_name: "ann".into(),
        })
    }
    async fn release(&self, slot: &MailSlot) -> Result<(), InfraError> {
        self.released.lock().unwrap().push(slot.mail_id);
        Ok(())
    }
    fn send(&self, _: MailSlot, to: &str, _: &str, _: &str) -> Result<(), EndUserMailError> {
        if self.unsendable.load(Ordering::SeqCst) {
            return Err(EndUserMailError::Failed("no such message".into()));
        }
        self.queued.lock().unwrap().push(to.to_owned());
        Ok(())
    }
}

/// The users of one database, newest last.
#[derive(Debug, Default)]
pub struct MemoryUsers(pub Mutex<Vec<EndUser>>, pub AtomicBool);

fn no_such(what: &str) -> InfraError {
    InfraError::new(format!("{what} is not used by these tests"))
}

#[async_trait]
impl TenantUsers for MemoryUsers {
    async fn settings(&self) -> Result<AuthSettings, InfraError> {
        Ok(AuthSettings {
            confirm_email: self.1.load(Ordering::SeqCst),
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
        _: u32,
    ) -> Result<bool, InfraError> {
        Err(no_such("confirmation_pending"))
    }
    async fn try_confirmation(
        &self,
        _: &str,
        _: OffsetDateTime,
        _: Duration,
        _: u32,
    ) -> Result<Option<ConfirmationTry>, InfraError> {
        Err(no_such("try_confirmation"))
    }
    async fn confirm_email(
        &self,
        _: &str,
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
pub struct MemoryInstance {
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
pub struct MemoryRuntime {
    users: Mutex<HashMap<DatabaseId, Arc<MemoryUsers>>>,
    pub started: Mutex<Vec<String>>,
    pub down: Mutex<bool>,
}

impl MemoryRuntime {
    pub fn users_of(&self, id: DatabaseId) -> Arc<MemoryUsers> {
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

pub struct Fixture {
    pub world: World,
    pub runtime: Arc<MemoryRuntime>,
    pub mail: Arc<Mail>,
    pub service: DatabaseService,
}

pub async fn fixture() -> Fixture {
    let world = World::builder().accounts(&["ann", "bob"]).build().await;
    let runtime = Arc::new(MemoryRuntime::default());
    let mail = Arc::new(Mail::default());
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
            mail: mail.clone(),
        },
        DatabaseConfig::default(),
    );
    Fixture {
        world,
        runtime,
        mail,
        service,
    }
}

impl Fixture {
    pub fn ann(&self) -> Principal {
        self.world.master("ann")
    }

    pub async fn database(&self, slug: &str) -> DatabaseId {
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

    /// The auth use cases of database `slug` (its data API on) with confirmations on, and
    /// its users.
    pub async fn confirming(&self, slug: &str) -> (TenantAuth, Arc<MemoryUsers>, Vec<EndUser>) {
        let id = self.database(slug).await;
        self.service.enable_data_api(&self.ann(), id).await.unwrap();
        let made = self.users(id, 1);
        let users = self.runtime.users_of(id);
        users.1.store(true, Ordering::SeqCst);
        let target = self.service.data_api(slug).await.unwrap();
        let instance = self.service.serve_data_api(target).await.unwrap();
        (self.service.tenant_auth(instance), users, made)
    }

    /// `n` users of database `id`, made one second apart (`user-0` first).
    pub fn users(&self, id: DatabaseId, n: usize) -> Vec<EndUser> {
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
