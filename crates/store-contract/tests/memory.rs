//! The fakes pass the same contracts as the real adapters, so domain tests that use them
//! test against behaviour the real adapters are held to.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::sync::Arc;

use quire_testkit::MemoryStore;

async fn make() -> Option<(Arc<MemoryStore>, ())> {
    Some((Arc::new(MemoryStore::new()), ()))
}

quire_store_contract::store_contract!(make);

/// The `Cluster` contract on the testkit's cluster of memory.
mod cluster {
    use std::sync::Arc;

    use quire_testkit::databases::MemoryCluster;

    async fn make() -> Option<(Arc<MemoryCluster>, ())> {
        Some((Arc::new(MemoryCluster::new()), ()))
    }

    quire_store_contract::cluster_contract!(make);
}

/// The `TenantUsers` contract on the users of the testkit's data API instances.
mod tenant_users {
    use std::sync::Arc;

    use quire_accounts::SealedSecret;
    use quire_databases::{
        DataApiInstance, DataApiRuntime, Database, DatabaseStatus, GatewayTarget, TenantAccess,
        TenantNames,
    };
    use quire_kernel::{AccountId, DatabaseId, ProjectId, ProjectSlug};
    use quire_testkit::databases::MemoryRuntime;

    async fn make() -> Option<(Arc<dyn DataApiInstance>, ())> {
        let id = DatabaseId::new();
        let now = time::OffsetDateTime::now_utc();
        let sealed = SealedSecret::stored(String::new());
        let target = GatewayTarget {
            database: Database {
                id,
                account_id: AccountId::new(),
                project_id: ProjectId::new(),
                slug: ProjectSlug::parse("users").unwrap(),
                name: "users".into(),
                status: DatabaseStatus::Ready,
                lease_until: None,
                expires_at: None,
                owner_secret: sealed.clone(),
                authenticator_secret: sealed.clone(),
                jwt_secret: Some(sealed),
                data_api_enabled: true,
                data_api_settings: quire_databases::DataApiSettings::default(),
                created_at: now,
                updated_at: now,
            },
            tenant: TenantAccess {
                names: TenantNames::of(id),
                owner_password: String::new(),
                authenticator_password: String::new(),
            },
            jwt_secret: String::new(),
            stops_seen: 0,
        };
        Some((MemoryRuntime::default().instance(target).await.unwrap(), ()))
    }

    quire_store_contract::tenant_users_contract!(make);
}
