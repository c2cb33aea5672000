//! The `Cluster` port's contract list (`quire-store-contract`), on this cluster: what the
//! testkit's fake is held to as well.

use std::sync::Arc;

use quire_pgcluster::PgCluster;

async fn make() -> Option<(Arc<PgCluster>, ())> {
    Some((Arc::new(crate::cluster().await), ()))
}

quire_store_contract::cluster_contract!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    make
);
