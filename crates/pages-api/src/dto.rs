//! Wire shapes of a page and its files: the page object, publish and file answers, shared
//! pages.

use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// A page, with the policy kept on its short link.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::page_dto)]
pub struct PageDto {
    /// The page's id.
    pub id: Uuid,
    /// The page's public id (a short random code).
    #[serde(rename = "public_id")]
    pub public_id: String,
    /// Where visitors open the page.
    pub url: String,
    /// The page's short link; `null` when it has none.
    pub short_url: Option<String>,
    /// The page's slug in its URL, unique per owner.
    pub slug: String,
    /// The page's title.
    pub title: String,
    /// The file served at the page's address.
    pub entrypoint: String,
    /// `private`, `password`, `allow_list` or `public`.
    pub access: String,
    /// `active` or `archived`.
    pub status: String,
    /// When the page stops being served; `null`: never.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<OffsetDateTime>,
    /// How many views the page may serve; `null`: no limit.
    pub max_views: Option<u64>,
    /// Views served so far.
    pub view_count: u64,
    /// Total size of its files, in bytes.
    pub size_bytes: u64,
    /// How many files it has.
    pub file_count: u64,
    /// When it was published (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When it last changed (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    /// When it was archived; `null` while active.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub archived_at: Option<OffsetDateTime>,
    /// The slug of the database the page names, whose data API's URL and anon key it finds
    /// at `/-/db.json` on its origin; `null`: none.
    #[schema(example = "shop")]
    pub database: Option<String>,
}

impl From<quire_pages::PageView> for PageDto {
    fn from(v: quire_pages::PageView) -> Self {
        let quire_pages::Exposure {
            access,
            expires_at,
            max_views,
            view_count,
        } = v.exposure();
        let access = access.as_str().to_owned();
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
            database: v.page.database,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::page_list)]
pub struct PageList {
    /// The project's pages.
    pub pages: Vec<PageDto>,
    /// Slug of the listed project.
    pub project: String,
    /// Present when more items remain: pass it as `cursor` to read the next page. Only
    /// in answers to a request with `limit` or `cursor`.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The answer to a publish.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::published_dto)]
pub struct PublishedDto {
    /// The new page's id.
    pub id: Uuid,
    /// Its public id (a short random code).
    #[serde(rename = "public_id")]
    pub public_id: String,
    /// Where visitors open it.
    pub url: String,
    /// Its short link; `null` when it has none.
    pub short_url: Option<String>,
    /// Its slug in its URL.
    pub slug: String,
    /// Who may open it: `private`, `password`, `allow_list` or `public`.
    pub access: String,
    /// How many files it has.
    pub file_count: u64,
    /// Total size of its files, in bytes.
    pub size_bytes: u64,
    /// The slug of the project it belongs to.
    pub project: String,
    /// The slug of the database it names (served at `/-/db.json`); `null`: none.
    #[schema(example = "shop")]
    pub database: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::file_dto)]
pub struct FileDto {
    /// The file's path in the bundle.
    pub path: String,
    /// Its size, in bytes.
    pub size_bytes: u64,
    /// The `Content-Type` it is served with.
    pub content_type: String,
    /// Lowercase hex SHA-256 of its bytes.
    pub sha256: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::file_list)]
pub struct FileList {
    /// The page's files, by path.
    pub files: Vec<FileDto>,
    /// Present when more items remain: pass it as `cursor` to read the next page. Only
    /// in answers to a request with `limit` or `cursor`.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::files_added_dto)]
pub struct FilesAddedDto {
    /// The page's id.
    pub id: Uuid,
    /// How many files it has now.
    pub file_count: u64,
    /// Total size of its files now, in bytes.
    pub size_bytes: u64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::shared_page_dto)]
pub struct SharedPageDto {
    /// The page's id.
    pub page_id: Uuid,
    /// Its title.
    pub title: String,
    /// Its slug in its URL.
    pub slug: String,
    /// Its public id.
    #[serde(rename = "public_id")]
    pub public_id: String,
    /// The handle of the account that owns it.
    pub owner_handle: String,
    /// Where to open it.
    pub url: String,
    /// When it was shared with you (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub shared_at: OffsetDateTime,
    /// When it stops being served; `null`: never.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<OffsetDateTime>,
    /// How many views it may serve; `null`: no limit.
    pub max_views: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::shared_list)]
pub struct SharedList {
    /// Pages other accounts share with you by their allow lists, most recently shared
    /// first.
    pub pages: Vec<SharedPageDto>,
    /// Present when more items remain: pass it as `cursor` to read the next page. Only
    /// in answers to a request with `limit` or `cursor`.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}
