//! `/api/page/v1/…`: the page API. Every route needs `page` in the credential's scope.

use actix_web::{HttpResponse, web};
use quire_kernel::{App, ErrorCode, PageId};
use quire_pages::{FileInput, PatchRequest, PublishRequest};
use serde::Deserialize;
use serde_json::Value;

use crate::AppState;
use crate::auth::Authenticated;
use crate::dto::{
    FileDto, FileList, FilesAddedDto, PageDto, PageList, PublishedDto, SharedList, SharedPageDto,
};
use crate::error::ApiError;
use crate::json::{Body, Fields, object};
use crate::routes::projects::path_id;

fn invalid(message: String) -> ApiError {
    ApiError::new(ErrorCode::InvalidRequest, message)
}

fn files_of(f: &Fields) -> Result<Vec<FileInput>, ApiError> {
    let Some(Value::Array(items)) = f.get("files") else {
        return Err(invalid(
            "files must be a non-empty array of file entries".into(),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let Value::Object(entry) = item else {
                return Err(invalid(format!("files[{i}] must be an object")));
            };
            let text = |name: &str| match entry.get(name) {
                Some(Value::String(s)) => Ok(s.clone()),
                _ => Err(invalid(format!("files[{i}].{name} must be a string"))),
            };
            let encoding = match entry.get("encoding") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => return Err(invalid(format!("files[{i}].encoding must be a string"))),
            };
            Ok(FileInput {
                path: text("path")?,
                content: text("content")?,
                encoding,
            })
        })
        .collect()
}

fn strings(f: &Fields, name: &str) -> Result<Option<Vec<String>>, ApiError> {
    match f.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or_else(|| invalid(format!("{name} must be an array of strings"))),
        Some(_) => Err(invalid(format!("{name} must be an array of strings"))),
    }
}

/// `maxViews`: absent → `None`; `null` → `Some(None)`; an integer → `Some(Some(n))`. As in
/// JSON Schema, a number with no fraction (`5.0`, `1e3`) is an integer.
fn max_views(f: &Fields) -> Result<Option<Option<i128>>, ApiError> {
    match f.get("maxViews") {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| {
                // `as` saturates past i128's range; the domain refuses anything past 2^63.
                n.as_f64()
                    .filter(|x| x.fract() == 0.0 && x.is_finite())
                    .map(|x| x as i128)
            })
            .map(|n| Some(Some(n)))
            .ok_or_else(|| invalid("maxViews must be a positive integer".into())),
        Some(_) => Err(invalid("maxViews must be a positive integer".into())),
    }
}

fn page_id(raw: &str) -> Result<PageId, ApiError> {
    Ok(PageId(path_id(raw, "page")?))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Default `active`.
    #[param(schema_with = crate::schema::status)]
    status: Option<String>,
    /// Project slug (default: the key's home project).
    #[param(schema_with = crate::schema::project_slug)]
    project: Option<String>,
}

/// List pages of a project.
#[utoipa::path(get, path = "/api/page/v1/pages", tag = "pages",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, body = PageList),
        (status = 400, body = crate::dto::ErrorBody, description = "invalid_request (status filter)"),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated")))]
pub async fn list(
    state: web::Data<AppState>,
    auth: Authenticated,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    auth.require_app(App::Page)?;
    let (project, pages) = state
        .pages
        .list(&auth.0, query.project.as_deref(), query.status.as_deref())
        .await?;
    Ok(HttpResponse::Ok().json(PageList {
        pages: pages.into_iter().map(PageDto::from).collect(),
        project: project.as_str().to_owned(),
    }))
}

/// Publish a page: record, bundle and short link, all or nothing.
#[utoipa::path(post, path = "/api/page/v1/pages", tag = "pages",
    security(("bearer" = [])),
    request_body = crate::dto::PublishRequestDto,
    responses(
        (status = 201, body = PublishedDto),
        (status = 400, body = crate::dto::ErrorBody, description = "invalid_json, invalid_request (names the field), password_required"),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 409, body = crate::dto::ErrorBody, description = "slug_conflict, alias_conflict"),
        (status = 413, body = crate::dto::ErrorBody, description = "payload_too_large; `limit` names the limit"),
        (status = 500, body = crate::dto::ErrorBody, description = "public_id_exhausted, internal_error")))]
pub async fn publish(
    state: web::Data<AppState>,
    auth: Authenticated,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    auth.require_app(App::Page)?;
    let f = Fields::new(object(&body.0)?, ErrorCode::InvalidRequest);
    let req = PublishRequest {
        title: f.required_str("title")?,
        files: files_of(&f)?,
        slug: f.optional_str("slug")?,
        entrypoint: f.optional_str("entrypoint")?,
        access: f.optional_str("access")?,
        password: f.optional_str("password")?,
        expires_at: f.optional_str("expiresAt")?,
        max_views: max_views(&f)?.flatten(),
        alias: f.optional_str("alias")?,
        allow: strings(&f, "allow")?.unwrap_or_default(),
        project: f.optional_str("project")?,
    };
    drop(f);
    drop(body);
    let view = state.pages.publish(&auth.0, req).await?;
    // The slug may have been cached as unknown by the pages origin.
    state.serving.forget(view.page.id);
    let access = view
        .link
        .as_ref()
        .map_or("private", |l| l.policy.access.as_str())
        .to_owned();
    Ok(HttpResponse::Created().json(PublishedDto {
        id: view.page.id.0,
        public_id: view.page.public_id,
        url: view.url,
        short_url: view.short_url,
        slug: view.page.slug,
        access,
        file_count: view.page.file_count,
        size_bytes: view.page.size_bytes,
        project: view.project_slug.as_str().to_owned(),
    }))
}

