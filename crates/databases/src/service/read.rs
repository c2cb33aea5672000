//! Listing and fetching databases.

use quire_kernel::{DatabaseId, Principal, ProjectSlug};
use quire_projects::{ProjectAccess, address_project};

use super::{DatabaseError, DatabaseService, DatabaseView};

impl DatabaseService {
    /// The ready databases of a project (default: the key's home project), newest first.
    /// Without a cluster the list is empty, which is no error: `available()` says why.
    ///
    /// # Errors
    /// `InsufficientScope`, `Infra`.
    pub async fn list(
        &self,
        principal: &Principal,
        project: Option<&str>,
    ) -> Result<(Vec<DatabaseView>, ProjectSlug), DatabaseError> {
        let project = address_project(
            self.ports.projects.as_ref(),
            principal,
            project,
            ProjectAccess::Read,
        )
        .await?;
        let Some(cluster) = self.ports.cluster.as_ref() else {
            return Ok((Vec::new(), project.slug));
        };
        let now = self.ports.clock.now();
        let databases: Vec<_> = self
            .ports
            .records
            .project_databases(project.id)
            .await?
            .into_iter()
            .filter(|d| !d.lapsed(now))
            .collect();
        if databases.is_empty() {
            return Ok((Vec::new(), project.slug));
        }
        let names: Vec<_> = databases.iter().map(|d| d.names()).collect();
        let sizes = cluster.sizes(&names).await?;
        let views = databases
            .into_iter()
            .map(|d| {
                let size = sizes.get(&d.names().database).copied();
                self.view(d, project.slug.clone(), size)
            })
            .collect();
        Ok((views, project.slug))
    }

    /// # Errors
    /// `Unavailable`, `NotFound`, `InsufficientScope`, `Infra`.
    pub async fn get(
        &self,
        principal: &Principal,
        id: DatabaseId,
    ) -> Result<DatabaseView, DatabaseError> {
        let (database, project) = self.reachable(principal, id, ProjectAccess::Read).await?;
        let names = database.names();
        let size = self
            .cluster()?
            .sizes(std::slice::from_ref(&names))
            .await?
            .get(&names.database)
            .copied();
        Ok(self.view(database, project, size))
    }
}
