//! `/api/platform/v1/projects…`

use actix_web::{HttpResponse, web};
use quire_kernel::{ErrorCode, KeyId, ProjectId};
use quire_projects::{GrantLevel, NewProject, ProjectPatch, ResourceType};
use uuid::Uuid;

use crate::AppState;
use crate::auth::Authenticated;
use crate::dto::{
    GrantDto, GrantEnvelope, ProjectDto, ProjectEnvelope, ProjectList, ResourcesDto,
    ResourcesEnvelope,
};
use crate::error::ApiError;
use crate::json::{Body, Fields, object};

/// A path id that is not a UUID names nothing: 404, as for an unknown id.
pub(crate) fn path_id(raw: &str, what: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::not_found(what))
}

/// List the account's projects.
#[utoipa::path(get, path = "/api/platform/v1/projects", tag = "projects",
    security(("bearer" = [])),
    responses(
        (status = 200, body = ProjectList),
        (status = 401, body = crate::dto::ErrorBody, description = "invalid_api_key, invalid_token"),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope (app key), not_activated")))]
pub async fn list(
    state: web::Data<AppState>,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    let projects = state.projects.list(&auth.0).await?;
    Ok(HttpResponse::Ok().json(ProjectList {
        projects: projects.into_iter().map(ProjectDto::from).collect(),
    }))
}

/// Create a project.
#[utoipa::path(post, path = "/api/platform/v1/projects", tag = "projects",
    security(("bearer" = [])),
    request_body = crate::dto::CreateProjectRequest,
    responses(
        (status = 201, body = ProjectEnvelope),
        (status = 400, body = crate::dto::ErrorBody, description = "invalid_json, invalid_body, invalid_project, invalid_slug"),
        (status = 401, body = crate::dto::ErrorBody, description = "invalid_api_key, invalid_token"),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 409, body = crate::dto::ErrorBody, description = "slug_taken, client_already_attached")))]
pub async fn create(
    state: web::Data<AppState>,
    auth: Authenticated,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    let f = Fields::new(object(&body.0)?, ErrorCode::InvalidProject);
    let input = NewProject {
        name: f.required_str("name")?,
        tag: f.required_str("tag")?,
        color: f.required_str("color")?,
        slug: f.required_str("slug")?,
        oauth_client_id: f.nullable_str("oauth_client_id")?.flatten(),
    };
    let project = state.projects.create(&auth.0, input).await?;
    Ok(HttpResponse::Created().json(ProjectEnvelope {
        project: project.into(),
    }))
}

/// Fetch one project.
#[utoipa::path(get, path = "/api/platform/v1/projects/{id}", tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = ProjectEnvelope),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "not_activated"),
        (status = 404, body = crate::dto::ErrorBody, description = "not_found: malformed id, unowned project, or an app key naming another project")))]
pub async fn get(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = ProjectId(path_id(&id, "project")?);
    let project = state.projects.get(&auth.0, id).await?;
    Ok(HttpResponse::Ok().json(ProjectEnvelope {
        project: project.into(),
    }))
}

/// Update the supplied fields of a project.
#[utoipa::path(patch, path = "/api/platform/v1/projects/{id}", tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = crate::dto::PatchProjectRequest,
    responses(
        (status = 200, body = ProjectEnvelope),
        (status = 400, body = crate::dto::ErrorBody, description = "invalid_json, invalid_body, invalid_project, invalid_slug"),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 404, body = crate::dto::ErrorBody),
        (status = 409, body = crate::dto::ErrorBody, description = "slug_taken, client_already_attached")))]
pub async fn patch(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    let id = ProjectId(path_id(&id, "project")?);
    let f = Fields::new(object(&body.0)?, ErrorCode::InvalidProject);
    let patch = ProjectPatch {
        name: f.optional_str("name")?,
        tag: f.optional_str("tag")?,
        color: f.optional_str("color")?,
        slug: f.optional_str("slug")?,
        oauth_client_id: f.nullable_str("oauth_client_id")?,
        status: f.optional_str("status")?,
    };
    let project = state.projects.update(&auth.0, id, patch).await?;
    Ok(HttpResponse::Ok().json(ProjectEnvelope {
        project: project.into(),
    }))
}

/// Delete a project, optionally moving its contents to another project first.
#[utoipa::path(delete, path = "/api/platform/v1/projects/{id}", tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = crate::dto::DeleteProjectRequest,
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, body = crate::dto::ErrorBody, description = "invalid_json, invalid_body (confirm mismatch or bad move_to)"),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 404, body = crate::dto::ErrorBody),
        (status = 409, body = crate::dto::ErrorBody, description = "project_not_empty, last_project")))]
