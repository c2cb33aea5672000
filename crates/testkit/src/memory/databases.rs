//! Database records, with the real stores' state rules: each change applies only from the
//! state it starts from, and a slug is held by a record in any state.

use async_trait::async_trait;
use quire_accounts::SealedSecret;
use quire_databases::{
    DataApiSettings, Database, DatabaseRecords, DatabaseStatus, InsertDatabaseError,
};
use quire_kernel::{AccountId, DatabaseId, InfraError, ProjectId};
use time::OffsetDateTime;

use super::{MemoryStore, Op};

impl MemoryStore {
    /// Applies `change` to the record `id` when it is in `from`; whether it was.
    fn change_database(
        &self,
        id: DatabaseId,
        from: DatabaseStatus,
        change: impl FnOnce(&mut Database),
    ) -> bool {
        self.with(|s| {
            match s
                .databases
                .iter_mut()
                .find(|d| d.id == id && d.status == from)
            {
                Some(d) => {
                    change(d);
                    true
                }
                None => false,
            }
        })
    }
}

#[async_trait]
impl DatabaseRecords for MemoryStore {
    async fn insert_database(&self, database: &Database) -> Result<(), InsertDatabaseError> {
        self.check(Op::InsertDatabase)?;
        self.with(|s| {
            if s.databases.iter().any(|d| d.slug == database.slug) {
                return Err(InsertDatabaseError::SlugTaken);
            }
            s.databases.push(database.clone());
            Ok(())
        })
    }

    async fn mark_ready(&self, id: DatabaseId, at: OffsetDateTime) -> Result<bool, InfraError> {
        self.check(Op::MarkDatabaseReady)?;
        Ok(self.change_database(id, DatabaseStatus::Provisioning, |d| {
            d.status = DatabaseStatus::Ready;
            d.lease_until = None;
            d.updated_at = at;
        }))
    }

    async fn database(&self, id: DatabaseId) -> Result<Option<Database>, InfraError> {
        self.check(Op::DatabaseById)?;
        Ok(self.with(|s| s.databases.iter().find(|d| d.id == id).cloned()))
    }

    async fn database_by_slug(&self, slug: &str) -> Result<Option<Database>, InfraError> {
        self.check(Op::DatabaseBySlug)?;
        Ok(self.with(|s| {
            s.databases
                .iter()
                .find(|d| d.slug.as_str() == slug)
                .cloned()
        }))
    }

    async fn project_databases(&self, project: ProjectId) -> Result<Vec<Database>, InfraError> {
        self.check(Op::ProjectDatabases)?;
        let mut found: Vec<Database> = self.with(|s| {
            s.databases
                .iter()
                .filter(|d| d.project_id == project && d.status == DatabaseStatus::Ready)
                .cloned()
                .collect()
        });
        found.sort_by_key(|d| std::cmp::Reverse((d.created_at, d.id.0)));
        Ok(found)
    }

    async fn set_data_api(
        &self,
        id: DatabaseId,
        enabled: bool,
        jwt_secret: Option<&SealedSecret>,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        self.check(Op::SetDataApi)?;
        Ok(self.change_database(id, DatabaseStatus::Ready, |d| {
            d.data_api_enabled = enabled;
            if let Some(secret) = jwt_secret {
                d.jwt_secret = Some(secret.clone());
            }
            d.updated_at = at;
        }))
    }

    async fn rotate_jwt_secret(
        &self,
        id: DatabaseId,
        from: &SealedSecret,
        to: &SealedSecret,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        self.check(Op::RotateJwtSecret)?;
        Ok(self.with(|s| {
            match s.databases.iter_mut().find(|d| {
                d.id == id
                    && d.status == DatabaseStatus::Ready
                    && d.jwt_secret.as_ref() == Some(from)
            }) {
                Some(d) => {
                    d.jwt_secret = Some(to.clone());
                    d.updated_at = at;
                    true
                }
                None => false,
            }
        }))
    }

    async fn set_data_api_settings(
        &self,
        id: DatabaseId,
        from: &DataApiSettings,
        to: &DataApiSettings,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        self.check(Op::SetDataApi)?;
        Ok(self.with(|s| {
            match s.databases.iter_mut().find(|d| {
                d.id == id && d.status == DatabaseStatus::Ready && d.data_api_settings == *from
            }) {
                Some(d) => {
                    d.data_api_settings = to.clone();
                    d.updated_at = at;
                    true
                }
                None => false,
            }
        }))
    }

    async fn mark_deleting(&self, id: DatabaseId, at: OffsetDateTime) -> Result<bool, InfraError> {
        self.check(Op::MarkDatabaseDeleting)?;
        Ok(self.change_database(id, DatabaseStatus::Ready, |d| {
            d.status = DatabaseStatus::Deleting;
            d.updated_at = at;
        }))
    }

    async fn delete_database(&self, id: DatabaseId) -> Result<(), InfraError> {
        self.check(Op::DeleteDatabase)?;
        self.with(|s| s.databases.retain(|d| d.id != id));
        Ok(())
    }

    async fn live_databases(
        &self,
        account: Option<AccountId>,
    ) -> Result<Vec<Database>, InfraError> {
        self.check(Op::LiveDatabases)?;
        let mut live: Vec<Database> = self.with(|s| {
            s.databases
                .iter()
                .filter(|d| d.status != DatabaseStatus::Deleting)
                .filter(|d| account.is_none_or(|a| a == d.account_id))
                .cloned()
                .collect()
        });
        live.sort_by_key(|d| (d.created_at, d.id.0));
        Ok(live)
    }

    async fn janitor_due(&self, now: OffsetDateTime) -> Result<Vec<Database>, InfraError> {
        self.check(Op::DatabasesDue)?;
        let mut due: Vec<Database> = self.with(|s| {
            s.databases
                .iter()
                .filter(|d| match d.status {
                    // A provisioning record always has a lease; one without is past due.
                    DatabaseStatus::Provisioning => d.lease_until.is_none_or(|t| t < now),
                    DatabaseStatus::Deleting => true,
                    DatabaseStatus::Ready => d.lapsed(now),
                })
                .cloned()
                .collect()
        });
        due.sort_by_key(|d| (d.created_at, d.id.0));
        Ok(due)
    }
}
