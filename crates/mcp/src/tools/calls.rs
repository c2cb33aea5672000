//! Each tool's call: its arguments parsed, the use case the REST handler uses, its result.

use std::time::Instant;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use quire_edge::AppState;
use quire_kernel::{NameKey, Paging, TimeKey};
use quire_pages::{FileInput, PatchRequest, PublishRequest, Unreadable};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::args::{
    AddFilesArgs, DeletePageArgs, FileArg, GetPageArgs, ListPagesArgs, ListSharedArgs, NoArgs,
    PublishArgs, ReadFileArgs, UpdatePageArgs,
};
use super::output::{
    DeletedOut, FileItem, FileSliceOut, FilesAddedOut, PageDetailOut, PageOut, PagesOut,
    ProjectItem, ProjectsOut, PublishedOut, SharedItem, SharedOut,
};
use super::{ToolError, WRITE_TOOLS, refused, visible_to};
use crate::limiter::Limiter;
use crate::transport::Caller;

/// Most items a list tool returns at once.
const MAX_LIST: u64 = 100;
/// Items a list tool returns when not told.
const DEFAULT_LIST: u64 = 20;
/// Most files `get_page` lists.
const MAX_LISTED_FILES: u32 = 200;
/// Bytes `read_page_file` returns when not told.
const DEFAULT_SLICE: u64 = 32 * 1024;
/// Longest `request_id`.
pub const MAX_REQUEST_ID: usize = 64;

/// What a call did, for the audit line and the result.
struct Done {
    value: Result<serde_json::Value, ToolError>,
    target: Option<String>,
}

pub(super) fn parse<T: DeserializeOwned>(args: Option<JsonObject>) -> Result<T, ToolError> {
    serde_json::from_value(serde_json::Value::Object(args.unwrap_or_default()))
        .map_err(|e| ToolError::new("invalid_request", format!("arguments: {e}")))
}

pub(super) fn json<T: Serialize>(out: &T) -> Result<serde_json::Value, ToolError> {
    serde_json::to_value(out).map_err(|e| ToolError::new("internal_error", e.to_string()))
}

fn list_limit(limit: Option<u64>) -> Result<u64, ToolError> {
    match limit {
        None => Ok(DEFAULT_LIST),
        Some(n) if (1..=MAX_LIST).contains(&n) => Ok(n),
        Some(_) => Err(ToolError::new(
            "invalid_limit",
            format!("limit must be a whole number from 1 to {MAX_LIST}"),
        )),
    }
}

fn paging(
    list: &str,
    limit: Option<u64>,
    cursor: Option<&str>,
) -> Result<Paging<TimeKey>, ToolError> {
    let limit = list_limit(limit)?;
    Paging::requested(list, Some(limit), cursor)
        .map_err(refused)?
        .ok_or_else(|| ToolError::new("internal_error", "no paging"))
}

fn files_of(sent: Vec<FileArg>) -> Vec<FileInput> {
    sent.into_iter()
        .map(|f| {
            let content = match f.encoding.as_deref() {
                None | Some("utf8") => Ok(Bytes::from(f.content.into_bytes())),
                Some("base64") => STANDARD
                    .decode(f.content.as_bytes())
                    .map(Bytes::from)
                    .map_err(|_| Unreadable::BadBase64),
                Some(other) => Err(Unreadable::UnknownEncoding(other.to_owned())),
            };
            FileInput {
                path: f.path,
                content,
            }
        })
        .collect()
}

/// Runs tool `name` for `caller`; `None` when no such tool exists for it (a protocol error).
pub async fn call(
    state: &AppState,
    limiter: &Limiter,
    caller: &Caller,
    name: &str,
    args: Option<JsonObject>,
) -> Option<CallToolResult> {
    if !super::catalogue().iter().any(|t| t.name == name) {
        return None;
    }
    let started = Instant::now();
    let done = if !visible_to(&caller.principal, name) {
        Done {
            value: Err(ToolError::new(
                "insufficient_scope",
                super::databases::scope_refusal(name),
            )),
            target: None,
        }
    } else if (WRITE_TOOLS.contains(&name)
        || super::LINK_WRITE_TOOLS.contains(&name)
        || super::OBJECT_WRITE_TOOLS.contains(&name)
        || super::DATABASE_WRITE_TOOLS.contains(&name))
        && let Err(wait) = limiter.hit(&caller.client, started)
    {
        Done {
            value: Err(ToolError::new(
                "rate_limited",
                format!("too many changes from this credential; retry in {wait} s"),
            )),
            target: None,
        }
    } else {
        run(state, caller, name, args).await
    };
    let outcome = match &done.value {
        Ok(_) => "ok",
        Err(e) => e.code.as_str(),
    };
    tracing::info!(
        target: "quire::mcp::audit",
        account = %caller.principal.account_id.0,
        client = %caller.client,
        tool = name,
        target_id = done.target.as_deref().unwrap_or("-"),
        outcome,
        ms = started.elapsed().as_millis() as u64,
        "mcp tool call"
    );
    Some(match done.value {
        Ok(value) => super::databases::answer(name, value),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e.text())]),
    })
}

