//! The stored link.

use quire_kernel::{AccountId, LinkId, PageId, ProjectId};
use time::OffsetDateTime;

use crate::policy::Policy;

/// A page's short link and the policy visitors meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub id: LinkId,
    pub page_id: PageId,
    pub account_id: AccountId,
    pub project_id: ProjectId,
    pub public_id: String,
    pub alias: Option<String>,
    pub policy: Policy,
    /// argon2id PHC string, for `password` access; it leaves the domain only to the store.
    pub password_hash: Option<String>,
    pub view_count: u64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl Link {
    /// The code of the short URL: the alias when there is one.
    #[must_use]
    pub fn code(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.public_id)
    }

    #[must_use]
    pub fn has_password(&self) -> bool {
        self.password_hash.is_some()
    }
}
