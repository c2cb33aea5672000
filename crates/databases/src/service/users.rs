//! The owner's view of a database's end users (the dashboard's Users section): the list
//! with their count, and deleting one. The users live in the tenant's `auth` schema, which
//! the data API's instance reaches, so both need the data API on.

use std::sync::Arc;

use quire_kernel::{DatabaseId, InfraError, Principal};
use quire_projects::ProjectAccess;
use uuid::Uuid;

use super::{DatabaseError, DatabaseService};
use crate::auth::EndUser;
use crate::model::Database;
use crate::runtime::{DataApiInstance, GatewayTarget};

/// Most users one listing shows.
pub const MAX_END_USERS_LISTED: u32 = 1_000;

/// A database's end users, newest first, and how many there are in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndUsersView {
    pub users: Vec<EndUser>,
    pub total: u64,
}

impl DatabaseService {
    /// The database's end users, newest first, at most `limit` (and at most
    /// [`MAX_END_USERS_LISTED`]), with their count.
    ///
    /// # Errors
    /// `Unavailable`, `NotFound`, `InsufficientScope`, `DataApiNotEnabled` (never enabled),
    /// `DataApiDisabled`, `Infra` (also when its instance cannot start now).
    pub async fn end_users(
        &self,
        principal: &Principal,
        id: DatabaseId,
        limit: u32,
    ) -> Result<EndUsersView, DatabaseError> {
        let stops_seen = self.ports.runtime.stops();
        let (database, _) = self.reachable(principal, id, ProjectAccess::Read).await?;
        let instance = self.users_instance(database, stops_seen).await?;
        let (users, total) = instance
            .users()
            .list_users(0, limit.min(MAX_END_USERS_LISTED))
            .await?;
        Ok(EndUsersView { users, total })
    }

    /// Deletes end user `user` of the database, with their sessions and refresh tokens.
    ///
    /// # Errors
    /// `Unavailable`, `NotFound` (also when the database has no such user),
    /// `InsufficientScope`, `DataApiNotEnabled`, `DataApiDisabled`, `Infra`.
    pub async fn delete_end_user(
        &self,
        principal: &Principal,
        id: DatabaseId,
        user: Uuid,
    ) -> Result<(), DatabaseError> {
        let stops_seen = self.ports.runtime.stops();
        let (database, _) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let instance = self.users_instance(database, stops_seen).await?;
        if instance.users().delete_user(user).await? {
            Ok(())
        } else {
            Err(DatabaseError::NotFound)
        }
    }

    /// The running data API instance of `database`, started if need be, as the gateway
    /// gets it; refused when the data API is off. `stops_seen` was read before the record.
    async fn users_instance(
        &self,
        database: Database,
        stops_seen: u64,
    ) -> Result<Arc<dyn DataApiInstance>, DatabaseError> {
        if database.jwt_secret.is_none() {
            return Err(DatabaseError::DataApiNotEnabled);
        }
        if !database.data_api_enabled {
            return Err(DatabaseError::DataApiDisabled);
        }
        let target = GatewayTarget {
            tenant: self.access(&database)?,
            jwt_secret: self.jwt_secret(&database)?,
            database,
            stops_seen,
        };
        self.ports.runtime.instance(target).await.map_err(|e| {
            DatabaseError::Infra(InfraError::new(format!(
                "the data API instance cannot take the request: {e}"
            )))
        })
    }
}
