//! A database's record and the names it has in the cluster.

use quire_accounts::SealedSecret;
use quire_kernel::{AccountId, DatabaseId, ProjectId, ProjectSlug};
use time::OffsetDateTime;

use crate::settings::DataApiSettings;

/// Where a database is in its life. Only `Ready` databases are shown and served; the
/// others are the janitor's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatabaseStatus {
    /// Being created; its lease says how long the creating request may take.
    Provisioning,
    Ready,
    /// Being dropped; a failed drop leaves it here for the janitor.
    Deleting,
}

impl DatabaseStatus {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Provisioning => "provisioning",
            Self::Ready => "ready",
            Self::Deleting => "deleting",
        }
    }

    #[must_use]
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "provisioning" => Some(Self::Provisioning),
            "ready" => Some(Self::Ready),
            "deleting" => Some(Self::Deleting),
            _ => None,
        }
    }
}

/// A database's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Database {
    pub id: DatabaseId,
    pub account_id: AccountId,
    pub project_id: ProjectId,
    /// Unique on the instance: it names the data API's path, `/db/{slug}`.
    pub slug: ProjectSlug,
    pub name: String,
    pub status: DatabaseStatus,
    /// While provisioning: when the creating request is presumed dead.
    pub lease_until: Option<OffsetDateTime>,
    /// An ephemeral database's end: the janitor drops it then.
    pub expires_at: Option<OffsetDateTime>,
    /// The owner role's password, sealed.
    pub owner_secret: SealedSecret,
    /// The authenticator role's password, sealed.
    pub authenticator_secret: SealedSecret,
    /// The data API's JWT secret, sealed; `None` until the data API is first enabled.
    pub jwt_secret: Option<SealedSecret>,
    pub data_api_enabled: bool,
    /// What of PostgREST's off-by-default behaviour its data API has on.
    pub data_api_settings: DataApiSettings,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl Database {
    #[must_use]
    pub fn names(&self) -> TenantNames {
        TenantNames::of(self.id)
    }

    /// Whether an ephemeral database's time is up at `now`.
    #[must_use]
    pub fn lapsed(&self, now: OffsetDateTime) -> bool {
        self.expires_at.is_some_and(|t| t <= now)
    }
}

/// A database's names in the cluster. They come from its id, never its slug: a slug freed
/// by a delete that the cluster has not finished can be taken again at once, and no name
/// ever carries user text into DDL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TenantNames {
    /// `q_<id as 32 hex digits>`.
    pub database: String,
    /// Runs the owner's SQL and owns every object in the database.
    pub owner_role: String,
    /// `NOINHERIT`, a member of `anon`, `authenticated` and `service_role`: the data API
    /// connects as it and switches role per request.
    pub authenticator_role: String,
}

impl TenantNames {
    #[must_use]
    pub fn of(id: DatabaseId) -> Self {
        let hex = id.0.simple().to_string();
        Self {
            database: format!("q_{hex}"),
            owner_role: format!("q_{hex}_owner"),
            authenticator_role: format!("q_{hex}_auth"),
        }
    }
}

/// What the cluster needs to create a database or connect to it as one of its roles.
/// `Debug` shows the names only.
#[derive(Clone, PartialEq, Eq)]
pub struct TenantAccess {
    pub names: TenantNames,
    pub owner_password: String,
    pub authenticator_password: String,
}

impl std::fmt::Debug for TenantAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TenantAccess")
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_identifiers_postgresql_takes_unquoted() {
        let names = TenantNames::of(DatabaseId(uuid::Uuid::new_v4()));
        for name in [
            &names.database,
            &names.owner_role,
            &names.authenticator_role,
        ] {
            assert!(name.len() <= 63, "{name}");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{name}"
            );
        }
    }
}
