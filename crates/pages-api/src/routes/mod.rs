//! `/api/page/v1/…`: every route needs `page` in the credential's apps. A page's own routes
//! are here, its files' in `page_files`.

mod page_files;

pub use page_files::{add_files, files, replace_files};

use std::time::Instant;

use actix_web::Either;
use actix_web::web;
use actix_web::{delete, get, patch, post};
use quire_edge::answer::{Answer, Created, NoContent};
use quire_edge::auth::{PageApp, Scoped};
use quire_edge::body::{Body, WritableBody};
use quire_edge::json::{MaxViews, RequestBody, nullable, parse};
use quire_edge::paging::{ListWriter, PagingQuery, WrittenJson};
use quire_edge::refusals::{LongBodyRefusals, ScopeRefusals};
use quire_edge::{ApiError, AppState};
use quire_kernel::{ErrorCode, PageId, Paged};
use quire_pages::{PAGES_LIST, PatchRequest, PublishRequest, SHARED_LIST};
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::dto::{PageDto, PageList, PublishedDto, SharedList, SharedPageDto};
use crate::files::{FileBody, parse_with_files};
use crate::write_metrics::record_write;
use crate::{PAGE, schema};

/// A new page.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::publish_body)]
pub struct PublishBody {
    #[schema(schema_with = schema::page_title)]
    pub title: String,
    /// The bundle; the entrypoint must be among them.
    #[schema(min_items = 1)]
    pub files: Vec<FileBody>,
    /// Derived from the title when omitted.
    #[serde(default)]
    #[schema(schema_with = schema::page_slug)]
    pub slug: Option<String>,
    /// Default `index.html`.
    #[serde(default)]
    #[schema(schema_with = schema::entrypoint)]
    pub entrypoint: Option<String>,
    /// Default `private`.
    #[serde(default)]
    #[schema(schema_with = schema::access_optional)]
    pub access: Option<String>,
    /// Required when access is `password`.
    #[serde(default)]
    #[schema(schema_with = schema::page_password)]
    pub password: Option<String>,
    /// In the future.
    #[serde(default)]
    #[schema(schema_with = schema::expires_at)]
    pub expires_at: Option<String>,
    #[serde(default)]
    #[schema(schema_with = schema::max_views)]
    pub max_views: Option<MaxViews>,
    /// Unique service-wide.
    #[serde(default)]
    #[schema(schema_with = schema::alias)]
    pub alias: Option<String>,
    /// Emails or handles (of existing accounts), for `allow_list`.
    #[serde(default)]
    #[schema(schema_with = schema::allow)]
    pub allow: Option<Vec<String>>,
    /// Project slug (default: the key's home project).
    #[serde(default)]
    #[schema(schema_with = schema::project_slug_optional)]
    pub project: Option<String>,
    /// A database of yours in the same project, served to the page at `/-/db.json`.
    #[serde(default)]
    #[schema(schema_with = schema::page_database)]
    pub database: Option<String>,
}

impl RequestBody for PublishBody {
    const CODE: ErrorCode = ErrorCode::InvalidRequest;
}

/// The fields to change; `null` clears `password`, `expiresAt`, `maxViews`, `alias` and
/// `database`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::patch_page_body)]
pub struct PatchPageBody {
    #[serde(default)]
    #[schema(schema_with = schema::page_title_patch)]
    pub title: Option<String>,
    #[serde(default)]
    #[schema(schema_with = schema::page_slug)]
    pub slug: Option<String>,
    #[serde(default)]
    #[schema(schema_with = schema::access_optional)]
    pub access: Option<String>,
    /// `null` or empty removes it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::page_password)]
    pub password: Option<Option<String>>,
    /// In the future; `null` removes the expiry.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::expires_at)]
    pub expires_at: Option<Option<String>>,
    /// `null` removes the budget.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::max_views)]
    pub max_views: Option<Option<MaxViews>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::alias)]
    pub alias: Option<Option<String>>,
    #[serde(default)]
    #[schema(schema_with = schema::status_optional)]
    pub status: Option<String>,
    /// Emails or handles (Quire's addition: replaces the allow list).
    #[serde(default)]
    #[schema(schema_with = schema::allow)]
    pub allow: Option<Vec<String>>,
    /// A database of yours in the page's project; `null` removes it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::page_database)]
    pub database: Option<Option<String>>,
}

