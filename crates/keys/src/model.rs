//! Stored keys.

use quire_kernel::{AccountId, KeyId, ProjectId, Tier};
use time::OffsetDateTime;

use crate::credential::KeyHash;

/// A key as stored: never its plaintext.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub id: KeyId,
    pub account_id: AccountId,
    pub name: String,
    pub tier: Tier,
    /// The home project of an app key. `None` for master keys, whose home project is
    /// always the account's current default project.
    pub project_id: Option<ProjectId>,
    pub key_prefix: String,
    pub key_hash: KeyHash,
    pub created_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
    /// When the key last authenticated a request, to [`crate::KEY_USE_RESOLUTION`].
    pub last_used_at: Option<OffsetDateTime>,
}

/// A key found by its hash, with what authentication needs to know of its account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialOwner {
    pub key: KeyRecord,
    pub account_activated: bool,
    pub is_platform_admin: bool,
    pub default_project_id: ProjectId,
}
