//! The page and project tools' results (`structuredContent`), camelCase as in the REST
//! API's answers.

use schemars::JsonSchema;
use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).unwrap_or_default()
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProjectItem {
    pub slug: String,
    pub name: String,
    pub status: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProjectsOut {
    pub projects: Vec<ProjectItem>,
}

/// A page as the tools show it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageOut {
    pub id: String,
    pub public_id: String,
    pub slug: String,
    pub title: String,
    /// Where visitors see it.
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_url: Option<String>,
    pub access: String,
    pub status: String,
    pub project: String,
    pub file_count: u64,
    pub size_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_views: Option<u64>,
    pub view_count: u64,
    /// The database the page names (its `/-/db.json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    pub updated_at: String,
}

impl From<quire_pages::PageView> for PageOut {
    fn from(v: quire_pages::PageView) -> Self {
        let quire_pages::Exposure {
            access,
            expires_at,
            max_views,
            view_count,
        } = v.exposure();
        let access = access.as_str().to_owned();
        Self {
            id: v.page.id.0.to_string(),
            public_id: v.page.public_id,
            slug: v.page.slug,
            title: v.page.title,
            url: v.url,
            short_url: v.short_url,
            access,
            status: v.page.status.as_str().to_owned(),
            project: v.project_slug.as_str().to_owned(),
            file_count: v.page.file_count,
            size_bytes: v.page.size_bytes,
            expires_at: expires_at.map(rfc3339),
            max_views,
            view_count,
            database: v.page.database,
            updated_at: rfc3339(v.page.updated_at),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PagesOut {
    pub pages: Vec<PageOut>,
    pub project: String,
    /// Pass as `cursor` for the next page of results; absent at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileItem {
    pub path: String,
    pub size_bytes: u64,
    pub content_type: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageDetailOut {
    #[serde(flatten)]
    pub page: PageOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<FileItem>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_truncated: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileSliceOut {
    pub path: String,
    pub content_type: String,
    /// `utf8` or `base64`.
    pub encoding: String,
    pub content: String,
    pub offset: u64,
    pub total_bytes: u64,
    /// More bytes follow: call again with `offset` + the bytes read.
    pub truncated: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PublishedOut {
    pub id: String,
    pub public_id: String,
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_url: Option<String>,
    pub slug: String,
    pub access: String,
    pub file_count: u64,
    pub size_bytes: u64,
    pub project: String,
    /// True when this answers a retry of an earlier `request_id`.
    pub replayed: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FilesAddedOut {
    pub id: String,
    pub file_count: u64,
    pub size_bytes: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DeletedOut {
    pub deleted: bool,
    pub id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SharedItem {
    pub page_id: String,
    pub title: String,
    pub url: String,
    pub owner_handle: String,
    pub shared_at: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SharedOut {
    pub pages: Vec<SharedItem>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}