impl RequestBody for PatchPageBody {
    const CODE: ErrorCode = ErrorCode::InvalidRequest;
}

/// A path id that is not a UUID names nothing: 404, as for an unknown id.
fn page_id(raw: &str) -> Result<PageId, ApiError> {
    Uuid::parse_str(raw)
        .map(PageId)
        .map_err(|_| ApiError::not_found("page"))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Default `active`.
    #[param(schema_with = schema::status)]
    status: Option<String>,
    /// Project slug (default: the key's home project).
    #[param(schema_with = schema::project_slug)]
    project: Option<String>,
}

/// List pages of a project.
///
/// Newest first: the whole list, or a page of it with `limit` and `cursor`.
#[utoipa::path(tag = "pages",
    security(("bearer" = [])),
    params(ListQuery, PagingQuery),
    responses(
        (status = 200, body = PageList),
        (status = 400, description = "invalid_request (status filter), invalid_limit, invalid_cursor"),
        ScopeRefusals))]
#[get("/pages")]
pub async fn list(
    state: web::Data<AppState>,
    auth: Scoped<PageApp>,
    query: web::Query<ListQuery>,
    paging: web::Query<PagingQuery>,
) -> Result<Either<Answer<PageList>, WrittenJson>, ApiError> {
    let (project, status) = (query.project.as_deref(), query.status.as_deref());
    if let Some(paging) = paging.paging(PAGES_LIST)? {
        let (project, page) = state
            .pages
            .list_page(&auth.0, project, status, &paging)
            .await?;
        return Ok(Either::Left(Answer::ok(PageList {
            pages: page.items.into_iter().map(PageDto::from).collect(),
            project: project.as_str().to_owned(),
            next_cursor: page.next_cursor,
        })));
    }
    // The whole list, written out a chunk of pages at a time.
    let mut lister = state.pages.page_lister(&auth.0, project, status).await?;
    let mut out = ListWriter::new("pages");
    while let Some(chunk) = lister.next_chunk().await? {
        for view in chunk {
            out.push(&PageDto::from(view))?;
        }
    }
    let project = lister.project().slug.as_str();
    Ok(Either::Right(out.finish(&[("project", project)])?))
}

/// Publish a page: record, bundle and short link, all or nothing.
#[utoipa::path(tag = "pages",
    security(("bearer" = [])),
    request_body = PublishBody,
    responses(
        (status = 201, body = PublishedDto,
            headers(("Location" = String, description = "The page's URL in this API: `/api/page/v1/pages/{id}`"))),
        (status = 400, description = "invalid_json, invalid_request (names the field; `database` when it names no database of yours in the page's project), password_required"),
        ScopeRefusals,
        (status = 409, description = "slug_conflict, alias_conflict"),
        LongBodyRefusals,
        (status = 500, description = "public_id_exhausted, internal_error")))]
#[post("/pages")]
pub async fn publish(
    state: web::Data<AppState>,
    auth: Scoped<PageApp>,
    body: WritableBody,
) -> Result<Created<PublishedDto>, ApiError> {
    // Parsed straight into typed files whose content is where it lies in the body, then
    // decoded there: the body stays alive until the last file is stored, and nothing else
    // holds the files.
    let (sent, sent_files) = parse_with_files(body, |sent: &mut PublishBody| {
        std::mem::take(&mut sent.files)
    })
    .await?;
    let req = PublishRequest {
        title: sent.title,
        files: sent_files,
        slug: sent.slug,
        entrypoint: sent.entrypoint,
        project: sent.project,
        database: sent.database,
        policy: quire_pages::PolicyInput {
            access: sent.access,
            password: sent.password,
            expires_at: sent.expires_at,
            max_views: sent.max_views.map(MaxViews::get),
            alias: sent.alias,
            allow: sent.allow.unwrap_or_default(),
        },
    };
    let started = Instant::now();
    let view = state.pages.publish(&auth.0, req).await;
    record_write(
        "publish",
        started,
        view.as_ref().ok().map(|v| v.page.size_bytes),
    );
    let view = view?;
    let access = view.exposure().access.as_str().to_owned();
    Ok(Created::at(
        format!("{PAGE}/pages/{}", view.page.id.0),
        PublishedDto {
            id: view.page.id.0,
            public_id: view.page.public_id,
            url: view.url,
            short_url: view.short_url,
            slug: view.page.slug,
            access,
            file_count: view.page.file_count,
            size_bytes: view.page.size_bytes,
            project: view.project_slug.as_str().to_owned(),
            database: view.page.database,
        },
    ))
}

