//! An object record. Its policy lives on its link, as a page's does.

use quire_kernel::{AccountId, LinkId, ObjectId, ProjectId};
use time::OffsetDateTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectStatus {
    Active,
    Archived,
}

impl ObjectStatus {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectStatus::Active => "active",
            ObjectStatus::Archived => "archived",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "active" => Some(Self::Active),
            "archived" => Some(Self::Archived),
            _ => None,
        }
    }
}

/// One stored file and what it is published as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub id: ObjectId,
    pub public_id: String,
    pub account_id: AccountId,
    pub project_id: ProjectId,
    pub slug: String,
    pub title: String,
    /// What a download is saved as (no directory, no control characters).
    pub filename: String,
    pub content_type: String,
    pub size_bytes: u64,
    /// Lowercase hex SHA-256 of the bytes: the `ETag`.
    pub sha256: String,
    /// The name of the stored bytes: a new one per upload, so a replacement never writes
    /// over what a visitor is reading.
    pub blob: String,
    pub status: ObjectStatus,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub archived_at: Option<OffsetDateTime>,
}

impl Object {
    /// Its short link, which carries its policy, has the object's id: a dead upload's link
    /// is found from the record alone.
    #[must_use]
    pub fn link_id(&self) -> LinkId {
        LinkId(self.id.0)
    }

    /// Types a browser would run (HTML, XHTML, SVG, XML): always served as an attachment in a
    /// sandbox, since the owner's origin holds the pages' policy cookies.
    #[must_use]
    pub fn is_active_content(&self) -> bool {
        let essence = self
            .content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        essence == "text/html"
            || essence == "application/xhtml+xml"
            || essence == "image/svg+xml"
            || essence == "text/xml"
            || essence == "application/xml"
            || essence.ends_with("+xml")
    }
}
