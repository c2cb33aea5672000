//! The page tools: list, find and read pages, publish one, add files, change and delete it,
//! and list what others shared, on the page service's use cases with the REST API's codes.
//! A page is named by its id, slug, public id, alias or URL (`PageService::find`). Their
//! arguments are in `args.rs`, their results in `output.rs`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use quire_kernel::{NameKey, Paging, TimeKey};
use quire_pages::{FileInput, PatchRequest, PublishRequest, Unreadable};

use super::args::{
    AddFilesArgs, DeletePageArgs, FileArg, GetPageArgs, ListPagesArgs, ListSharedArgs, PublishArgs,
    ReadFileArgs, UpdatePageArgs,
};
use super::common::{Call, ToolError, confirmed, refused};
use super::output::{
    DeletedOut, FileItem, FileSliceOut, FilesAddedOut, PageDetailOut, PageOut, PagesOut,
    PublishedOut, SharedItem, SharedOut,
};

/// Most items a list tool returns at once.
const MAX_LIST: u64 = 100;
/// Items a list tool returns when not told.
const DEFAULT_LIST: u64 = 20;
/// Most files `get_page` lists.
const MAX_LISTED_FILES: u32 = 200;
/// Bytes `read_page_file` returns when not told.
const DEFAULT_SLICE: u64 = 32 * 1024;
/// Longest `request_id`.
const MAX_REQUEST_ID: usize = 64;

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

pub(super) async fn list_pages(cx: &Call<'_>, sent: ListPagesArgs) -> Result<PagesOut, ToolError> {
    let paging = paging(quire_pages::PAGES_LIST, sent.limit, sent.cursor.as_deref())?;
    let (project, page) = cx
        .state
        .pages
        .list_page(
            cx.principal(),
            sent.project.as_deref(),
            sent.status.as_deref(),
            &paging,
        )
        .await
        .map_err(refused)?;
    Ok(PagesOut {
        pages: page.items.into_iter().map(PageOut::from).collect(),
        project: project.as_str().to_owned(),
        next_cursor: page.next_cursor,
    })
}

pub(super) async fn get_page(cx: &Call<'_>, sent: GetPageArgs) -> Result<PageDetailOut, ToolError> {
    let pages = &cx.state.pages;
    let view = pages
        .find(cx.principal(), &sent.page)
        .await
        .map_err(refused)?;
    let id = view.page.id;
    cx.acts_on(id.0);
    let (files, files_truncated) = if sent.include_files {
        let listed = pages
            .files_page(
                cx.principal(),
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
    Ok(PageDetailOut {
        page: PageOut::from(view),
        files,
        files_truncated,
    })
}

pub(super) async fn read_page_file(
    cx: &Call<'_>,
    sent: ReadFileArgs,
) -> Result<FileSliceOut, ToolError> {
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
    let pages = &cx.state.pages;
    let view = pages
        .find(cx.principal(), &sent.page)
        .await
        .map_err(refused)?;
    cx.acts_on(view.page.id.0);
    let slice = pages
        .read_file(
            cx.principal(),
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
    Ok(FileSliceOut {
        path: slice.entry.path,
        content_type: slice.entry.content_type,
        encoding: encoding.to_owned(),
        content,
        offset: slice.offset,
        total_bytes: slice.entry.size_bytes,
        truncated,
    })
}

pub(super) async fn publish_page(
    cx: &Call<'_>,
    mut sent: PublishArgs,
) -> Result<PublishedOut, ToolError> {
    if let Some(id) = &sent.request_id
        && (id.is_empty() || id.chars().count() > MAX_REQUEST_ID)
    {
        return Err(ToolError::new(
            "invalid_request",
            format!("request_id must be 1 to {MAX_REQUEST_ID} characters"),
        ));
    }
    let policy = sent.policy();
    let req = PublishRequest {
        title: sent.title,
        files: files_of(sent.files),
        slug: sent.slug,
        entrypoint: sent.entrypoint,
        project: sent.project,
        database: sent.database,
        policy,
    };
    let (view, replayed) = cx
        .state
        .pages
        .publish_once(
            cx.principal(),
            &cx.caller.client,
            sent.request_id.as_deref(),
            req,
        )
        .await
        .map_err(refused)?;
    cx.acts_on(view.page.id.0);
    let access = view.exposure().access.as_str().to_owned();
    Ok(PublishedOut {
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

pub(super) async fn add_files(
    cx: &Call<'_>,
    sent: AddFilesArgs,
) -> Result<FilesAddedOut, ToolError> {
    let pages = &cx.state.pages;
    let view = pages
        .find(cx.principal(), &sent.page)
        .await
        .map_err(refused)?;
    cx.acts_on(view.page.id.0);
    let added = pages
        .add_files(cx.principal(), view.page.id, files_of(sent.files))
        .await
        .map_err(refused)?;
    Ok(FilesAddedOut {
        id: added.id.0.to_string(),
        file_count: added.file_count,
        size_bytes: added.size_bytes,
    })
}

pub(super) async fn update_page(
    cx: &Call<'_>,
    mut sent: UpdatePageArgs,
) -> Result<PageOut, ToolError> {
    let pages = &cx.state.pages;
    let view = pages
        .find(cx.principal(), &sent.page)
        .await
        .map_err(refused)?;
    cx.acts_on(view.page.id.0);
    let policy = sent.policy();
    let req = PatchRequest {
        title: sent.title,
        slug: sent.slug,
        status: sent.status,
        database: sent.database,
        policy,
    };
    let updated = pages
        .update(cx.principal(), view.page.id, req)
        .await
        .map_err(refused)?;
    Ok(PageOut::from(updated))
}

pub(super) async fn delete_page(
    cx: &Call<'_>,
    sent: DeletePageArgs,
) -> Result<DeletedOut, ToolError> {
    let pages = &cx.state.pages;
    let view = pages
        .find(cx.principal(), &sent.page)
        .await
        .map_err(refused)?;
    cx.acts_on(view.page.id.0);
    confirmed(sent.confirm == view.page.slug, || {
        format!(
            "confirm must be the page's slug \"{}\"; nothing was deleted",
            view.page.slug
        )
    })?;
    pages
        .delete(cx.principal(), view.page.id)
        .await
        .map_err(refused)?;
    Ok(DeletedOut {
        deleted: true,
        id: view.page.id.0.to_string(),
    })
}

pub(super) async fn list_shared(
    cx: &Call<'_>,
    sent: ListSharedArgs,
) -> Result<SharedOut, ToolError> {
    let pages = &cx.state.pages;
    let paging = paging(quire_pages::SHARED_LIST, sent.limit, sent.cursor.as_deref())?;
    let page = pages
        .shared_page(cx.principal(), &paging)
        .await
        .map_err(refused)?;
    Ok(SharedOut {
        pages: page
            .items
            .into_iter()
            .map(|s| SharedItem {
                page_id: s.page.id.0.to_string(),
                url: pages.url_of(&s.owner_handle, &s.page.slug),
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