/// Fetch a page.
#[utoipa::path(tag = "pages",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = PageDto),
        ScopeRefusals,
        (status = 404)))]
#[get("/pages/{id}")]
pub async fn get(
    state: web::Data<AppState>,
    auth: Scoped<PageApp>,
    id: web::Path<String>,
) -> Result<Answer<PageDto>, ApiError> {
    let view = state.pages.get(&auth.0, page_id(&id)?).await?;
    Ok(Answer::ok(PageDto::from(view)))
}

/// Update content and policy fields; archive or restore with `status`.
#[utoipa::path(tag = "pages",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = PatchPageBody,
    responses(
        (status = 200, body = PageDto),
        (status = 400, description = "invalid_json, invalid_request (names the field; `database` when it names no database of yours in the page's project), password_required"),
        ScopeRefusals,
        (status = 404),
        (status = 409, description = "slug_taken, alias_conflict")))]
#[patch("/pages/{id}")]
pub async fn patch(
    state: web::Data<AppState>,
    auth: Scoped<PageApp>,
    id: web::Path<String>,
    body: Body,
) -> Result<Answer<PageDto>, ApiError> {
    let id = page_id(&id)?;
    let sent: PatchPageBody = parse(&body.0)?;
    let req = PatchRequest {
        title: sent.title,
        slug: sent.slug,
        status: sent.status,
        database: sent.database,
        policy: quire_pages::PolicyPatch {
            access: sent.access,
            password: sent.password,
            expires_at: sent.expires_at,
            max_views: sent.max_views.map(|m| m.map(MaxViews::get)),
            alias: sent.alias,
            allow: sent.allow,
        },
    };
    let view = state.pages.update(&auth.0, id, req).await?;
    Ok(Answer::ok(PageDto::from(view)))
}

/// Delete a page: its stored files, then its short link, then the record.
#[utoipa::path(tag = "pages",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 204, description = "Deleted"),
        ScopeRefusals,
        (status = 404),
        (status = 500, description = "storage_cleanup_failed, link_cleanup_failed (the record is gone)")))]
#[delete("/pages/{id}")]
pub async fn delete(
    state: web::Data<AppState>,
    auth: Scoped<PageApp>,
    id: web::Path<String>,
) -> Result<NoContent, ApiError> {
    let id = page_id(&id)?;
    state.pages.delete(&auth.0, id).await?;
    Ok(NoContent)
}

/// Pages others shared with the caller (allow lists naming its account or email).
///
/// Most recently shared first: all of them, or a page of them with `limit` and `cursor`.
#[utoipa::path(tag = "pages",
    security(("bearer" = [])),
    params(PagingQuery),
    responses(
        (status = 200, body = SharedList),
        (status = 400, description = "invalid_limit, invalid_cursor"),
        ScopeRefusals))]
#[get("/shared")]
pub async fn shared(
    state: web::Data<AppState>,
    auth: Scoped<PageApp>,
    paging: web::Query<PagingQuery>,
) -> Result<Answer<SharedList>, ApiError> {
    let page = match paging.paging(SHARED_LIST)? {
        Some(paging) => state.pages.shared_page(&auth.0, &paging).await?,
        None => Paged {
            items: state.pages.shared_with(&auth.0).await?,
            next_cursor: None,
        },
    };
    Ok(Answer::ok(SharedList {
        pages: page
            .items
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
        next_cursor: page.next_cursor,
    }))
}