async fn run(state: &AppState, caller: &Caller, name: &str, args: Option<JsonObject>) -> Done {
    let mut target = None;
    let value = match name {
        "list_projects" => list_projects(state, caller, args).await,
        "list_pages" => list_pages(state, caller, args).await,
        "get_page" => get_page(state, caller, args, &mut target).await,
        "read_page_file" => read_page_file(state, caller, args, &mut target).await,
        "publish_page" => publish_page(state, caller, args, &mut target).await,
        "add_files" => add_files(state, caller, args, &mut target).await,
        "update_page" => update_page(state, caller, args, &mut target).await,
        "delete_page" => delete_page(state, caller, args, &mut target).await,
        "list_shared_pages" => list_shared(state, caller, args).await,
        "create_link" => super::links::create_link(state, caller, args, &mut target).await,
        "list_links" => super::links::list_links(state, caller, args).await,
        "update_link" => super::links::update_link(state, caller, args, &mut target).await,
        "delete_link" => super::links::delete_link(state, caller, args, &mut target).await,
        "link_stats" => super::links::link_stats(state, caller, args, &mut target).await,
        "list_objects" => super::objects::list_objects(state, caller, args).await,
        "update_object" => super::objects::update_object(state, caller, args, &mut target).await,
        "delete_object" => super::objects::delete_object(state, caller, args, &mut target).await,
        "create_upload" => super::objects::create_upload(state, caller, args, &mut target).await,
        "list_databases" => super::databases::list_databases(state, caller, args).await,
        "create_database" => {
            super::databases::create_database(state, caller, args, &mut target).await
        }
        "run_sql" => super::databases::run_sql(state, caller, args, &mut target).await,
        "database_keys" => super::databases::database_keys(state, caller, args, &mut target).await,
        "rotate_database_keys" => {
            super::databases::rotate_database_keys(state, caller, args, &mut target).await
        }
        _ => Err(ToolError::new("not_found", format!("no tool {name}"))),
    };
    Done { value, target }
}

async fn list_projects(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
) -> Result<serde_json::Value, ToolError> {
    let NoArgs {} = parse(args)?;
    let projects = state
        .projects
        .list(&caller.principal)
        .await
        .map_err(refused)?;
    json(&ProjectsOut {
        projects: projects
            .into_iter()
            .map(|p| ProjectItem {
                slug: p.slug.as_str().to_owned(),
                name: p.name,
                status: p.status.as_str().to_owned(),
            })
            .collect(),
    })
}

async fn list_pages(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
) -> Result<serde_json::Value, ToolError> {
    let sent: ListPagesArgs = parse(args)?;
    let paging = paging(quire_pages::PAGES_LIST, sent.limit, sent.cursor.as_deref())?;
    let (project, page) = state
        .pages
        .list_page(
            &caller.principal,
            sent.project.as_deref(),
            sent.status.as_deref(),
            &paging,
        )
        .await
        .map_err(refused)?;
    json(&PagesOut {
        pages: page.items.into_iter().map(PageOut::from).collect(),
        project: project.as_str().to_owned(),
        next_cursor: page.next_cursor,
    })
}

