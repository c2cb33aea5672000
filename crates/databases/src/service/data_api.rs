//! The data API's lifecycle: on, off, its secret and keys (shown and rotated), and a schema
//! reload.

use std::time::Duration;

use quire_kernel::secret::random_url_token;
use quire_kernel::{DatabaseId, Principal, ProjectSlug};
use quire_projects::ProjectAccess;

use super::{DatabaseError, DatabaseService, DatabaseView};
use crate::auth::AuthError;
use crate::keys::ApiKeys;
use crate::model::Database;

/// Requests of a database's confirmation link per client address in five minutes: the
/// figure of the link's own limit in the auth subset, counted again before an instance is
/// reached, since the link is open without a key.
const LINK_REQUESTS_PER_5_MIN: u32 = 30;
const FIVE_MINUTES: Duration = Duration::from_secs(300);

/// What a client of the data API needs. `Debug` shows the URLs only.
#[derive(Clone, PartialEq, Eq)]
pub struct DataApiSecret {
    pub jwt_secret: String,
    pub keys: ApiKeys,
    pub api_url: String,
    pub rest_url: String,
    pub auth_url: String,
}

impl std::fmt::Debug for DataApiSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataApiSecret")
            .field("rest_url", &self.rest_url)
            .finish_non_exhaustive()
    }
}

impl DatabaseService {
    /// Turns the data API on; the first time, makes its 256-bit JWT secret (and so its
    /// keys). Instances start on their first request.
    ///
    /// # Errors
    /// `Unavailable`, `NotFound`, `InsufficientScope`, `Infra`.
    pub async fn enable_data_api(
        &self,
        principal: &Principal,
        id: DatabaseId,
    ) -> Result<DatabaseView, DatabaseError> {
        let (mut database, project) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let fresh = database
            .jwt_secret
            .is_none()
            .then(|| self.seal(id, "jwt", &random_url_token()));
        let now = self.ports.clock.now();
        if !self
            .ports
            .records
            .set_data_api(id, true, fresh.as_ref(), now)
            .await?
        {
            return Err(DatabaseError::NotFound);
        }
        if let Some(secret) = fresh {
            database.jwt_secret = Some(secret);
        }
        database.data_api_enabled = true;
        database.updated_at = now;
        Ok(self.view(database, project, None))
    }

    /// Turns the data API off: this replica's instance stops at once, the others at their
    /// next look at the record. The secret is kept, so the keys work again once re-enabled
    /// (switching is not revoking: [`Self::rotate_secret`] is).
    ///
    /// # Errors
    /// `Unavailable`, `NotFound`, `InsufficientScope`, `Infra`.
    pub async fn disable_data_api(
        &self,
        principal: &Principal,
        id: DatabaseId,
    ) -> Result<(), DatabaseError> {
        self.reachable(principal, id, ProjectAccess::Write).await?;
        let now = self.ports.clock.now();
        if !self
            .ports
            .records
            .set_data_api(id, false, None, now)
            .await?
        {
            return Err(DatabaseError::NotFound);
        }
        self.ports.runtime.stop(id);
        Ok(())
    }

    /// The JWT secret, the keys and the URLs.
    ///
    /// # Errors
    /// `Unavailable`, `NotFound`, `InsufficientScope`, `DataApiNotEnabled` (never enabled),
    /// `Infra`.
    pub async fn secret(
        &self,
        principal: &Principal,
        id: DatabaseId,
    ) -> Result<DataApiSecret, DatabaseError> {
        let (database, project) = self.reachable(principal, id, ProjectAccess::Write).await?;
        self.secret_of(database, project)
    }

    /// Replaces the JWT secret with a new one, and so both keys and every end user's access
    /// token: what the old secret signed is refused at once on this replica (its instance
    /// stops) and within a record check on the others (an instance under another secret is
    /// not reused). Refresh tokens are not signed with it, so signed-in end users keep their
    /// sessions and get tokens under the new secret at their next refresh. Whether the data
    /// API is on or off; the switch stays as it is.
    ///
    /// # Errors
    /// `Unavailable`, `NotFound`, `InsufficientScope`, `DataApiNotEnabled` (never enabled),
    /// `Infra`.
    pub async fn rotate_secret(
        &self,
        principal: &Principal,
        id: DatabaseId,
    ) -> Result<DataApiSecret, DatabaseError> {
        let (mut database, project) = self.reachable(principal, id, ProjectAccess::Write).await?;
        let old = database
            .jwt_secret
            .clone()
            .ok_or(DatabaseError::DataApiNotEnabled)?;
        let fresh = self.seal(id, "jwt", &random_url_token());
        let now = self.ports.clock.now();
        let rotated = self
            .ports
            .records
            .rotate_jwt_secret(id, &old, &fresh, now)
            .await?;
        self.ports.runtime.stop(id);
        if !rotated {
            // Another rotation won the race (its secret is as new as this one would have
            // been), or the database went: the record says which.
            return self.secret(principal, id).await;
        }
        database.jwt_secret = Some(fresh);
        database.updated_at = now;
        self.secret_of(database, project)
    }

    fn secret_of(
        &self,
        database: Database,
        project: ProjectSlug,
    ) -> Result<DataApiSecret, DatabaseError> {
        let jwt_secret = self.jwt_secret(&database)?;
        let view = self.view(database, project, None);
        Ok(DataApiSecret {
            keys: ApiKeys::derive(
                &jwt_secret,
                view.database.slug.as_str(),
                view.database.created_at,
            ),
            jwt_secret,
            api_url: view.api_url,
            rest_url: view.rest_url,
            auth_url: view.auth_url,
        })
    }

    /// Has every replica's instance load the schema again.
    ///
    /// # Errors
    /// `Unavailable`, `NotFound`, `InsufficientScope`, `DataApiDisabled` (off now, by the
    /// shared record, whatever this replica runs), `Infra`.
    pub async fn reload(&self, principal: &Principal, id: DatabaseId) -> Result<(), DatabaseError> {
        let (database, _) = self.reachable(principal, id, ProjectAccess::Write).await?;
        if !database.data_api_enabled {
            return Err(DatabaseError::DataApiDisabled);
        }
        let tenant = self.access(&database)?;
        self.cluster()?.announce_reload(&tenant).await?;
        Ok(())
    }

    /// Counts a request of `database`'s confirmation link (the one route open without a
    /// key) from `client` before anything starts for it: a client past the link's limit is
    /// refused here and never wakes the database's instance. Every link request passes
    /// here and then the auth subset's own count, so the two refuse together.
    ///
    /// # Errors
    /// `RateLimited`; `Infra` when the limiter's store failed.
    pub async fn admit_link(&self, database: DatabaseId, client: &str) -> Result<(), AuthError> {
        let bucket = format!("db-link:{}", database.0);
        let now = self.ports.clock.now();
        let admitted = self
            .ports
            .limiter
            .hit(&bucket, client, FIVE_MINUTES, LINK_REQUESTS_PER_5_MIN, now)
            .await?;
        if admitted {
            Ok(())
        } else {
            Err(AuthError::RateLimited {
                retry_after_secs: FIVE_MINUTES.as_secs(),
            })
        }
    }

    /// The database's JWT secret, opened.
    ///
    /// # Errors
    /// `DataApiNotEnabled` when it was never made; `Infra` when it does not open.
    pub fn jwt_secret(&self, database: &Database) -> Result<String, DatabaseError> {
        let sealed = database
            .jwt_secret
            .as_ref()
            .ok_or(DatabaseError::DataApiNotEnabled)?;
        self.open(database.id, "jwt", sealed)
    }
}
