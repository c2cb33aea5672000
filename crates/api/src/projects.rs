//! `/api/platform/v1/projects…`

use actix_web::web;
use actix_web::{delete, get, patch, post};
use quire_kernel::{ErrorCode, KeyId, Paged, ProjectId};
use quire_projects::{
    GrantLevel, NewProject, PROJECTS_LIST, ProjectPatch, RESOURCES_LIST, ResourceType, Resources,
};
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::dto::{
    GrantDto, GrantEnvelope, ProjectDto, ProjectEnvelope, ProjectList, ResourcesDto,
    ResourcesEnvelope,
};
use crate::{PLATFORM, schema};
use quire_edge::ApiError;
use quire_edge::AppState;
use quire_edge::answer::{Answer, Created, NoContent};
use quire_edge::auth::Authenticated;
use quire_edge::body::Body;
use quire_edge::json::{RequestBody, nullable, parse};
use quire_edge::paging::PagingQuery;
use quire_edge::refusals::ScopeRefusals;

/// A path id that is not a UUID names nothing: 404, as for an unknown id.
pub(crate) fn path_id(raw: &str, what: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::not_found(what))
}

/// List the account's projects.
///
/// Oldest first: all of them, or a page of them with `limit` and `cursor`.
#[utoipa::path(tag = "projects",
    security(("bearer" = [])),
    params(PagingQuery),
    responses(
        (status = 200, body = ProjectList),
        (status = 400, description = "invalid_limit, invalid_cursor"),
        (status = 403, description = "insufficient_scope (app key), not_activated")))]
#[get("/projects")]
pub async fn list(
    state: web::Data<AppState>,
    auth: Authenticated,
    paging: web::Query<PagingQuery>,
) -> Result<Answer<ProjectList>, ApiError> {
    let page = match paging.paging(PROJECTS_LIST)? {
        Some(paging) => state.projects.list_page(&auth.0, &paging).await?,
        None => Paged {
            items: state.projects.list(&auth.0).await?,
            next_cursor: None,
        },
    };
    Ok(Answer::ok(ProjectList {
        projects: page.items.into_iter().map(ProjectDto::from).collect(),
        next_cursor: page.next_cursor,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = crate::examples::create_project_request)]
pub struct CreateProjectRequest {
    /// Trimmed when stored.
    #[schema(schema_with = schema::project_name)]
    pub name: String,
    #[schema(schema_with = schema::project_tag)]
    pub tag: String,
    #[schema(schema_with = schema::color)]
    pub color: String,
    /// Unique across the service.
    #[schema(schema_with = schema::project_slug)]
    pub slug: String,
    #[serde(default)]
    #[schema(schema_with = schema::oauth_client_id)]
    pub oauth_client_id: Option<String>,
}

impl RequestBody for CreateProjectRequest {
    const CODE: ErrorCode = ErrorCode::InvalidProject;
}

/// Create a project.
#[utoipa::path(tag = "projects",
    security(("bearer" = [])),
    request_body = CreateProjectRequest,
    responses(
        (status = 201, body = ProjectEnvelope,
            headers(("Location" = String, description = "The project's URL: `/api/platform/v1/projects/{id}`"))),
        (status = 400, description = "invalid_json, invalid_body, invalid_project, invalid_slug"),
        ScopeRefusals,
        (status = 409, description = "slug_taken, client_already_attached")))]
#[post("/projects")]
pub async fn create(
    state: web::Data<AppState>,
    auth: Authenticated,
    body: Body,
) -> Result<Created<ProjectEnvelope>, ApiError> {
    let body: CreateProjectRequest = parse(&body.0)?;
    let input = NewProject {
        name: body.name,
        tag: body.tag,
        color: body.color,
        slug: body.slug,
        oauth_client_id: body.oauth_client_id,
    };
    let project = state.projects.create(&auth.0, input).await?;
    Ok(Created::at(
        format!("{PLATFORM}/projects/{}", project.id.0),
        ProjectEnvelope {
            project: project.into(),
        },
    ))
}

/// Fetch one project.
#[utoipa::path(tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = ProjectEnvelope),
        (status = 403, description = "not_activated"),
        (status = 404, description = "not_found: malformed id, unowned project, or an app key naming another project")))]
#[get("/projects/{id}")]
pub async fn get(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
) -> Result<Answer<ProjectEnvelope>, ApiError> {
    let id = ProjectId(path_id(&id, "project")?);
    let project = state.projects.get(&auth.0, id).await?;
    Ok(Answer::ok(ProjectEnvelope {
        project: project.into(),
    }))
}

