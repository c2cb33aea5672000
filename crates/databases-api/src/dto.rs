//! Wire shapes of the database API.

use quire_databases::{DataApiSecret, DatabaseView, SqlOutcome};
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// A database: a PostgreSQL database of its own, with a data API Supabase's clients use.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::database_dto)]
pub struct DatabaseDto {
    /// The database's id.
    pub id: Uuid,
    /// 3-30 lowercase letters, digits or underscores, unique on this server: the data
    /// API's path, `/db/{slug}`.
    pub slug: String,
    /// The owner's name for it.
    pub name: String,
    /// `ready` (a database is shown only once it is).
    pub status: String,
    /// Bytes on disk; `null` when the cluster did not say.
    pub size_bytes: Option<u64>,
    /// When the database is dropped; `null`: never.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<OffsetDateTime>,
    /// Its data API: whether it is on, and where.
    pub data_api: DataApiDto,
    /// When it was created.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When it or its data API last changed.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    /// Slug of its project.
    pub project: String,
}

/// The data API of a database.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::data_api)]
pub struct DataApiDto {
    /// Whether `/db/{slug}/rest/v1` answers (its keys are kept while it is off).
    pub enabled: bool,
    /// What Supabase's clients take as their URL (`create_client(url, key)`).
    pub url: String,
    /// The REST API (PostgREST's subset).
    pub rest_url: String,
    /// The auth API (GoTrue's subset).
    pub auth_url: String,
}

impl From<DatabaseView> for DatabaseDto {
    fn from(v: DatabaseView) -> Self {
        let d = v.database;
        Self {
            id: d.id.0,
            slug: d.slug.as_str().to_owned(),
            name: d.name,
            status: d.status.as_str().to_owned(),
            size_bytes: v.size_bytes,
            expires_at: d.expires_at,
            data_api: DataApiDto {
                enabled: d.data_api_enabled,
                url: v.api_url,
                rest_url: v.rest_url,
                auth_url: v.auth_url,
            },
            created_at: d.created_at,
            updated_at: d.updated_at,
            project: v.project_slug.as_str().to_owned(),
        }
    }
}

/// A project's databases, newest first.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::database_list)]
pub struct DatabaseList {
    /// The databases, newest first.
    pub databases: Vec<DatabaseDto>,
    /// Slug of the project listed.
    pub project: String,
    /// Whether this server has a PostgreSQL cluster for databases; when `false` the list is
    /// empty and every other route answers 503 `database_service_unavailable`.
    pub available: bool,
    /// The databases of the project's account (all its projects) and their bytes, each
    /// beside the account's quota; absent when `available` is `false`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub quota: Option<DatabaseQuota>,
}

/// The database quotas of an account: past `databases` a creation is refused
/// `403 quota_exceeded`; once `bytes` reaches its limit, `413 storage_quota_exceeded`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::database_quota)]
pub struct DatabaseQuota {
    /// How many databases it has.
    pub databases: quire_edge::quota::UsageDto,
    /// How many bytes they hold, as PostgreSQL counts them.
    pub bytes: quire_edge::quota::UsageDto,
}

impl From<quire_databases::service::DatabaseUsage> for DatabaseQuota {
    fn from(u: quire_databases::service::DatabaseUsage) -> Self {
        Self {
            databases: u.databases.into(),
            bytes: u.bytes.into(),
        }
    }
}

/// The last statement's result.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::query_result)]
pub struct QueryResult {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// At most 1,000 rows, each a list of values in column order: numbers, booleans and
    /// JSON as such, everything else as PostgreSQL's text; `null` for NULL.
    #[schema(value_type = Vec<Vec<serde_json::Value>>)]
    pub rows: Vec<Vec<Value>>,
    /// Rows the statement returned or changed (all of them, when more than 1,000 were
    /// returned).
    pub row_count: u64,
}

impl From<SqlOutcome> for QueryResult {
    fn from(o: SqlOutcome) -> Self {
        Self {
            columns: o.columns,
            rows: o.rows,
            row_count: o.row_count,
        }
    }
}

/// What a client of the data API needs. Shown on request only, never cached. The keys last
/// ten years and are revoked all at once, by rotating the secret
/// (`POST …/secret/rotate`); a Quire key with the `base` app acts as `service_role` too and
/// is revoked one by one, so give servers and agents one of those.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::secret)]
pub struct SecretDto {
    /// Signs the keys and end users' tokens (HS256).
    pub jwt_secret: String,
    /// For browsers and other public clients: runs as `anon`, under row-level security.
    pub anon_key: String,
    /// For servers you trust: runs as `service_role`, which bypasses row-level security.
    /// A Quire key with the `base` app acts as `service_role` as well and is revocable one
    /// by one; this key is revoked only by rotating the secret.
    pub service_role_key: String,
    /// What Supabase's clients take as their URL.
    pub url: String,
    /// The REST API (PostgREST's subset).
    pub rest_url: String,
    /// The auth API (GoTrue's subset).
    pub auth_url: String,
}

impl From<DataApiSecret> for SecretDto {
    fn from(s: DataApiSecret) -> Self {
        Self {
            jwt_secret: s.jwt_secret,
            anon_key: s.keys.anon,
            service_role_key: s.keys.service_role,
            url: s.api_url,
            rest_url: s.rest_url,
            auth_url: s.auth_url,
        }
    }
}
