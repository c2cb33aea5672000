//! Projects, grants and the resources a project holds.

use quire_kernel::{AccountId, Color, CursorKey, KeyId, ProjectId, ProjectSlug, TimeKey};
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
    /// Every kind, in the order a paged list of a project's resources goes through them.
    pub const ALL: [Self; 5] = [
        Self::Page,
        Self::Object,
        Self::Link,
        Self::Database,
        Self::Key,
    ];

    /// The kind's place in [`ResourceType::ALL`].
    #[must_use]
    pub fn rank(self) -> usize {
        match self {
            ResourceType::Page => 0,
            ResourceType::Object => 1,
            ResourceType::Link => 2,
            ResourceType::Database => 3,
            ResourceType::Key => 4,
        }
    }

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

/// A position in the paged list of a project's resources: kind by kind in
/// [`ResourceType::ALL`]'s order, each kind oldest first with ties broken by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResourceKey {
    pub kind: ResourceType,
    pub at: TimeKey,
}

impl CursorKey for ResourceKey {
    fn write(&self) -> String {
        format!("{}.{}", self.kind.as_str(), self.at.write())
    }

    fn read(text: &str) -> Option<Self> {
        let (kind, at) = text.split_once('.')?;
        Some(Self {
            kind: ResourceType::parse(kind)?,
            at: TimeKey::read(at)?,
        })
    }
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

    /// The resources of a paged list, each under its kind, in the list's order.
    #[must_use]
    pub fn grouped(items: Vec<(ResourceType, ResourceEntry)>) -> Self {
        let mut r = Self::default();
        for (kind, entry) in items {
            match kind {
                ResourceType::Page => r.pages.push(entry),
                ResourceType::Object => r.objects.push(entry),
                ResourceType::Link => r.links.push(entry),
                ResourceType::Database => r.databases.push(entry),
                ResourceType::Key => r.keys.push(entry),
            }
        }
        r
    }
}
