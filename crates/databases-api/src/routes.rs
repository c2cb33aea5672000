//! `/api/database/v1/databases…`: every route needs `base` in the credential's apps.

use actix_web::http::StatusCode;
use actix_web::{delete, get, post, web};
use quire_databases::NewDatabase;
use quire_edge::answer::{Answer, Created, NoContent, NoStore};
use quire_edge::auth::{BaseApp, Scoped};
use quire_edge::body::Body;
use quire_edge::json::{RequestBody, parse};
use quire_edge::refusals::ScopeRefusals;
use quire_edge::{ApiError, AppState};
use quire_kernel::{DatabaseId, ErrorCode};
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::DATABASE;
use crate::dto::{DatabaseDto, DatabaseList, QueryResult, SecretDto};

/// A new database.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::create_body)]
pub struct CreateDatabaseBody {
    /// 3-30 lowercase letters, digits or underscores, unique on this server.
    #[schema(min_length = 3, max_length = 30, pattern = "^[a-z0-9_]+$")]
    pub slug: String,
    /// 1-100 characters; default the slug.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 100)]
    pub name: Option<String>,
    /// Project slug (default: the key's home project).
    #[serde(default)]
    pub project: Option<String>,
    /// RFC 3339, in the future: the database is dropped then.
    #[serde(default)]
    #[schema(format = DateTime)]
    pub expires_at: Option<String>,
}

impl RequestBody for CreateDatabaseBody {
    const CODE: ErrorCode = ErrorCode::InvalidRequest;
}

/// SQL to run as the database's owner.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = crate::examples::query_body)]
pub struct QueryBody {
    /// One statement or several; the answer is the last one's result. At most 1 MiB.
    #[schema(min_length = 1, max_length = 1_048_576)]
    pub sql: String,
}

impl RequestBody for QueryBody {
    const CODE: ErrorCode = ErrorCode::InvalidRequest;
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Project slug (default: the key's home project).
    project: Option<String>,
}

pub(crate) fn database_id(raw: &str) -> Result<DatabaseId, ApiError> {
    Uuid::parse_str(raw)
        .map(DatabaseId)
        .map_err(|_| ApiError::not_found("database"))
}

/// List a project's databases (an empty list with `available: false` when this server has
/// no PostgreSQL cluster for them), each with the tables it leaves open to `anon`, and the
/// account's databases and their bytes beside its quotas.
#[utoipa::path(tag = "databases",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, body = DatabaseList),
        ScopeRefusals))]
#[get("/databases")]
pub async fn list(
    state: web::Data<AppState>,
    auth: Scoped<BaseApp>,
    filter: web::Query<ListQuery>,
) -> Result<Answer<DatabaseList>, ApiError> {
    let (mut databases, project) = state
        .databases
        .list(&auth.0, filter.project.as_deref())
        .await?;
    state.databases.open_tables_of(&mut databases).await;
    let quota = if state.databases.available() {
        let usage = state.databases.usage(&auth.0, Some(project.as_str()));
        Some(usage.await?.into())
    } else {
        None
    };
    Ok(Answer::ok(DatabaseList {
        databases: databases.into_iter().map(DatabaseDto::from).collect(),
        project: project.as_str().to_owned(),
        available: state.databases.available(),
        quota,
    }))
}

/// Create a database: a PostgreSQL database of its own, all or nothing.
#[utoipa::path(tag = "databases",
    security(("bearer" = [])),
    request_body = CreateDatabaseBody,
    responses(
        (status = 201, body = DatabaseDto,
            headers(("Location" = String, description = "`/api/database/v1/databases/{id}`"))),
        (status = 400, description = "invalid_json, invalid_request, invalid_slug"),
        (status = 403, description = "insufficient_scope, not_activated, quota_exceeded (limit: databases, with used and quota)"),
        (status = 409, description = "slug_taken"),
        (status = 413, description = "storage_quota_exceeded (limit: database_bytes, with used and quota)"),
        (status = 503, description = "database_service_unavailable")))]
#[post("/databases")]
pub async fn create(
    state: web::Data<AppState>,
    auth: Scoped<BaseApp>,
    body: Body,
) -> Result<Created<DatabaseDto>, ApiError> {
    if !state.databases.available() {
        return Err(quire_databases::DatabaseError::Unavailable.into());
    }
    let sent: CreateDatabaseBody = parse(&body.0)?;
    let view = state
        .databases
        .create(
            &auth.0,
            NewDatabase {
                slug: sent.slug,
                name: sent.name,
                project: sent.project,
                expires_at: sent.expires_at,
            },
        )
        .await?;
    Ok(Created::at(
        format!("{DATABASE}/databases/{}", view.database.id.0),
        DatabaseDto::from(view),
    ))
}

/// Fetch a database, with the tables it leaves open to `anon`.
#[utoipa::path(tag = "databases",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = DatabaseDto),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 503, description = "database_service_unavailable")))]
#[get("/databases/{id}")]
pub async fn get(
    state: web::Data<AppState>,
    auth: Scoped<BaseApp>,
    id: web::Path<String>,
) -> Result<Answer<DatabaseDto>, ApiError> {
    let view = state.databases.get(&auth.0, database_id(&id)?).await?;
    Ok(Answer::ok(DatabaseDto::from(view)))
}