async fn get_page(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<serde_json::Value, ToolError> {
    let sent: GetPageArgs = parse(args)?;
    let view = state
        .pages
        .find(&caller.principal, &sent.page)
        .await
        .map_err(refused)?;
    let id = view.page.id;
    *target = Some(id.0.to_string());
    let (files, files_truncated) = if sent.include_files {
        let listed = state
            .pages
            .files_page(
                &caller.principal,
                id,
                &Paging::<NameKey>::first(MAX_LISTED_FILES),
            )
            .await
            .map_err(refused)?;
        let truncated = listed.next_cursor.is_some();
        let files = listed
            .items
            .into_iter()
            .map(|f| FileItem {
                path: f.path,
                size_bytes: f.size_bytes,
                content_type: f.content_type,
            })
            .collect();
        (Some(files), Some(truncated))
    } else {
        (None, None)
    };
    json(&PageDetailOut {
        page: PageOut::from(view),
        files,
        files_truncated,
    })
}

async fn read_page_file(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<serde_json::Value, ToolError> {
    let sent: ReadFileArgs = parse(args)?;
    let max = sent.max_bytes.unwrap_or(DEFAULT_SLICE);
    if max == 0 || max > quire_pages::MAX_FILE_SLICE {
        return Err(ToolError::new(
            "invalid_request",
            format!(
                "max_bytes must be from 1 to {}",
                quire_pages::MAX_FILE_SLICE
            ),
        ));
    }
    let view = state
        .pages
        .find(&caller.principal, &sent.page)
        .await
        .map_err(refused)?;
    *target = Some(view.page.id.0.to_string());
    let slice = state
        .pages
        .read_file(
            &caller.principal,
            view.page.id,
            &sent.path,
            sent.offset.unwrap_or(0),
            max,
        )
        .await
        .map_err(refused)?;
    let truncated = slice.truncated();
    let (encoding, content) = match String::from_utf8(slice.bytes) {
        Ok(text) => ("utf8", text),
        Err(e) => ("base64", STANDARD.encode(e.as_bytes())),
    };
    json(&FileSliceOut {
        path: slice.entry.path,
        content_type: slice.entry.content_type,
        encoding: encoding.to_owned(),
        content,
        offset: slice.offset,
        total_bytes: slice.entry.size_bytes,
        truncated,
    })
}

async fn publish_page(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<serde_json::Value, ToolError> {
    let sent: PublishArgs = parse(args)?;
    if let Some(id) = &sent.request_id
        && (id.is_empty() || id.chars().count() > MAX_REQUEST_ID)
    {
        return Err(ToolError::new(
            "invalid_request",
            format!("request_id must be 1 to {MAX_REQUEST_ID} characters"),
        ));
    }
    let req = PublishRequest {
        title: sent.title,
        files: files_of(sent.files),
        slug: sent.slug,
        entrypoint: sent.entrypoint,
        access: sent.access,
        password: sent.password,
        expires_at: sent.expires_at,
        max_views: sent.max_views.map(i128::from),
        alias: sent.alias,
        allow: sent.allow.unwrap_or_default(),
        project: sent.project,
        database: sent.database,
    };
    let (view, replayed) = state
        .pages
        .publish_once(
            &caller.principal,
            &caller.client,
            sent.request_id.as_deref(),
            req,
        )
        .await
        .map_err(refused)?;
    *target = Some(view.page.id.0.to_string());
    let access = view.exposure().access.as_str().to_owned();
    json(&PublishedOut {
        id: view.page.id.0.to_string(),
        public_id: view.page.public_id,
        url: view.url,
        short_url: view.short_url,
        slug: view.page.slug,
        access,
        file_count: view.page.file_count,
        size_bytes: view.page.size_bytes,
        project: view.project_slug.as_str().to_owned(),
        replayed,
    })
}

async fn add_files(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<serde_json::Value, ToolError> {
    let sent: AddFilesArgs = parse(args)?;
    let view = state
        .pages
        .find(&caller.principal, &sent.page)
        .await
        .map_err(refused)?;
    *target = Some(view.page.id.0.to_string());
    let added = state
        .pages
        .add_files(&caller.principal, view.page.id, files_of(sent.files))
        .await
        .map_err(refused)?;
    json(&FilesAddedOut {
        id: added.id.0.to_string(),
        file_count: added.file_count,
        size_bytes: added.size_bytes,
    })
}

async fn update_page(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<serde_json::Value, ToolError> {
    let sent: UpdatePageArgs = parse(args)?;
    let view = state
        .pages
        .find(&caller.principal, &sent.page)
        .await
        .map_err(refused)?;
    *target = Some(view.page.id.0.to_string());
    let req = PatchRequest {
        title: sent.title,
        slug: sent.slug,
        access: sent.access,
        password: sent.password,
        expires_at: sent.expires_at,
        max_views: sent.max_views.map(|m| m.map(i128::from)),
        alias: sent.alias,
        status: sent.status,
        allow: sent.allow,
        database: sent.database,
    };
    let updated = state
        .pages
        .update(&caller.principal, view.page.id, req)
        .await
        .map_err(refused)?;
    json(&PageOut::from(updated))
}

async fn delete_page(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<serde_json::Value, ToolError> {
    let sent: DeletePageArgs = parse(args)?;
    let view = state
        .pages
        .find(&caller.principal, &sent.page)
        .await
        .map_err(refused)?;
    *target = Some(view.page.id.0.to_string());
    if sent.confirm != view.page.slug {
        return Err(ToolError::new(
            "invalid_request",
            format!(
                "confirm must be the page's slug \"{}\"; nothing was deleted",
                view.page.slug
            ),
        ));
    }
    state
        .pages
        .delete(&caller.principal, view.page.id)
        .await
        .map_err(refused)?;
    json(&DeletedOut {
        deleted: true,
        id: view.page.id.0.to_string(),
    })
}

async fn list_shared(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
) -> Result<serde_json::Value, ToolError> {
    let sent: ListSharedArgs = parse(args)?;
    let paging = paging(quire_pages::SHARED_LIST, sent.limit, sent.cursor.as_deref())?;
    let page = state
        .pages
        .shared_page(&caller.principal, &paging)
        .await
        .map_err(refused)?;
    json(&SharedOut {
        pages: page
            .items
            .into_iter()
            .map(|s| SharedItem {
                page_id: s.page.id.0.to_string(),
                url: state.pages.url_of(&s.owner_handle, &s.page.slug),
                title: s.page.title,
                owner_handle: s.owner_handle,
                shared_at: s
                    .shared_at
                    .format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or_default(),
            })
            .collect(),
        next_cursor: page.next_cursor,
    })
}
