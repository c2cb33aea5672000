//! Creating and deleting databases, and the janitor's sweep. A creation is a record in
//! `provisioning` with a lease, then the cluster's steps, then `ready`; a failed step undoes
//! the cluster's part and the record, and a creation whose process died is undone by the
//! janitor once its lease lapses.

use std::time::Duration;

use quire_kernel::quota::kept_within;
use quire_kernel::secret::random_url_token;
use quire_kernel::{DatabaseId, InfraError, Principal, ProjectSlug};
use quire_projects::{MAX_NAME_CHARS, ProjectAccess, address_project};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{DatabaseError, DatabaseService, DatabaseView};
use crate::model::{Database, DatabaseStatus, TenantAccess};
use crate::ports::InsertDatabaseError;

/// A new database's fields, as the request typed them.
#[derive(Debug, Clone, Default)]
pub struct NewDatabase {
    pub slug: String,
    pub name: Option<String>,
    pub project: Option<String>,
    pub expires_at: Option<String>,
}

/// What the janitor's sweep finished.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    /// Creations whose request died, undone.
    pub abandoned: usize,
    /// Deletions finished (a drop that had failed, or was cut short).
    pub deleted: usize,
    /// Ephemeral databases dropped at their `expiresAt`.
    pub expired: usize,
}

impl DatabaseService {
    /// Creates a database in a project (default: the key's home project).
    ///
    /// # Errors
    /// `Unavailable`, `InvalidSlug`, `Invalid` (name, expiresAt), `InsufficientScope`,
    /// `QuotaExceeded` (the project's account has as many databases as it may),
    /// `StorageQuotaExceeded` (they hold their quota of bytes), `SlugTaken`, `Infra` (the
    /// cluster failed; nothing is left of the database).
    pub async fn create(
        &self,
        principal: &Principal,
        new: NewDatabase,
    ) -> Result<DatabaseView, DatabaseError> {
        let cluster = self.cluster()?.clone();
        let slug = ProjectSlug::parse(&new.slug).map_err(|_| DatabaseError::InvalidSlug)?;
        let now = self.ports.clock.now();
        let name = match new.name.as_deref() {
            Some(raw) => check_name(raw)?,
            None => slug.as_str().to_owned(),
        };
        let expires_at = new
            .expires_at
            .as_deref()
            .map(|raw| expires_at(raw, now))
            .transpose()?;
        let project = address_project(
            self.ports.projects.as_ref(),
            principal,
            new.project.as_deref(),
            ProjectAccess::Write,
        )
        .await?;
        Self::check_room(self.usage_of(project.account_id).await?)?;
        let id = DatabaseId(uuid::Uuid::now_v7());
        let owner_password = random_url_token();
        let authenticator_password = random_url_token();
        let database = Database {
            id,
            account_id: project.account_id,
            project_id: project.id,
            slug,
            name,
            status: DatabaseStatus::Provisioning,
            lease_until: Some(now + lease(self.config.lease)),
            expires_at,
            owner_secret: self.seal(id, "owner", &owner_password),
            authenticator_secret: self.seal(id, "authenticator", &authenticator_password),
            jwt_secret: None,
            data_api_enabled: false,
            data_api_settings: crate::settings::DataApiSettings::default(),
            created_at: now,
            updated_at: now,
        };
        self.ports
            .records
            .insert_database(&database)
            .await
            .map_err(|e| match e {
                InsertDatabaseError::SlugTaken => DatabaseError::SlugTaken,
                InsertDatabaseError::Infra(e) => DatabaseError::Infra(e),
            })?;
        let undo = async {
            let _ = self.ports.records.delete_database(id).await;
            Ok(())
        };
        kept_within(self.passed_quota(project.account_id), undo).await?;
        let tenant = TenantAccess {
            names: database.names(),
            owner_password,
            authenticator_password,
        };
        let made = async {
            cluster.create_roles(&tenant).await?;
            cluster.create_database(&tenant.names).await?;
            cluster.prepare_database(&tenant).await?;
            if self
                .ports
                .records
                .mark_ready(id, self.ports.clock.now())
                .await?
            {
                Ok(())
            } else {
                Err(InfraError::new(
                    "a database's creation outlived its lease and was undone",
                ))
            }
        }
        .await;
        if let Err(e) = made {
            self.undo_creation(&database).await;
            return Err(e.into());
        }
        let ready = Database {
            status: DatabaseStatus::Ready,
            lease_until: None,
            ..database
        };
        Ok(self.view(ready, project.slug, Some(0)))
    }

