//! The stored link.

use quire_kernel::{AccountId, LinkId, PageId, ProjectId};
use quire_pages::{AllowEntry, LinkView, Policy};
use time::OffsetDateTime;

/// One allow-list entry and when it was granted (a page's `sharedAt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowGrant {
    pub entry: AllowEntry,
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub id: LinkId,
    pub page_id: PageId,
    pub account_id: AccountId,
    pub project_id: ProjectId,
    pub public_id: String,
    pub alias: Option<String>,
    pub access: quire_pages::Access,
    /// argon2id PHC string; never leaves this crate except to the store.
    pub password_hash: Option<String>,
    pub expires_at: Option<OffsetDateTime>,
    pub max_views: Option<u64>,
    pub view_count: u64,
    pub allow: Vec<AllowGrant>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl Link {
    #[must_use]
    pub fn view(&self) -> LinkView {
        LinkView {
            public_id: self.public_id.clone(),
            alias: self.alias.clone(),
            policy: Policy {
                access: self.access,
                expires_at: self.expires_at,
                max_views: self.max_views,
                allow: self.allow.iter().map(|g| g.entry.clone()).collect(),
            },
            has_password: self.password_hash.is_some(),
            view_count: self.view_count,
        }
    }
}
