//! Projects, grants and the resources a project holds.

use quire_kernel::{AccountId, Color, KeyId, ProjectId, ProjectSlug};
use time::OffsetDateTime;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectStatus {
    Active,
    Archived,
}

impl ProjectStatus {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectStatus::Active => "active",
            ProjectStatus::Archived => "archived",
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

/// A project of an account. Its slug is unique across the whole service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub id: ProjectId,
    pub account_id: AccountId,
    pub name: String,
    pub tag: String,
    pub color: Color,
    pub slug: ProjectSlug,
    pub oauth_client_id: Option<String>,
    pub status: ProjectStatus,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GrantLevel {
    Read,
    Full,
}

impl GrantLevel {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            GrantLevel::Read => "read",
            GrantLevel::Full => "full",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "read" => Some(Self::Read),
            "full" => Some(Self::Full),
            _ => None,
        }
    }
}

/// Access for one key to one project other than its home project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub key_id: KeyId,
    pub project_id: ProjectId,
    pub level: GrantLevel,
    pub created_at: OffsetDateTime,
}

/// The kinds of resource a project can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceType {
    Page,
    Object,
    Link,
    Database,
    Key,
}

impl ResourceType {
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "page" => Some(Self::Page),
            "object" => Some(Self::Object),
            "link" => Some(Self::Link),
            "database" => Some(Self::Database),
            "key" => Some(Self::Key),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceType::Page => "page",
            ResourceType::Object => "object",
            ResourceType::Link => "link",
            ResourceType::Database => "database",
            ResourceType::Key => "key",
        }
    }
}

/// One resource held by a project, as listed by `resources`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry {
    pub id: Uuid,
    pub name: String,
    pub created_at: OffsetDateTime,
}

/// What a project holds, per resource type. Keys are the app keys whose home project it
/// is (master keys always follow the account's default project and are not held).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resources {
    pub pages: Vec<ResourceEntry>,
    pub objects: Vec<ResourceEntry>,
    pub links: Vec<ResourceEntry>,
    pub databases: Vec<ResourceEntry>,
    pub keys: Vec<ResourceEntry>,
}

impl Resources {
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
            && self.objects.is_empty()
            && self.links.is_empty()
            && self.databases.is_empty()
            && self.keys.is_empty()
    }
}
