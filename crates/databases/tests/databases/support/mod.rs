//! A service over the testkit's fakes for the domain tests: the world's store (records,
//! projects, limiter) and keys, data API instances of memory with their users, a cluster of
//! memory, the account's mail as told.

#![allow(clippy::unwrap_used, dead_code)] // test code: a panic is the failure report

use std::sync::Arc;

use quire_accounts::SealingKey;
use quire_databases::{
    AuthSettings, DataApiSecret, DatabaseConfig, DatabasePorts, DatabaseService, EndUser,
    NewDatabase, TenantAuth,
};
use quire_kernel::{DatabaseId, Principal};
use quire_testkit::databases::{
    MemoryCluster, MemoryEndUserMail, MemoryRuntime, MemoryUsers, ServiceKeys,
};
use quire_testkit::{ThreadOffload, World};
use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

pub struct Fixture {
    pub world: World,
    /// What the service was built from.
    pub ports: DatabasePorts,
    pub runtime: Arc<MemoryRuntime>,
    pub cluster: Arc<MemoryCluster>,
    pub mail: Arc<MemoryEndUserMail>,
    pub service: DatabaseService,
}

pub async fn fixture() -> Fixture {
    let world = World::builder().accounts(&["ann", "bob"]).build().await;
    let runtime = Arc::new(MemoryRuntime::default());
    let mail = Arc::new(MemoryEndUserMail::default());
    let cluster = Arc::new(MemoryCluster::new());
    let ports = DatabasePorts {
        records: world.store.clone(),
        cluster: Some(cluster.clone()),
        projects: world.store.clone(),
        clock: world.clock.clone(),
        runtime: runtime.clone(),
        sealing: SealingKey::ephemeral(),
        offload: Arc::new(ThreadOffload),
        limiter: world.store.clone(),
        mail: mail.clone(),
    };
    let service = DatabaseService::new(ports.clone(), DatabaseConfig::default());
    Fixture {
        world,
        ports,
        runtime,
        cluster,
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

    /// Who a Quire key is, as the world's key service says.
    pub fn keys(&self) -> ServiceKeys {
        ServiceKeys(self.world.services.keys.clone())
    }

    /// Database `slug` of ann's, its data API on, and its secret and keys.
    pub async fn serving(&self, slug: &str) -> (DatabaseId, DataApiSecret) {
        let id = self.database(slug).await;
        self.service.enable_data_api(&self.ann(), id).await.unwrap();
        (id, self.service.secret(&self.ann(), id).await.unwrap())
    }

    /// The auth use cases of database `slug` (its data API on) with confirmations on, and
    /// its users.
    pub async fn confirming(&self, slug: &str) -> (TenantAuth, Arc<MemoryUsers>, Vec<EndUser>) {
        let id = self.database(slug).await;
        self.service.enable_data_api(&self.ann(), id).await.unwrap();
        let made = self.users(id, 1);
        let users = self.runtime.users_of(id);
        users.set_settings(AuthSettings {
            confirm_email: true,
            ..AuthSettings::default()
        });
        let target = self.service.data_api(slug).await.unwrap();
        let instance = self.service.serve_data_api(target).await.unwrap();
        (self.service.tenant_auth(instance), users, made)
    }

    /// The auth use cases of database `slug` (made now, its data API on) under `settings`,
    /// its users, and its secret and keys.
    pub async fn auth(
        &self,
        slug: &str,
        settings: AuthSettings,
    ) -> (TenantAuth, Arc<MemoryUsers>, DataApiSecret) {
        let (id, secret) = self.serving(slug).await;
        let users = self.runtime.users_of(id);
        users.set_settings(settings);
        let target = self.service.data_api(slug).await.unwrap();
        let instance = self.service.serve_data_api(target).await.unwrap();
        (self.service.tenant_auth(instance), users, secret)
    }

    /// The messages queued to end users so far: to, subject, text.
    pub fn messages(&self) -> Vec<(String, String, String)> {
        self.mail.messages.lock().unwrap().clone()
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
        let users = self.runtime.users_of(id);
        for user in &made {
            users.insert(user.clone(), "a hash");
        }
        made
    }
}