/// Delete a database: its data API stops, then PostgreSQL drops it and its roles.
#[utoipa::path(tag = "databases",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 204, description = "Deleted"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 500, description = "internal_error: the drop failed; the database is no longer shown and is dropped later"),
        (status = 503, description = "database_service_unavailable")))]
#[delete("/databases/{id}")]
pub async fn delete(
    state: web::Data<AppState>,
    auth: Scoped<BaseApp>,
    id: web::Path<String>,
) -> Result<NoContent, ApiError> {
    state.databases.delete(&auth.0, database_id(&id)?).await?;
    Ok(NoContent)
}

/// Run SQL as the database's owner; the answer is the last statement's result, and the
/// tables the SQL left open to `anon`.
#[utoipa::path(tag = "databases",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = QueryBody,
    responses(
        (status = 200, body = QueryResult),
        (status = 400, description = "invalid_json, invalid_request, sql_error (with `sqlstate`, and `detail`, `hint`, `position` when PostgreSQL gives them)"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 413, description = "payload_too_large"),
        (status = 503, description = "database_service_unavailable")))]
#[post("/databases/{id}/query")]
pub async fn run_sql(
    state: web::Data<AppState>,
    auth: Scoped<BaseApp>,
    id: web::Path<String>,
    body: Body,
) -> Result<Answer<QueryResult>, ApiError> {
    let id = database_id(&id)?;
    if !state.databases.available() {
        return Err(quire_databases::DatabaseError::Unavailable.into());
    }
    let sent: QueryBody = parse(&body.0)?;
    let outcome = state.databases.query(&auth.0, id, &sent.sql).await?;
    Ok(Answer::ok(QueryResult::from(outcome)))
}

/// Turn the data API on (the first time, its JWT secret and keys are made).
#[utoipa::path(tag = "databases",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 202, body = DatabaseDto, description = "On; it starts on its first request"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 503, description = "database_service_unavailable")))]
#[post("/databases/{id}/data-api")]
pub async fn enable_data_api(
    state: web::Data<AppState>,
    auth: Scoped<BaseApp>,
    id: web::Path<String>,
) -> Result<Answer<DatabaseDto>, ApiError> {
    let view = state
        .databases
        .enable_data_api(&auth.0, database_id(&id)?)
        .await?;
    Ok(Answer::with_status(
        StatusCode::ACCEPTED,
        DatabaseDto::from(view),
    ))
}

/// Turn the data API off; its secret is kept, so its keys work again once it is back on.
#[utoipa::path(tag = "databases",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 204, description = "Off"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 503, description = "database_service_unavailable")))]
#[delete("/databases/{id}/data-api")]
pub async fn disable_data_api(
    state: web::Data<AppState>,
    auth: Scoped<BaseApp>,
    id: web::Path<String>,
) -> Result<NoContent, ApiError> {
    state
        .databases
        .disable_data_api(&auth.0, database_id(&id)?)
        .await?;
    Ok(NoContent)
}

/// The data API's JWT secret and keys, never cached.
#[utoipa::path(tag = "databases",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = SecretDto),
        (status = 400, description = "data_api_not_enabled"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 503, description = "database_service_unavailable")))]
#[get("/databases/{id}/secret")]
pub async fn secret(
    state: web::Data<AppState>,
    auth: Scoped<BaseApp>,
    id: web::Path<String>,
) -> Result<NoStore<Answer<SecretDto>>, ApiError> {
    let secret = state.databases.secret(&auth.0, database_id(&id)?).await?;
    Ok(NoStore(Answer::ok(SecretDto::from(secret))))
}

/// Replace the data API's JWT secret, and so both keys: the old keys and every end user's
/// access token signed under the old secret are refused from now on (on other replicas
/// within a second). Answers the new secret and keys, never cached. Rotate when a key
/// leaked; for servers and agents, a Quire key with `base` acts as `service_role` and is
/// revoked one by one instead.
#[utoipa::path(tag = "databases",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = SecretDto, description = "The new secret and keys"),
        (status = 400, description = "data_api_not_enabled"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 503, description = "database_service_unavailable")))]
#[post("/databases/{id}/secret/rotate")]
pub async fn rotate_secret(
    state: web::Data<AppState>,
    auth: Scoped<BaseApp>,
    id: web::Path<String>,
) -> Result<NoStore<Answer<SecretDto>>, ApiError> {
    let rotated = state
        .databases
        .rotate_secret(&auth.0, database_id(&id)?)
        .await?;
    Ok(NoStore(Answer::ok(SecretDto::from(rotated))))
}

/// Have the data API load the schema again, on every replica (it also does so by itself
/// after DDL).
#[utoipa::path(tag = "databases",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 204, description = "Announced"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 409, description = "data_api_disabled"),
        (status = 503, description = "database_service_unavailable")))]
#[post("/databases/{id}/reload")]
pub async fn reload(
    state: web::Data<AppState>,
    auth: Scoped<BaseApp>,
    id: web::Path<String>,
) -> Result<NoContent, ApiError> {
    state.databases.reload(&auth.0, database_id(&id)?).await?;
    Ok(NoContent)
}