/// The fields to change; `oauth_client_id: null` detaches the client.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = crate::examples::patch_project_request)]
pub struct PatchProjectRequest {
    #[serde(default)]
    #[schema(schema_with = schema::project_name_patch)]
    pub name: Option<String>,
    #[serde(default)]
    #[schema(schema_with = schema::project_tag_patch)]
    pub tag: Option<String>,
    #[serde(default)]
    #[schema(schema_with = schema::color_patch)]
    pub color: Option<String>,
    #[serde(default)]
    #[schema(schema_with = schema::project_slug_optional)]
    pub slug: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::oauth_client_id)]
    pub oauth_client_id: Option<Option<String>>,
    #[serde(default)]
    #[schema(schema_with = schema::status_optional)]
    pub status: Option<String>,
}

impl RequestBody for PatchProjectRequest {
    const CODE: ErrorCode = ErrorCode::InvalidProject;
}

/// Update the supplied fields of a project.
#[utoipa::path(tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = PatchProjectRequest,
    responses(
        (status = 200, body = ProjectEnvelope),
        (status = 400, description = "invalid_json, invalid_body, invalid_project, invalid_slug"),
        ScopeRefusals,
        (status = 404),
        (status = 409, description = "slug_taken, client_already_attached")))]
#[patch("/projects/{id}")]
pub async fn patch(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<Answer<ProjectEnvelope>, ApiError> {
    let id = ProjectId(path_id(&id, "project")?);
    let body: PatchProjectRequest = parse(&body.0)?;
    let patch = ProjectPatch {
        name: body.name,
        tag: body.tag,
        color: body.color,
        slug: body.slug,
        oauth_client_id: body.oauth_client_id,
        status: body.status,
    };
    let project = state.projects.update(&auth.0, id, patch).await?;
    Ok(Answer::ok(ProjectEnvelope {
        project: project.into(),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = crate::examples::delete_project_request)]
pub struct DeleteProjectRequest {
    /// Must equal the project id.
    #[schema(format = Uuid)]
    pub confirm: String,
    /// Slug of another project of the account to move the contents to.
    #[serde(default)]
    #[schema(schema_with = schema::project_slug_optional)]
    pub move_to: Option<String>,
}

impl RequestBody for DeleteProjectRequest {}

/// Delete a project, optionally moving its contents to another project first.
#[utoipa::path(tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = DeleteProjectRequest,
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "invalid_json, invalid_body (confirm mismatch or bad move_to)"),
        ScopeRefusals,
        (status = 404),
        (status = 409, description = "project_not_empty, last_project")))]
#[delete("/projects/{id}")]
pub async fn delete(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<NoContent, ApiError> {
    let id = ProjectId(path_id(&id, "project")?);
    let body: DeleteProjectRequest = parse(&body.0)?;
    state
        .projects
        .delete(&auth.0, id, &body.confirm, body.move_to.as_deref())
        .await?;
    Ok(NoContent)
}

/// What a project holds.
///
/// All of it, or a page of it with `limit` and `cursor`: kind by kind (pages, objects,
/// links, databases, keys), each oldest first; a page holds the kinds it reached.
#[utoipa::path(tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path), PagingQuery),
    responses(
        (status = 200, body = ResourcesEnvelope),
        (status = 400, description = "invalid_limit, invalid_cursor"),
        (status = 403, description = "not_activated"),
        (status = 404)))]
#[get("/projects/{id}/resources")]
pub async fn resources(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    paging: web::Query<PagingQuery>,
) -> Result<Answer<ResourcesEnvelope>, ApiError> {
    let id = ProjectId(path_id(&id, "project")?);
    let paging = paging.paging(RESOURCES_LIST)?;
    let (resources, next_cursor) = match paging {
        Some(paging) => {
            let page = state.projects.resources_page(&auth.0, id, &paging).await?;
            (Resources::grouped(page.items), page.next_cursor)
        }
        None => (state.projects.resources(&auth.0, id).await?, None),
    };
    Ok(Answer::ok(ResourcesEnvelope {
        resources: ResourcesDto::from(resources),
        next_cursor,
    }))
}

/// A resource to move; an id that is not a UUID names nothing (404).
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = crate::examples::assign_request)]
pub struct AssignRequest {
    #[schema(schema_with = schema::resource_type)]
    pub resource_type: String,
    /// The id of the resource to move into this project.
    #[schema(format = Uuid)]
    pub resource_id: String,
}

