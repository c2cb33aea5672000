//! Wire shapes of the database API.

use quire_databases::{DataApiSecret, DataApiSettings, DatabaseView, OpenTable, SqlOutcome};
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
    /// The tables and views in `public` that anyone holding the anon key can reach with
    /// nothing to stop them (row-level security off; a view not `security_invoker`), by
    /// name; `[]`: none. Read in the database at each request. Absent where it was not read
    /// (the answer to a create: a new database has none) or could not be (the database
    /// took no more connections).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub open_tables: Option<Vec<OpenTableDto>>,
}

/// A table or view of `public` that `anon`, whoever holds the anon key (every visitor of a
/// page that uses the database), can reach with nothing to stop it: a table with row-level
/// security off, or a view that runs as its owner (not `security_invoker`), on which `anon`
/// holds a privilege. Enable row-level security on it (`alter table … enable row level
/// security`) and add policies, or revoke `anon`'s privileges.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::open_table)]
pub struct OpenTableDto {
    /// Its name in `public`.
    pub name: String,
    /// `table`, `view`, `materialized view` or `foreign table`.
    pub kind: String,
    /// What `anon` may do to it: of `select`, `insert`, `update`, `delete`.
    pub privileges: Vec<String>,
}

impl From<OpenTable> for OpenTableDto {
    fn from(t: OpenTable) -> Self {
        Self {
            name: t.name,
            kind: t.kind,
            privileges: t.privileges,
        }
    }
}

fn open_dtos(tables: Option<Vec<OpenTable>>) -> Option<Vec<OpenTableDto>> {
    tables.map(|t| t.into_iter().map(OpenTableDto::from).collect())
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
    /// What of PostgREST's off-by-default behaviour it has on (`PATCH …/data-api`).
    pub settings: DataApiSettingsDto,
    /// The exposed schemas the database does not have (yet): accepted, and exposed once
    /// the SQL that makes them runs. Only in the answer to a change of settings; absent
    /// there when they could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub missing_schemas: Option<Vec<String>>,
}

/// The settings of a database's data API that PostgREST leaves off by default (an operator
/// turns them on there with `ALTER ROLE authenticator SET pgrst.…`; here the database's
/// owner does, with `PATCH …/data-api`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::settings)]
pub struct DataApiSettingsDto {
    /// The schemas requests reach (PostgREST's `db-schemas`), the default first; the
    /// others through `Accept-Profile` and `Content-Profile`.
    pub exposed_schemas: Vec<String>,
    /// Most rows a read or a returned representation answers (`db-max-rows`); `null`: no
    /// cap.
    pub max_rows: Option<u64>,
    /// `count()`, `sum()`, `avg()`, `min()` and `max()` in `select`
    /// (`db-aggregates-enabled`).
    pub aggregates: bool,
    /// A request's plan through `Accept: application/vnd.pgrst.plan` (`db-plan-enabled`).
    pub explain: bool,
    /// `Prefer: tx=rollback` honoured: a write answered, then rolled back
    /// (`db-tx-end = commit-allow-override`).
    pub tx_rollback: bool,
}

impl From<DataApiSettings> for DataApiSettingsDto {
    fn from(s: DataApiSettings) -> Self {
        Self {
            exposed_schemas: s.exposed_schemas,
            max_rows: s.max_rows,
            aggregates: s.aggregates,
            explain: s.explain,
            tx_rollback: s.tx_rollback,
        }
    }
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
                settings: d.data_api_settings.into(),
                missing_schemas: v.missing_schemas,
            },
            created_at: d.created_at,
            updated_at: d.updated_at,
            project: v.project_slug.as_str().to_owned(),
            open_tables: open_dtos(v.open_tables),
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
    /// What the SQL left open to anyone holding the anon key (as a database's
    /// `openTables`), read once it ran; absent when it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub open_tables: Option<Vec<OpenTableDto>>,
}

impl From<SqlOutcome> for QueryResult {
    fn from(o: SqlOutcome) -> Self {
        Self {
            columns: o.columns,
            rows: o.rows,
            row_count: o.row_count,
            open_tables: open_dtos(o.open_tables),
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
