//! The `TenantUsers` port's contract list (`quire-store-contract`), on the users of an
//! instance of this runtime over a tenant database of the check's own: what the testkit's
//! fake is held to as well.

use std::sync::Arc;

use quire_data_runtime::{Runtime, RuntimeSettings};
use quire_databases::{Cluster, DataApiInstance, TenantNames};
use quire_kernel::AccountId;

use crate::support::{Tenant, cluster, started};

/// Drops the check's tenant database once the check is over, passed or not.
pub struct Dropped(TenantNames);

impl Drop for Dropped {
    fn drop(&mut self) {
        let names = self.0.clone();
        // Drop cannot await; a short-lived runtime on its own thread drops the tenant.
        let done = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async { cluster().await.drop_tenant(&names).await.ok() })
        });
        let _ = done.join();
    }
}

async fn make() -> Option<(Arc<dyn DataApiInstance>, Dropped)> {
    let cluster = cluster().await;
    let tenant = Tenant::new(&cluster, AccountId::new(), "users_contract", "").await;
    let runtime = Runtime::start(cluster.base_config(), RuntimeSettings::default());
    let instance = started(&runtime, &tenant).await;
    Some((instance, Dropped(tenant.access.names.clone())))
}

quire_store_contract::tenant_users_contract!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    make
);