impl RequestBody for AssignRequest {}

impl AssignRequest {
    fn resource(&self) -> Result<(ResourceType, Uuid), ApiError> {
        let kind = ResourceType::parse(&self.resource_type).ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidResourceType,
                "resource_type must be page, object, link, database or key",
            )
        })?;
        Ok((kind, path_id(&self.resource_id, "resource")?))
    }
}

/// Move a resource of the account into this project.
#[utoipa::path(tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path, description = "Destination project")),
    request_body = AssignRequest,
    responses(
        (status = 204, description = "Moved"),
        (status = 400, description = "invalid_json, invalid_body, invalid_resource_type"),
        ScopeRefusals,
        (status = 404)))]
#[post("/projects/{id}/assign")]
pub async fn assign(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<NoContent, ApiError> {
    let dest = ProjectId(path_id(&id, "project")?);
    let (kind, resource) = parse::<AssignRequest>(&body.0)?.resource()?;
    state.projects.assign(&auth.0, dest, kind, resource).await?;
    Ok(NoContent)
}

/// Move a resource back to the account's default project (`{id}` is only checked to be a
/// UUID).
#[utoipa::path(tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = AssignRequest,
    responses(
        (status = 204, description = "Moved to the default project"),
        (status = 400, description = "invalid_json, invalid_body, invalid_resource_type"),
        ScopeRefusals,
        (status = 404)))]
#[post("/projects/{id}/unassign")]
pub async fn unassign(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<NoContent, ApiError> {
    path_id(&id, "project")?;
    let (kind, resource) = parse::<AssignRequest>(&body.0)?.resource()?;
    state.projects.unassign(&auth.0, kind, resource).await?;
    Ok(NoContent)
}

/// A key id that is not a UUID names nothing (404).
fn grant_key(raw: &str) -> Result<KeyId, ApiError> {
    Ok(KeyId(path_id(raw, "key")?))
}

#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = crate::examples::grant_request)]
pub struct GrantRequest {
    #[schema(schema_with = schema::grant_level)]
    pub level: String,
    /// The key to give access to this project.
    #[schema(format = Uuid)]
    pub key_id: String,
}

impl RequestBody for GrantRequest {}

/// `level`, if sent, is accepted and ignored.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = crate::examples::revoke_grant_request)]
pub struct RevokeGrantRequest {
    /// The key whose grant on this project ends.
    #[schema(format = Uuid)]
    pub key_id: String,
}

impl RequestBody for RevokeGrantRequest {}

/// Grant a key `read` or `full` access to this project (a repeat call changes the level).
#[utoipa::path(tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = GrantRequest,
    responses(
        (status = 201, body = GrantEnvelope,
            headers(("Location" = String, description = "Where the grant is revoked (`DELETE` with its `key_id`): `/api/platform/v1/projects/{id}/grants`"))),
        (status = 400, description = "invalid_json, invalid_body"),
        ScopeRefusals,
        (status = 404, description = "key or project not owned")))]
#[post("/projects/{id}/grants")]
pub async fn put_grant(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<Created<GrantEnvelope>, ApiError> {
    let project = ProjectId(path_id(&id, "project")?);
    let body: GrantRequest = parse(&body.0)?;
    let level = GrantLevel::parse(&body.level)
        .ok_or_else(|| ApiError::new(ErrorCode::InvalidBody, "level must be read or full"))?;
    let key = grant_key(&body.key_id)?;
    let grant = state
        .projects
        .put_grant(&auth.0, project, key, level)
        .await?;
    // A grant has no URL of its own: it is revoked where it was made, naming its key.
    Ok(Created::at(
        format!("{PLATFORM}/projects/{}/grants", project.0),
        GrantEnvelope {
            grant: GrantDto::from(grant),
        },
    ))
}

/// Remove a key's grant on this project (`level`, if sent, is ignored).
#[utoipa::path(tag = "projects",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = RevokeGrantRequest,
    responses(
        (status = 204, description = "Removed"),
        (status = 400, description = "invalid_json, invalid_body"),
        ScopeRefusals,
        (status = 404, description = "key, project or grant not found")))]
#[delete("/projects/{id}/grants")]
pub async fn delete_grant(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<NoContent, ApiError> {
    let project = ProjectId(path_id(&id, "project")?);
    let body: RevokeGrantRequest = parse(&body.0)?;
    let key = grant_key(&body.key_id)?;
    state.projects.delete_grant(&auth.0, project, key).await?;
    Ok(NoContent)
}
