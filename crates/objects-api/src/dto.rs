//! Wire shapes of the object API: the object (never its password) and lists.

use quire_objects::ObjectView;
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// An object: one file, published with the policy visitors meet.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::object_dto)]
pub struct ObjectDto {
    /// The object's id.
    pub id: Uuid,
    /// The object's public id (its short link's code unless it has an alias).
    #[serde(rename = "public_id")]
    pub public_id: String,
    /// Its address on the owner's origin.
    pub url: String,
    /// Its short link.
    pub short_url: String,
    /// Its address's last segment; one namespace with the owner's pages.
    pub slug: String,
    /// The owner's name for it.
    pub title: String,
    /// What a download is saved as.
    pub filename: String,
    /// Its media type, as sent or guessed from the file name.
    pub content_type: String,
    /// Its length in bytes.
    pub size_bytes: u64,
    /// Lowercase hex SHA-256 of the bytes (the `ETag` visitors see).
    pub sha256: String,
    /// The short link's alias, when it has one.
    pub alias: Option<String>,
    /// `private`, `password`, `allow_list` or `public`.
    pub access: String,
    /// `active` or `archived`.
    pub status: String,
    /// When it stops being served; `null`: never.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<OffsetDateTime>,
    /// Downloads people may make; `null`: no limit.
    pub max_views: Option<u64>,
    /// Downloads counted so far (one per download, however many ranges it took).
    pub view_count: u64,
    /// When it was uploaded.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When it or its bytes last changed.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    /// When it was archived; `null` while active.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub archived_at: Option<OffsetDateTime>,
    /// Slug of its project.
    pub project: String,
}

impl From<ObjectView> for ObjectDto {
    fn from(v: ObjectView) -> Self {
        let o = v.object;
        let link = v.link;
        Self {
            id: o.id.0,
            public_id: o.public_id,
            url: v.url,
            short_url: v.short_url,
            slug: o.slug,
            title: o.title,
            filename: o.filename,
            content_type: o.content_type,
            size_bytes: o.size_bytes,
            sha256: o.sha256,
            alias: link.alias,
            access: link.policy.access.as_str().to_owned(),
            status: o.status.as_str().to_owned(),
            expires_at: link.policy.expires_at,
            max_views: link.policy.max_views,
            view_count: link.view_count,
            created_at: o.created_at,
            updated_at: o.updated_at,
            archived_at: o.archived_at,
            project: v.project_slug.as_str().to_owned(),
        }
    }
}

/// A project's objects, newest first.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::object_list)]
pub struct ObjectList {
    /// The objects, newest first.
    pub objects: Vec<ObjectDto>,
    /// Slug of the project listed.
    pub project: String,
    /// The bytes of every object of the project's account (all its projects) beside the
    /// account's quota; an upload past it is refused `413 storage_quota_exceeded`.
    pub quota: ObjectQuota,
}

/// The object quotas of an account.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::object_quota)]
pub struct ObjectQuota {
    /// Bytes of its objects.
    pub bytes: quire_edge::quota::UsageDto,
}
