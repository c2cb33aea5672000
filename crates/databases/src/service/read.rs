//! Listing and fetching databases, and the tables they leave open to `anon`.

use quire_kernel::{DatabaseId, Principal, ProjectSlug};
use quire_projects::{ProjectAccess, address_project};

use super::{DatabaseError, DatabaseService, DatabaseView};

impl DatabaseService {
    /// The ready databases of a project (default: the key's home project), newest first,
    /// without their open tables (each would cost a connection to its database: see
    /// [`Self::open_tables_of`]). Without a cluster the list is empty, which is no error:
    /// `available()` says why.
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

    /// A database, with the tables it leaves open to `anon` (`None` when they could not
    /// be read).
    ///
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
        let mut view = self.view(database, project, size);
        self.open_tables_of(std::slice::from_mut(&mut view)).await;
        Ok(view)
    }

    /// Fills in the tables each of `views` leaves open to `anon`, each read as its owner on
    /// a connection to its database (the cluster's adapter reads several at once). A view
    /// whose tables could not be read keeps `None`.
    pub async fn open_tables_of(&self, views: &mut [DatabaseView]) {
        let Some(cluster) = self.ports.cluster.as_ref() else {
            return;
        };
        // A password that does not open leaves its database unread, as a failed read does.
        let tenants: Vec<_> = views
            .iter()
            .filter_map(|v| self.access(&v.database).ok())
            .collect();
        if tenants.is_empty() {
            return;
        }
        let mut open = cluster.open_tables(&tenants).await;
        for view in views {
            view.open_tables = open.remove(&view.database.names().database);
        }
    }
}
