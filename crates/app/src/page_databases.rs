//! The databases a page may name, as the database service decides it.

use async_trait::async_trait;
use quire_databases::{DatabaseError, DatabaseService};
use quire_kernel::{AccountId, InfraError, ProjectId};
use quire_pages::PageDatabases;

/// [`PageDatabases`] over [`DatabaseService`].
#[derive(Debug, Clone)]
pub(crate) struct ServiceDatabases(pub DatabaseService);

#[async_trait]
impl PageDatabases for ServiceDatabases {
    async fn may_name(
        &self,
        account: AccountId,
        project: ProjectId,
        slug: &str,
    ) -> Result<bool, InfraError> {
        self.0
            .page_may_name(account, project, slug)
            .await
            .map_err(|e| match e {
                DatabaseError::Infra(e) => e,
                other => InfraError::new(other.to_string()),
            })
    }
}