    /// Best effort: a step that fails here leaves the record provisioning, and the janitor
    /// undoes it once its lease lapses (the domain has no logger; the janitor's run is
    /// what is logged).
    async fn undo_creation(&self, database: &Database) {
        let Ok(cluster) = self.cluster() else { return };
        if cluster.drop_tenant(&database.names()).await.is_ok() {
            let _ = self.ports.records.delete_database(database.id).await;
        }
    }

    /// Deletes a database: its data API stops, the cluster drops it, the record goes.
    ///
    /// # Errors
    /// `Unavailable`, `NotFound`, `InsufficientScope`, `Infra` (the drop failed: the
    /// record stays `deleting` and the janitor retries).
    pub async fn delete(&self, principal: &Principal, id: DatabaseId) -> Result<(), DatabaseError> {
        let (database, _) = self.reachable(principal, id, ProjectAccess::Write).await?;
        if !self
            .ports
            .records
            .mark_deleting(id, self.ports.clock.now())
            .await?
        {
            return Err(DatabaseError::NotFound);
        }
        self.finish_delete(&database).await
    }

    async fn finish_delete(&self, database: &Database) -> Result<(), DatabaseError> {
        self.ports.runtime.stop(database.id);
        self.cluster()?.drop_tenant(&database.names()).await?;
        self.ports.records.delete_database(database.id).await?;
        Ok(())
    }

    /// Finishes what died or lapsed: creations past their lease, deletions not finished,
    /// ephemeral databases past their `expiresAt`. Without a cluster there is nothing to do.
    ///
    /// # Errors
    /// `Infra` when the records cannot be read; a database that fails is left for the next
    /// sweep.
    pub async fn sweep(&self) -> Result<Swept, DatabaseError> {
        if self.ports.cluster.is_none() {
            return Ok(Swept::default());
        }
        let now = self.ports.clock.now();
        let mut swept = Swept::default();
        for database in self.ports.records.janitor_due(now).await? {
            match database.status {
                DatabaseStatus::Provisioning => {
                    swept.abandoned += usize::from(self.finish_delete(&database).await.is_ok());
                }
                DatabaseStatus::Deleting => {
                    swept.deleted += usize::from(self.finish_delete(&database).await.is_ok());
                }
                DatabaseStatus::Ready => {
                    let marked = self.ports.records.mark_deleting(database.id, now).await?;
                    let done = marked && self.finish_delete(&database).await.is_ok();
                    swept.expired += usize::from(done);
                }
            }
        }
        Ok(swept)
    }
}

fn lease(d: Duration) -> time::Duration {
    time::Duration::try_from(d).unwrap_or(time::Duration::minutes(2))
}

fn check_name(raw: &str) -> Result<String, DatabaseError> {
    let n = raw.chars().count();
    let name = raw.trim();
    if name.is_empty() || n > MAX_NAME_CHARS {
        return Err(DatabaseError::Invalid(format!(
            "name must be 1-{MAX_NAME_CHARS} characters"
        )));
    }
    if quire_kernel::text::has_control(name) {
        return Err(DatabaseError::Invalid(
            "name must not contain control characters".into(),
        ));
    }
    Ok(name.to_owned())
}

fn expires_at(raw: &str, now: OffsetDateTime) -> Result<OffsetDateTime, DatabaseError> {
    let t = OffsetDateTime::parse(raw, &Rfc3339).map_err(|_| {
        DatabaseError::Invalid("expiresAt must be an ISO 8601 (RFC 3339) time".into())
    })?;
    if t <= now {
        return Err(DatabaseError::Invalid(
            "expiresAt must be in the future".into(),
        ));
    }
    Ok(quire_kernel::clock::truncate_to_micros(t))
}
