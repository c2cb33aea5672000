//! The `QuireKeys` port over a key service (a world's): what the data gateway asks of its
//! state's.

use async_trait::async_trait;
use quire_databases::QuireKeys;
use quire_kernel::Principal;
use quire_keys::KeyService;

/// Who a Quire key is, as `KeyService` says.
#[derive(Debug, Clone)]
pub struct ServiceKeys(pub KeyService);

#[async_trait]
impl QuireKeys for ServiceKeys {
    async fn principal(&self, key: &str) -> Option<Principal> {
        self.0
            .authenticate(Some(&format!("Bearer {key}")))
            .await
            .ok()
    }
}
