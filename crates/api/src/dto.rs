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
#[schema(example = crate::examples::project_dto)]
pub struct ProjectDto {
    /// The project's id.
    pub id: Uuid,
    /// The project's name.
    pub name: String,
    /// A short label shown beside the name; may be empty.
    pub tag: String,
    /// One of gray red orange amber yellow lime green emerald teal cyan sky blue indigo
    /// violet purple fuchsia pink rose.
    pub color: String,
    /// 3-30 lowercase letters, digits or underscores, unique across the service.
    pub slug: String,
    /// The OAuth client this project belongs to; `null` when none.
    pub oauth_client_id: Option<String>,
    /// `active` or `archived`.
    pub status: String,
    /// When the project was created (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When the project last changed (RFC 3339).
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
#[schema(example = crate::examples::project_envelope)]
pub struct ProjectEnvelope {
    /// The project.
    pub project: ProjectDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::project_list)]
pub struct ProjectList {
    /// The account's projects, oldest first.
    pub projects: Vec<ProjectDto>,
    /// Present when more items remain: pass it as `cursor` to read the next page. Only
    /// in answers to a request with `limit` or `cursor`.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::resource_dto)]
pub struct ResourceDto {
    /// The resource's id.
    pub id: Uuid,
    /// Its name (a page's title, a key's name).
    pub name: String,
    /// When it was created (RFC 3339).
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
#[schema(example = crate::examples::resources_dto)]
pub struct ResourcesDto {
    /// Pages in the project.
    pub pages: Vec<ResourceDto>,
    /// Stored objects in the project.
    pub objects: Vec<ResourceDto>,
    /// Short links in the project.
    pub links: Vec<ResourceDto>,
    /// Databases in the project.
    pub databases: Vec<ResourceDto>,
    /// App keys whose home is the project.
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
#[schema(example = crate::examples::resources_envelope)]
pub struct ResourcesEnvelope {
    /// What the project holds, by kind.
    pub resources: ResourcesDto,
    /// Present when more items remain: pass it as `cursor` to read the next page. Only
    /// in answers to a request with `limit` or `cursor`.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::grant_dto)]
pub struct GrantDto {
    /// The key granted access.
    pub key_id: Uuid,
    /// The project it may reach.
    pub project_id: Uuid,
    /// `read` or `full`.
    pub level: String,
    /// When the grant was made (RFC 3339).
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
#[schema(example = crate::examples::grant_envelope)]
pub struct GrantEnvelope {
    /// The grant as stored.
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
#[schema(example = crate::examples::key_dto)]
pub struct KeyDto {
    /// The key's id.
    pub id: Uuid,
    /// The name given when it was made.
    pub name: String,
    /// `master` or `app`.
    pub tier: String,
    /// The app key's scope; `null` for master keys, which have every app.
    pub apps: Option<Vec<String>>,
    /// The home project (for master keys, the account's default project).
    pub project_id: Option<Uuid>,
    /// The home project's slug.
    pub project: Option<String>,
    /// The key's first 11 characters, to recognise it by.
    pub key_prefix: String,
    /// When the key was made (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When it was revoked; `null` while it works.
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
#[schema(example = crate::examples::key_list)]
pub struct KeyList {
    /// The account's keys, revoked ones included, oldest first.
    pub keys: Vec<KeyDto>,
    /// Present when more items remain: pass it as `cursor` to read the next page. Only
    /// in answers to a request with `limit` or `cursor`.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// A freshly minted key. `key` is shown this once and never again.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::minted_key_dto)]
pub struct MintedKeyDto {
    /// The credential, shown this once: send it as `Authorization: Bearer …`.
    pub key: String,
    /// The key's id.
    pub key_id: Uuid,
    /// The key's first 11 characters, to recognise it by.
    pub key_prefix: String,
    /// Always `app`.
    pub tier: String,
    /// The apps the key may use.
    pub apps: Vec<String>,
    /// The name given to it.
    pub name: String,
    /// Its home project's id.
    pub project_id: Uuid,
    /// Its home project's slug.
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
#[schema(example = crate::examples::error_body)]
pub struct ErrorBody {
    /// A stable code to branch on (prose for key-mint validation).
    pub error: String,
    /// What went wrong, for people.
    pub message: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::health)]
pub struct Health {
    /// `ok`; `unavailable` when a dependency cannot be reached (readiness).
    pub status: String,
}

/// A registered OAuth client. Field names follow RFC 7591 (`client_id`, `client_secret`),
/// times the rest of this API (`createdAt`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::oauth_client_dto)]
pub struct OAuthClientDto {
    /// The client's id, sent as `client_id`.
    pub client_id: String,
    /// The application's name, shown on the consent screen.
    pub name: String,
    /// `confidential` or `public`.
    pub client_type: String,
    /// Where authorization answers may be sent.
    pub redirect_uris: Vec<String>,
    /// When it was registered (RFC 3339).
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
#[schema(example = crate::examples::oauth_client_envelope)]
pub struct OAuthClientEnvelope {
    /// The client.
    pub client: OAuthClientDto,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::oauth_client_list)]
pub struct OAuthClientList {
    /// Every registered client (or a page of them).
    pub clients: Vec<OAuthClientDto>,
    /// Present when more items remain: pass it as `cursor` to read the next page. Only
    /// in answers to a request with `limit` or `cursor`.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}