pub async fn delete(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    let id = ProjectId(path_id(&id, "project")?);
    let f = Fields::new(object(&body.0)?, ErrorCode::InvalidBody);
    let confirm = f.required_str("confirm")?;
    let move_to = f.optional_str("move_to")?;
    state
        .projects
        .delete(&auth.0, id, &confirm, move_to.as_deref())
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// What a project holds.
#[utoipa::path(get, path = "/api/platform/v1/projects/{id}/resources", tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = ResourcesEnvelope),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "not_activated"),
        (status = 404, body = crate::dto::ErrorBody)))]
pub async fn resources(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = ProjectId(path_id(&id, "project")?);
    let resources = state.projects.resources(&auth.0, id).await?;
    Ok(HttpResponse::Ok().json(ResourcesEnvelope {
        resources: ResourcesDto::from(resources),
    }))
}

fn resource_of(f: &Fields) -> Result<(ResourceType, Uuid), ApiError> {
    let raw_type = f.required_str("resource_type")?;
    let raw_id = f.required_str("resource_id")?;
    let kind = ResourceType::parse(&raw_type).ok_or_else(|| {
        ApiError::new(
            ErrorCode::InvalidResourceType,
            "resource_type must be page, object, link, database or key",
        )
    })?;
    Ok((kind, path_id(&raw_id, "resource")?))
}

/// Move a resource of the account into this project.
#[utoipa::path(post, path = "/api/platform/v1/projects/{id}/assign", tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Destination project")),
    request_body = crate::dto::AssignRequest,
    responses(
        (status = 204, description = "Moved"),
        (status = 400, body = crate::dto::ErrorBody, description = "invalid_json, invalid_body, invalid_resource_type"),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 404, body = crate::dto::ErrorBody)))]
pub async fn assign(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    let dest = ProjectId(path_id(&id, "project")?);
    let f = Fields::new(object(&body.0)?, ErrorCode::InvalidBody);
    let (kind, resource) = resource_of(&f)?;
    state.projects.assign(&auth.0, dest, kind, resource).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Move a resource back to the account's default project (`{id}` is only checked to be a
/// UUID).
#[utoipa::path(post, path = "/api/platform/v1/projects/{id}/unassign", tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = crate::dto::AssignRequest,
    responses(
        (status = 204, description = "Moved to the default project"),
        (status = 400, body = crate::dto::ErrorBody, description = "invalid_json, invalid_body, invalid_resource_type"),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 404, body = crate::dto::ErrorBody)))]
pub async fn unassign(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    path_id(&id, "project")?;
    let f = Fields::new(object(&body.0)?, ErrorCode::InvalidBody);
    let (kind, resource) = resource_of(&f)?;
    state.projects.unassign(&auth.0, kind, resource).await?;
    Ok(HttpResponse::NoContent().finish())
}

fn grant_key(f: &Fields) -> Result<KeyId, ApiError> {
    let raw = f.required_str("key_id")?;
    Ok(KeyId(path_id(&raw, "key")?))
}

/// Grant a key `read` or `full` access to this project (a repeat call changes the level).
#[utoipa::path(post, path = "/api/platform/v1/projects/{id}/grants", tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = crate::dto::GrantRequest,
    responses(
        (status = 201, body = GrantEnvelope),
        (status = 400, body = crate::dto::ErrorBody, description = "invalid_json, invalid_body"),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 404, body = crate::dto::ErrorBody, description = "key or project not owned")))]
pub async fn put_grant(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    let project = ProjectId(path_id(&id, "project")?);
    let f = Fields::new(object(&body.0)?, ErrorCode::InvalidBody);
    let level = f.required_str("level")?;
    let level = GrantLevel::parse(&level)
        .ok_or_else(|| ApiError::new(ErrorCode::InvalidBody, "level must be read or full"))?;
    let key = grant_key(&f)?;
    let grant = state
        .projects
        .put_grant(&auth.0, project, key, level)
        .await?;
    Ok(HttpResponse::Created().json(GrantEnvelope {
        grant: GrantDto::from(grant),
    }))
}

/// Remove a key's grant on this project (`level`, if sent, is ignored).
#[utoipa::path(delete, path = "/api/platform/v1/projects/{id}/grants", tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = crate::dto::RevokeGrantRequest,
    responses(
        (status = 204, description = "Removed"),
        (status = 400, body = crate::dto::ErrorBody, description = "invalid_json, invalid_body"),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 404, body = crate::dto::ErrorBody, description = "key, project or grant not found")))]
pub async fn delete_grant(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    let project = ProjectId(path_id(&id, "project")?);
    let f = Fields::new(object(&body.0)?, ErrorCode::InvalidBody);
    let key = grant_key(&f)?;
    state.projects.delete_grant(&auth.0, project, key).await?;
    Ok(HttpResponse::NoContent().finish())
}