/// Fetch a page.
#[utoipa::path(get, path = "/api/page/v1/pages/{id}", tag = "pages",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = PageDto),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 404, body = crate::dto::ErrorBody)))]
pub async fn get(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    auth.require_app(App::Page)?;
    let view = state.pages.get(&auth.0, page_id(&id)?).await?;
    Ok(HttpResponse::Ok().json(PageDto::from(view)))
}

/// Update content and policy fields; archive or restore with `status`.
#[utoipa::path(patch, path = "/api/page/v1/pages/{id}", tag = "pages",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = crate::dto::PatchPageRequestDto,
    responses(
        (status = 200, body = PageDto),
        (status = 400, body = crate::dto::ErrorBody, description = "invalid_json, invalid_request, password_required"),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 404, body = crate::dto::ErrorBody),
        (status = 409, body = crate::dto::ErrorBody, description = "slug_taken, alias_conflict")))]
pub async fn patch(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    auth.require_app(App::Page)?;
    let id = page_id(&id)?;
    let f = Fields::new(object(&body.0)?, ErrorCode::InvalidRequest);
    let req = PatchRequest {
        title: f.optional_str("title")?,
        slug: f.optional_str("slug")?,
        access: f.optional_str("access")?,
        password: f.nullable_str("password")?,
        expires_at: f.nullable_str("expiresAt")?,
        max_views: max_views(&f)?,
        alias: f.nullable_str("alias")?,
        status: f.optional_str("status")?,
        allow: strings(&f, "allow")?,
    };
    let view = state.pages.update(&auth.0, id, req).await?;
    state.serving.forget(id);
    Ok(HttpResponse::Ok().json(PageDto::from(view)))
}

/// Delete a page: its stored files, then its short link, then the record.
#[utoipa::path(delete, path = "/api/page/v1/pages/{id}", tag = "pages",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 404, body = crate::dto::ErrorBody),
        (status = 500, body = crate::dto::ErrorBody, description = "storage_cleanup_failed, link_cleanup_failed (the record is gone)")))]
pub async fn delete(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    auth.require_app(App::Page)?;
    let id = page_id(&id)?;
    let deleted = state.pages.delete(&auth.0, id).await;
    state.serving.forget(id);
    deleted?;
    Ok(HttpResponse::NoContent().finish())
}

/// List a page's files.
#[utoipa::path(get, path = "/api/page/v1/pages/{id}/files", tag = "pages",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = FileList),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 404, body = crate::dto::ErrorBody)))]
pub async fn files(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    auth.require_app(App::Page)?;
    let files = state.pages.files(&auth.0, page_id(&id)?).await?;
    Ok(HttpResponse::Ok().json(FileList {
        files: files
            .into_iter()
            .map(|f| FileDto {
                path: f.path,
                size_bytes: f.size_bytes,
                content_type: f.content_type,
                sha256: f.sha256,
            })
            .collect(),
    }))
}

/// Add files to a page (a path already present is replaced).
#[utoipa::path(post, path = "/api/page/v1/pages/{id}/files", tag = "pages",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = crate::dto::AddFilesRequestDto,
    responses(
        (status = 200, body = FilesAddedDto),
        (status = 400, body = crate::dto::ErrorBody, description = "invalid_json, invalid_request"),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated"),
        (status = 404, body = crate::dto::ErrorBody),
        (status = 413, body = crate::dto::ErrorBody, description = "payload_too_large; `limit` names the limit")))]
pub async fn add_files(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
    body: Body,
) -> Result<HttpResponse, ApiError> {
    auth.require_app(App::Page)?;
    let id = page_id(&id)?;
    let f = Fields::new(object(&body.0)?, ErrorCode::InvalidRequest);
    let inputs = files_of(&f)?;
    drop(f);
    drop(body);
    let added = state.pages.add_files(&auth.0, id, inputs).await?;
    state.serving.forget(id);
    Ok(HttpResponse::Ok().json(FilesAddedDto {
        id: added.id.0,
        file_count: added.file_count,
        size_bytes: added.size_bytes,
    }))
}

/// Pages others shared with the caller (allow lists naming its account or email).
#[utoipa::path(get, path = "/api/page/v1/shared", tag = "pages",
    security(("bearer" = [])),
    responses(
        (status = 200, body = SharedList),
        (status = 401, body = crate::dto::ErrorBody),
        (status = 403, body = crate::dto::ErrorBody, description = "insufficient_scope, not_activated")))]
pub async fn shared(
    state: web::Data<AppState>,
    auth: Authenticated,
) -> Result<HttpResponse, ApiError> {
    auth.require_app(App::Page)?;
    let shared = state.pages.shared_with(&auth.0).await?;
    Ok(HttpResponse::Ok().json(SharedList {
        pages: shared
            .into_iter()
            .map(|s| SharedPageDto {
                page_id: s.page.id.0,
                url: state.pages.url_of(&s.owner_handle, &s.page.slug),
                title: s.page.title,
                slug: s.page.slug,
                public_id: s.page.public_id,
                owner_handle: s.owner_handle,
                shared_at: s.shared_at,
                expires_at: s.link.policy.expires_at,
                max_views: s.link.policy.max_views,
            })
            .collect(),
    }))
}
