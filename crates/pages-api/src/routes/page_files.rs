//! A page's files: listed (by path, all or a page of them), added (a path already there is
//! replaced), or replaced as a whole set, all or nothing.

use std::time::Instant;

use actix_web::web;
use actix_web::{get, post, put};
use quire_edge::answer::Answer;
use quire_edge::auth::{PageApp, Scoped};
use quire_edge::body::WritableBody;
use quire_edge::json::RequestBody;
use quire_edge::paging::PagingQuery;
use quire_edge::refusals::{LongBodyRefusals, ScopeRefusals};
use quire_edge::{ApiError, AppState};
use quire_kernel::{ErrorCode, Paged};
use quire_pages::{FILES_LIST, FileEntry, FileInput, FilesAdded};
use serde::Deserialize;
use utoipa::ToSchema;

use super::page_id;
use crate::dto::{FileDto, FileList, FilesAddedDto};
use crate::files::{FileBody, parse_with_files};
use crate::write_metrics::record_write;

/// Files to add to a page, or (`PUT`) its whole new file set.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = crate::examples::add_files_body)]
pub struct AddFilesBody {
    /// The files to add; a path already there is replaced.
    #[schema(min_items = 1)]
    pub files: Vec<FileBody>,
}

impl RequestBody for AddFilesBody {
    const CODE: ErrorCode = ErrorCode::InvalidRequest;
}

fn file_dto(f: FileEntry) -> FileDto {
    FileDto {
        path: f.path,
        size_bytes: f.size_bytes,
        content_type: f.content_type,
        sha256: f.sha256,
    }
}

/// List a page's files.
///
/// By path: all of them, or a page of them with `limit` and `cursor`.
#[utoipa::path(tag = "pages",
    security(("bearer" = [])),
    params(("id" = Uuid, Path), PagingQuery),
    responses(
        (status = 200, body = FileList),
        (status = 400, description = "invalid_limit, invalid_cursor"),
        ScopeRefusals,
        (status = 404)))]
#[get("/pages/{id}/files")]
pub async fn files(
    state: web::Data<AppState>,
    auth: Scoped<PageApp>,
    id: web::Path<String>,
    paging: web::Query<PagingQuery>,
) -> Result<Answer<FileList>, ApiError> {
    let id = page_id(&id)?;
    let page = match paging.paging(FILES_LIST)? {
        Some(paging) => state.pages.files_page(&auth.0, id, &paging).await?,
        None => Paged {
            items: state.pages.files(&auth.0, id).await?,
            next_cursor: None,
        },
    };
    Ok(Answer::ok(FileList {
        files: page.items.into_iter().map(file_dto).collect(),
        next_cursor: page.next_cursor,
    }))
}

/// Add files to a page (a path already present is replaced).
#[utoipa::path(tag = "pages",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = AddFilesBody,
    responses(
        (status = 200, body = FilesAddedDto),
        (status = 400, description = "invalid_json, invalid_request"),
        ScopeRefusals,
        (status = 404),
        LongBodyRefusals))]
#[post("/pages/{id}/files")]
pub async fn add_files(
    state: web::Data<AppState>,
    auth: Scoped<PageApp>,
    id: web::Path<String>,
    body: WritableBody,
) -> Result<Answer<FilesAddedDto>, ApiError> {
    let id = page_id(&id)?;
    let added = state
        .pages
        .add_files(&auth.0, id, sent_files(body).await?)
        .await?;
    Ok(Answer::ok(added.into()))
}

/// Replace a page's whole file set, all or nothing: the page keeps its id, slug, short link,
/// access policy, expiry, view budget and counts, and its entrypoint (which must be among the
/// files); files not sent are gone afterwards. An archived page may be given new files and
/// stays archived.
#[utoipa::path(tag = "pages",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = AddFilesBody,
    responses(
        (status = 200, body = FilesAddedDto, description = "The page's new file count and size"),
        (status = 400, description = "invalid_json, invalid_request (a bad entry, a path twice, the entrypoint missing)"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        LongBodyRefusals))]
#[put("/pages/{id}/files")]
pub async fn replace_files(
    state: web::Data<AppState>,
    auth: Scoped<PageApp>,
    id: web::Path<String>,
    body: WritableBody,
) -> Result<Answer<FilesAddedDto>, ApiError> {
    let id = page_id(&id)?;
    let sent = sent_files(body).await?;
    let started = Instant::now();
    let replaced = state.pages.replace_files(&auth.0, id, sent).await;
    let size = replaced.as_ref().ok().map(|r| r.size_bytes);
    record_write("replace_files", started, size);
    Ok(Answer::ok(replaced?.into()))
}

/// The files of an add or replace body, decoded out of it.
async fn sent_files(body: WritableBody) -> Result<Vec<FileInput>, ApiError> {
    let (_, sent) = parse_with_files(body, |sent: &mut AddFilesBody| {
        std::mem::take(&mut sent.files)
    })
    .await?;
    Ok(sent)
}

impl From<FilesAdded> for FilesAddedDto {
    fn from(added: FilesAdded) -> Self {
        Self {
            id: added.id.0,
            file_count: added.file_count,
            size_bytes: added.size_bytes,
        }
    }
}
