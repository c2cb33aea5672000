//! The `Cluster` port's contract (the testkit's `MemoryCluster` in this crate's tests,
//! `PgCluster` in `quire-pgcluster`'s): a tenant is made in three steps and dropped; a
//! drop undoes any prefix of a creation and may be retried; what exists is not made twice,
//! and a database needs its owner; sizes name the databases that exist and no other; a
//! dropped tenant runs no SQL and hears no reload; a new database leaves no table open to
//! `anon`, and only databases that exist are read for it.
//!
//! Listed once in `__cluster_list!`: [`cluster_contract!`](crate::cluster_contract) expands
//! one test per entry, and [`run`] dispatches to it, so a check left off the list is dead
//! code, which fails the build. Every check makes tenants of names of its own, so the
//! checks of one cluster run at once.

use std::sync::Arc;

use quire_databases::{Cluster, TenantAccess, TenantNames};
use quire_kernel::DatabaseId;
use quire_kernel::secret::random_url_token;

/// Every check of the `Cluster` contract, once. `$then` is called with `$args` and the
/// list.
#[doc(hidden)]
#[macro_export]
macro_rules! __cluster_list {
    ($then:ident $($args:tt)*) => {
        $crate::$then!($($args)* ;
            a_tenant_is_made_in_three_steps_and_dropped,
            a_drop_undoes_any_prefix_of_a_creation,
            what_exists_is_not_made_twice,
            sizes_name_the_databases_that_exist,
            a_dropped_tenant_runs_no_sql_and_hears_no_reload,
            open_tables_name_the_databases_that_exist
        );
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __cluster_dispatch {
    (; $($check:ident),+ $(,)?) => {
        /// Runs the contract check `check` (a name from the list) on `cluster`.
        ///
        /// # Panics
        /// When the check fails, or no check has that name.
        pub async fn run<C: Cluster + 'static>(check: &str, cluster: Arc<C>) {
            match check {
                $(stringify!($check) => $check(cluster.as_ref()).await,)+
                other => panic!("no cluster contract check named {other}"),
            }
        }
    };
}

__cluster_list!(__cluster_dispatch);

/// Expands one `#[tokio::test]` per check of the `Cluster` contract. `$make` is an async fn
/// returning `Option<(Arc<C>, G)>`, as for [`store_contract!`](crate::store_contract).
#[macro_export]
macro_rules! cluster_contract {
    ($(#[$attr:meta])* $make:path) => {
        $crate::__cluster_list!(__cluster_tests [$(#[$attr])*] $make);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __cluster_tests {
    ($attrs:tt $make:path ; $($check:ident),+ $(,)?) => {
        $($crate::__cluster_test!($attrs $make, $check);)+
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __cluster_test {
    ([$(#[$attr:meta])*] $make:path, $check:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $check() {
            if let Some((cluster, _guard)) = $make().await {
                $crate::cluster::run(stringify!($check), cluster).await;
            }
        }
    };
}

/// A tenant of names of its own, not yet made.
fn tenant() -> TenantAccess {
    TenantAccess {
        names: TenantNames::of(DatabaseId::new()),
        owner_password: random_url_token(),
        authenticator_password: random_url_token(),
    }
}

async fn made<C: Cluster + ?Sized>(cluster: &C) -> TenantAccess {
    let tenant = tenant();
    cluster.create_roles(&tenant).await.unwrap();
    cluster.create_database(&tenant.names).await.unwrap();
    cluster.prepare_database(&tenant).await.unwrap();
    tenant
}

/// Whether the cluster says `names`' database has a size.
async fn sized<C: Cluster + ?Sized>(cluster: &C, names: &TenantNames) -> bool {
    cluster
        .sizes(std::slice::from_ref(names))
        .await
        .unwrap()
        .contains_key(&names.database)
}

async fn a_tenant_is_made_in_three_steps_and_dropped<C: Cluster + ?Sized>(cluster: &C) {
    let tenant = made(cluster).await;
    let sizes = cluster
        .sizes(std::slice::from_ref(&tenant.names))
        .await
        .unwrap();
    assert!(sizes[&tenant.names.database] > 0, "{sizes:?}");
    cluster.run_sql(&tenant, "SELECT 1", 10).await.unwrap();
    cluster.announce_reload(&tenant).await.unwrap();
    cluster.drop_tenant(&tenant.names).await.unwrap();
    assert!(!sized(cluster, &tenant.names).await);
    // What is missing is no error: a drop may be retried.
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

async fn a_drop_undoes_any_prefix_of_a_creation<C: Cluster + ?Sized>(cluster: &C) {
    for steps in 0..=3 {
        let tenant = tenant();
        if steps >= 1 {
            cluster.create_roles(&tenant).await.unwrap();
        }
        if steps >= 2 {
            cluster.create_database(&tenant.names).await.unwrap();
        }
        if steps >= 3 {
            cluster.prepare_database(&tenant).await.unwrap();
        }
        cluster.drop_tenant(&tenant.names).await.unwrap();
        assert!(!sized(cluster, &tenant.names).await, "{steps} steps");
        // Nothing of it is left: the same names are made again from the start.
        cluster.create_roles(&tenant).await.unwrap();
        cluster.create_database(&tenant.names).await.unwrap();
        cluster.prepare_database(&tenant).await.unwrap();
        cluster.drop_tenant(&tenant.names).await.unwrap();
    }
}

async fn what_exists_is_not_made_twice<C: Cluster + ?Sized>(cluster: &C) {
    let tenant = made(cluster).await;
    assert!(cluster.create_roles(&tenant).await.is_err());
    assert!(cluster.create_database(&tenant.names).await.is_err());
    assert!(
        sized(cluster, &tenant.names).await,
        "the first is untouched"
    );
    // A database needs its owner role.
    let ownerless = self::tenant();
    assert!(cluster.create_database(&ownerless.names).await.is_err());
    assert!(!sized(cluster, &ownerless.names).await);
    cluster.drop_tenant(&tenant.names).await.unwrap();
}

async fn sizes_name_the_databases_that_exist<C: Cluster + ?Sized>(cluster: &C) {
    assert!(cluster.sizes(&[]).await.unwrap().is_empty());
    let kept = made(cluster).await;
    let dropped = made(cluster).await;
    cluster.drop_tenant(&dropped.names).await.unwrap();
    let never = tenant();
    let sizes = cluster
        .sizes(&[
            kept.names.clone(),
            dropped.names.clone(),
            never.names.clone(),
        ])
        .await
        .unwrap();
    assert_eq!(
        sizes.keys().collect::<Vec<_>>(),
        [&kept.names.database],
        "{sizes:?}"
    );
    cluster.drop_tenant(&kept.names).await.unwrap();
}

async fn a_dropped_tenant_runs_no_sql_and_hears_no_reload<C: Cluster + ?Sized>(cluster: &C) {
    let tenant = made(cluster).await;
    cluster.drop_tenant(&tenant.names).await.unwrap();
    assert!(cluster.run_sql(&tenant, "SELECT 1", 10).await.is_err());
    assert!(cluster.announce_reload(&tenant).await.is_err());
    let never = self::tenant();
    assert!(cluster.announce_reload(&never).await.is_err());
}

async fn open_tables_name_the_databases_that_exist<C: Cluster + ?Sized>(cluster: &C) {
    assert!(cluster.open_tables(&[]).await.is_empty());
    let kept = made(cluster).await;
    let dropped = made(cluster).await;
    cluster.drop_tenant(&dropped.names).await.unwrap();
    let open = cluster
        .open_tables(&[kept.clone(), dropped.clone(), tenant()])
        .await;
    // Nothing in `public` yet (the `auth` schema is not exposed).
    assert_eq!(
        open.into_iter().collect::<Vec<_>>(),
        [(kept.names.database.clone(), Vec::new())]
    );
    cluster.drop_tenant(&kept.names).await.unwrap();
}
