//! What the data gateway asks of the service: the instance behind a slug, and whether a
//! Quire key may act for a database.

use std::sync::Arc;

use quire_kernel::Principal;
use quire_projects::{ProjectAccess, authorize_project};

use super::{DatabaseError, DatabaseService};
use crate::model::DatabaseStatus;
use crate::runtime::{DataApiInstance, GatewayTarget, InstanceError};

/// Why the gateway cannot reach a database's data API.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GatewayError {
    /// No ready database has that slug, or its data API is off.
    #[error("database not found")]
    NotFound,
    #[error(transparent)]
    Instance(#[from] InstanceError),
    #[error(transparent)]
    Service(#[from] DatabaseError),
}

/// A database's data API on this replica, before a request's keys are checked.
#[derive(Debug, Clone)]
pub enum Reach {
    Running(Arc<dyn DataApiInstance>),
    Stopped(Box<GatewayTarget>),
}

impl Reach {
    #[must_use]
    pub fn target(&self) -> &GatewayTarget {
        match self {
            Self::Running(instance) => instance.target(),
            Self::Stopped(target) => target,
        }
    }
}

impl DatabaseService {
    /// Where database `slug`'s data API stands on this replica: its instance when one is
    /// running whose record was checked within the last second, else the record is read
    /// (a database gone, or its data API off, is `NotFound` from then on). Nothing is
    /// started here: the gateway checks the request's keys first.
    ///
    /// # Errors
    /// `NotFound`; `Service` (`Unavailable` without a cluster, `Infra`).
    pub async fn data_api(&self, slug: &str) -> Result<Reach, GatewayError> {
        self.cluster()?;
        if let Some(instance) = self.ports.runtime.fresh(slug) {
            return Ok(Reach::Running(instance));
        }
        // Before the record: a stop (a rotation) between the two makes this target stale.
        let stops_seen = self.ports.runtime.stops();
        let now = self.ports.clock.now();
        let database = self
            .ports
            .records
            .database_by_slug(slug)
            .await
            .map_err(DatabaseError::from)?
            .filter(|d| d.status == DatabaseStatus::Ready && d.data_api_enabled && !d.lapsed(now));
        let Some(database) = database else {
            return Err(GatewayError::NotFound);
        };
        Ok(Reach::Stopped(Box::new(GatewayTarget {
            tenant: self.access(&database)?,
            jwt_secret: self.jwt_secret(&database)?,
            database,
            stops_seen,
        })))
    }

    /// The instance for a request whose keys were checked: the running one, or one started
    /// for `target`.
    ///
    /// # Errors
    /// `Instance` (starting, unavailable, saturated).
    pub async fn serve_data_api(
        &self,
        reach: Reach,
    ) -> Result<Arc<dyn DataApiInstance>, GatewayError> {
        match reach {
            Reach::Running(instance) => Ok(instance),
            Reach::Stopped(target) => Ok(self.ports.runtime.instance(*target).await?),
        }
    }

    /// Whether a Quire credential may act as `service_role` on the database: one of its
    /// account's, in a project it may write to. (`base` in its apps is the edge's check.)
    ///
    /// # Errors
    /// `Infra`.
    pub async fn key_may_serve(
        &self,
        principal: &Principal,
        target: &GatewayTarget,
    ) -> Result<bool, DatabaseError> {
        if principal.account_id != target.database.account_id {
            return Ok(false);
        }
        match authorize_project(
            self.ports.projects.as_ref(),
            principal,
            target.database.project_id,
            ProjectAccess::Write,
        )
        .await
        {
            Ok(_) => Ok(true),
            Err(quire_projects::AddressError::InsufficientScope) => Ok(false),
            Err(quire_projects::AddressError::Infra(e)) => Err(e.into()),
        }
    }
}
