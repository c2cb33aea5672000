//! Wire shapes of responses. Request bodies are declared next to their handlers, where they
//! are both parsed and documented.

use quire_kernel::Tier;
use quire_keys::{ListedKey, MintedKey};
use quire_oauth::{ClientSecret, OAuthClient};
use quire_projects::{Grant, Project, ResourceEntry, Resources};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectDto {
    pub id: Uuid,
    pub name: String,
    pub tag: String,
    /// One of gray red orange amber yellow lime green emerald teal cyan sky blue indigo
    /// violet purple fuchsia pink rose.
    pub color: String,
    pub slug: String,
    pub oauth_client_id: Option<String>,
    /// `active` or `archived`.
    pub status: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<Project> for ProjectDto {
    fn from(p: Project) -> Self {
        Self {
            id: p.id.0,
            name: p.name,
            tag: p.tag,
            color: p.color.as_str().to_owned(),
            slug: p.slug.as_str().to_owned(),
            oauth_client_id: p.oauth_client_id,
            status: p.status.as_str().to_owned(),
            created_at: p.created_at,
            updated_at: p.updated_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectEnvelope {
    pub project: ProjectDto,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectList {
    pub projects: Vec<ProjectDto>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDto {
    pub id: Uuid,
    pub name: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<ResourceEntry> for ResourceDto {
    fn from(e: ResourceEntry) -> Self {
        Self {
            id: e.id,
            name: e.name,
            created_at: e.created_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ResourcesDto {
    pub pages: Vec<ResourceDto>,
    pub objects: Vec<ResourceDto>,
    pub links: Vec<ResourceDto>,
    pub databases: Vec<ResourceDto>,
    pub keys: Vec<ResourceDto>,
}

fn entries(v: Vec<ResourceEntry>) -> Vec<ResourceDto> {
    v.into_iter().map(ResourceDto::from).collect()
}

impl From<Resources> for ResourcesDto {
    fn from(r: Resources) -> Self {
        Self {
            pages: entries(r.pages),
            objects: entries(r.objects),
            links: entries(r.links),
            databases: entries(r.databases),
            keys: entries(r.keys),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ResourcesEnvelope {
    pub resources: ResourcesDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantDto {
    pub key_id: Uuid,
    pub project_id: Uuid,
    /// `read` or `full`.
    pub level: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<Grant> for GrantDto {
    fn from(g: Grant) -> Self {
        Self {
            key_id: g.key_id.0,
            project_id: g.project_id.0,
            level: g.level.as_str().to_owned(),
            created_at: g.created_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct GrantEnvelope {
    pub grant: GrantDto,
}

fn apps_of(tier: &Tier) -> Option<Vec<String>> {
    match tier {
        Tier::Master => None,
        Tier::App(apps) => Some(apps.iter().map(|a| a.as_str().to_owned()).collect()),
    }
}

/// A stored key: never its plaintext or hash.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyDto {
    pub id: Uuid,
    pub name: String,
    /// `master` or `app`.
    pub tier: String,
    /// The app key's scope; `null` for master keys, which have every app.
    pub apps: Option<Vec<String>>,
    /// The home project (for master keys, the account's default project).
    pub project_id: Option<Uuid>,
    /// The home project's slug.
    pub project: Option<String>,
    pub key_prefix: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub revoked_at: Option<OffsetDateTime>,
}

impl From<ListedKey> for KeyDto {
    fn from(k: ListedKey) -> Self {
        let (project_id, project) = match k.home_project {
            Some((id, slug)) => (Some(id.0), Some(slug.as_str().to_owned())),
            None => (None, None),
        };
        Self {
            id: k.record.id.0,
            name: k.record.name,
            tier: k.record.tier.name().to_owned(),
            apps: apps_of(&k.record.tier),
            project_id,
            project,
            key_prefix: k.record.key_prefix,
            created_at: k.record.created_at,
            revoked_at: k.record.revoked_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeyList {
    pub keys: Vec<KeyDto>,
}

/// A freshly minted key. `key` is shown this once and never again.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MintedKeyDto {
    pub key: String,
    pub key_id: Uuid,
    pub key_prefix: String,
    /// Always `app`.
    pub tier: String,
    pub apps: Vec<String>,
    pub name: String,
    pub project_id: Uuid,
    pub project: String,
}

impl From<MintedKey> for MintedKeyDto {
    fn from(m: MintedKey) -> Self {
        Self {
            key: m.plaintext.expose().to_owned(),
            key_id: m.record.id.0,
            key_prefix: m.record.key_prefix,
            tier: m.record.tier.name().to_owned(),
            apps: apps_of(&m.record.tier).unwrap_or_default(),
            name: m.record.name,
            project_id: m.record.project_id.map(|p| p.0).unwrap_or_default(),
            project: m.project_slug.as_str().to_owned(),
        }
    }
}

/// The error body: `error` is a stable code (prose for key-mint validation), `message` is
/// for people. Some errors add fields (`error_description`, `retry_after_hours`, `interval`).
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: String,
    pub message: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    pub status: String,
}

/// A page, with the policy kept on its short link.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageDto {
    pub id: Uuid,
    #[serde(rename = "public_id")]
    pub public_id: String,
    pub url: String,
    pub short_url: Option<String>,
    pub slug: String,
    pub title: String,
    pub entrypoint: String,
    /// `private`, `password`, `allow_list` or `public`.
    pub access: String,
    /// `active` or `archived`.
    pub status: String,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<OffsetDateTime>,
    pub max_views: Option<u64>,
    pub view_count: u64,
    pub size_bytes: u64,
    pub file_count: u64,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub archived_at: Option<OffsetDateTime>,
}

impl From<quire_pages::PageView> for PageDto {
    fn from(v: quire_pages::PageView) -> Self {
        let (access, expires_at, max_views, view_count) = match &v.link {
            Some(l) => (
                l.policy.access.as_str().to_owned(),
                l.policy.expires_at,
                l.policy.max_views,
                l.view_count,
            ),
            None => ("private".to_owned(), None, None, 0),
        };
        Self {
            id: v.page.id.0,
            public_id: v.page.public_id,
            url: v.url,
            short_url: v.short_url,
            slug: v.page.slug,
            title: v.page.title,
            entrypoint: v.page.entrypoint,
            access,
            status: v.page.status.as_str().to_owned(),
            expires_at,
            max_views,
            view_count,
            size_bytes: v.page.size_bytes,
            file_count: v.page.file_count,
            created_at: v.page.created_at,
            updated_at: v.page.updated_at,
            archived_at: v.page.archived_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PageList {
    pub pages: Vec<PageDto>,
    /// Slug of the listed project.
    pub project: String,
}

/// The answer to a publish.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PublishedDto {
    pub id: Uuid,
    #[serde(rename = "public_id")]
    pub public_id: String,
    pub url: String,
    pub short_url: Option<String>,
    pub slug: String,
    pub access: String,
    pub file_count: u64,
    pub size_bytes: u64,
    pub project: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileDto {
    pub path: String,
    pub size_bytes: u64,
    pub content_type: String,
    pub sha256: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FileList {
    pub files: Vec<FileDto>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FilesAddedDto {
    pub id: Uuid,
    pub file_count: u64,
    pub size_bytes: u64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SharedPageDto {
    pub page_id: Uuid,
    pub title: String,
    pub slug: String,
    #[serde(rename = "public_id")]
    pub public_id: String,
    pub owner_handle: String,
    pub url: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub shared_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<OffsetDateTime>,
    pub max_views: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SharedList {
    pub pages: Vec<SharedPageDto>,
}

/// A registered OAuth client. Field names follow RFC 7591 (`client_id`, `client_secret`),
/// times the rest of this API (`createdAt`).
#[derive(Debug, Serialize, ToSchema)]
pub struct OAuthClientDto {
    pub client_id: String,
    pub name: String,
    /// `confidential` or `public`.
    pub client_type: String,
    pub redirect_uris: Vec<String>,
    #[serde(rename = "createdAt", with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// A confidential client's secret: in the answer to its registration or rotation only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
}

impl OAuthClientDto {
    #[must_use]
    pub fn new(client: OAuthClient, secret: Option<&ClientSecret>) -> Self {
        Self {
            client_id: client.id.as_str().to_owned(),
            name: client.name,
            client_type: client.client_type.as_str().to_owned(),
            redirect_uris: client
                .redirect_uris
                .iter()
                .map(|u| u.as_str().to_owned())
                .collect(),
            created_at: client.created_at,
            client_secret: secret.map(|s| s.expose().to_owned()),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OAuthClientEnvelope {
    pub client: OAuthClientDto,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OAuthClientList {
    pub clients: Vec<OAuthClientDto>,
}
