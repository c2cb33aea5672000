//! The data API's settings (`crate::settings`): changed by the owner, on or off, taken by
//! every replica's instance within its record check.

use quire_kernel::{DatabaseId, InfraError, Principal};
use quire_projects::ProjectAccess;
use serde_json::Value;

use super::{DatabaseError, DatabaseService, DatabaseView};
use crate::model::Database;
use crate::settings::SettingsPatch;

/// Times a change is tried again when another changed the settings between its read and
/// its write.
const TRIES: usize = 4;

/// The schemas of a database, as one JSON array.
const SCHEMAS_SQL: &str = "SELECT coalesce(json_agg(nspname::text), '[]') FROM pg_namespace";

impl DatabaseService {
    /// Changes the data API's settings as `patch` says, whether the data API is on or off,
    /// and answers the database with them and the exposed schemas it does not have (they are
    /// accepted: the SQL that makes them may come after). This replica's instance stops at
    /// once, so its next request starts one with the new settings; the others' instances are
    /// replaced at their next record check, within a second. A patch that changes nothing
    /// stops nothing.
    ///
    /// # Errors
    /// `Unavailable`, `NotFound`, `InsufficientScope`, `Invalid` (a value breaking its rule:
    /// nothing changed), `Infra`.
    pub async fn set_data_api_settings(
        &self,
        principal: &Principal,
        id: DatabaseId,
        patch: SettingsPatch,
    ) -> Result<DatabaseView, DatabaseError> {
        let (mut database, project) = self.reachable(principal, id, ProjectAccess::Write).await?;
        for _ in 0..TRIES {
            let next = database
                .data_api_settings
                .patched(patch.clone())
                .map_err(DatabaseError::Invalid)?;
            if next == database.data_api_settings {
                return Ok(self.view_with_schemas(database, project).await);
            }
            let now = self.ports.clock.now();
            if self
                .ports
                .records
                .set_data_api_settings(id, &database.data_api_settings, &next, now)
                .await?
            {
                self.ports.runtime.stop(id);
                database.data_api_settings = next;
                database.updated_at = now;
                return Ok(self.view_with_schemas(database, project).await);
            }
            // Changed meanwhile (or gone): the patch applies to what is there now.
            database = self.reachable(principal, id, ProjectAccess::Write).await?.0;
        }
        Err(InfraError::new("the data API's settings kept changing under this request").into())
    }

    async fn view_with_schemas(
        &self,
        database: Database,
        project: quire_kernel::ProjectSlug,
    ) -> DatabaseView {
        let missing = self.missing_schemas(&database).await;
        let mut view = self.view(database, project, None);
        view.missing_schemas = missing;
        view
    }

    /// The exposed schemas `database` lacks, read as its owner; `None` when it could not
    /// be read (the database takes no more connections, the cluster failed).
    async fn missing_schemas(&self, database: &Database) -> Option<Vec<String>> {
        let tenant = self.access(database).ok()?;
        let outcome = self
            .cluster()
            .ok()?
            .run_sql(&tenant, SCHEMAS_SQL, 1)
            .await
            .ok()?;
        let present: Vec<&str> = match outcome.rows.first()?.first()? {
            Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
            _ => return None,
        };
        Some(
            database
                .data_api_settings
                .exposed_schemas
                .iter()
                .filter(|s| !present.contains(&s.as_str()))
                .cloned()
                .collect(),
        )
    }
}
