//! The Pages page: the account's pages per project (title, address and short link, access,
//! expiry, views against the budget, size, last update), and a page's detail with its files
//! and the actions the API offers: access, password, expiry and budget; archive, restore,
//! delete. Each goes through the page service, as the API's routes do.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_kernel::{PageId, Principal};
use quire_pages::{PageError, PageView, PatchRequest};
use time::format_description::well_known::Rfc3339;

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::nav::{Who, section};
use super::chart::views_chart;
use super::guards::{Owner, Posted, Unparsed};
use super::keys_page::{day, minute};
use super::render::{page, see_other};
use super::session::query;

/// A page as the list and the detail show it.
struct PageRow {
    id: String,
    slug: String,
    title: String,
    project: String,
    url: String,
    short_url: Option<String>,
    status: &'static str,
    access: &'static str,
    expires: String,
    expires_input: String,
    views: String,
    max_views_input: String,
    size: String,
    updated: String,
}

impl From<PageView> for PageRow {
    fn from(v: PageView) -> Self {
        let policy = v.link.as_ref().map(|l| &l.policy);
        let expires_at = policy.and_then(|p| p.expires_at);
        let max_views = policy.and_then(|p| p.max_views);
        let count = v.link.as_ref().map_or(0, |l| l.view_count);
        Self {
            id: v.page.id.0.to_string(),
            slug: v.page.slug.clone(),
            title: v.page.title.clone(),
            project: v.project_slug.as_str().to_owned(),
            url: v.url,
            short_url: v.short_url,
            status: v.page.status.as_str(),
            access: policy.map_or("private", |p| p.access.as_str()),
            expires: expires_at.map_or_else(|| "never".into(), minute),
            expires_input: expires_at
                .and_then(|t| t.format(&Rfc3339).ok())
                .unwrap_or_default(),
            views: match max_views {
                Some(max) => format!("{count} of {max}"),
                None => count.to_string(),
            },
            max_views_input: max_views.map(|m| m.to_string()).unwrap_or_default(),
            size: human_bytes(v.page.size_bytes),
            updated: day(v.page.updated_at),
        }
    }
}

fn human_bytes(n: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // shown to one decimal
    match n {
        0..1_024 => format!("{n} B"),
        1_024..1_048_576 => format!("{:.1} KiB", n as f64 / 1_024.0),
        _ => format!("{:.1} MiB", n as f64 / 1_048_576.0),
    }
}

#[derive(Template)]
#[template(path = "pages.html")]
struct PagesPage<'a> {
    signed_in_as: Option<Who>,
    error: Option<String>,
    projects: Vec<String>,
    project: &'a str,
    status: &'a str,
    pages: Vec<PageRow>,
}

#[derive(Template)]
#[template(path = "page_detail.html")]
struct DetailPage {
    signed_in_as: Option<Who>,
    error: Option<String>,
    p: PageRow,
    /// Path, content type, bytes.
    files: Vec<(String, String, u64)>,
    accesses: [&'static str; 4],
    /// The views chart of the last [`CHART_DAYS`] days (inline SVG made here).
    chart: String,
    chart_days: u16,
}

/// How many days the views chart shows.
const CHART_DAYS: u16 = 30;

/// The action form of the detail page.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct ActionFields {
    action: String,
    access: String,
    password: String,
    expires_at: String,
    max_views: String,
    confirm: String,
}

/// The status the API gives the same refusal.
fn refusal_status(e: &PageError) -> StatusCode {
    actix_web::ResponseError::status_code(&ApiError::from(e.clone()))
}

/// `GET /account/pages?project=&status=`.
pub async fn pages(
    state: web::Data<AppState>,
    req: HttpRequest,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    let q = query(&req);
    let projects: Vec<String> = state
        .projects
        .list(&principal)
        .await
        .map_err(ApiError::from)?
        .into_iter()
        .map(|p| p.slug.as_str().to_owned())
        .collect();
    let status = q.get("status").map_or("active", String::as_str);
    let (status_code, error, project, rows) = match state
        .pages
        .list(
            &principal,
            q.get("project").map(String::as_str),
            Some(status),
        )
        .await
    {
        Ok((slug, views)) => (
            StatusCode::OK,
            None,
            slug.as_str().to_owned(),
            views.into_iter().map(PageRow::from).collect(),
        ),
        Err(PageError::Infra(e)) => return Err(e.into()),
        Err(e) => (
            refusal_status(&e),
            Some(e.to_string()),
            String::new(),
            Vec::new(),
        ),
    };
    page(
        &state,
        status_code,
        &PagesPage {
            signed_in_as: Who::of(&account, section::PAGES),
            error,
            projects,
            project: &project,
            status: if status == "archived" {
                "archived"
            } else {
                "active"
            },
            pages: rows,
        },
    )
}

async fn detail_page(
    state: &AppState,
    principal: &Principal,
    handle: &str,
    id: PageId,
    status: StatusCode,
    error: Option<String>,
) -> Result<HttpResponse, ApiError> {
    let view = state
        .pages
        .get(principal, id)
        .await
        .map_err(ApiError::from)?;
    let files = state
        .pages
        .files(principal, id)
        .await
        .map_err(ApiError::from)?
        .into_iter()
        .map(|f| (f.path, f.content_type, f.size_bytes))
        .collect();
    let days = state
        .pages
        .daily_views(principal, id, CHART_DAYS)
        .await
        .map_err(ApiError::from)?;
    page(
        state,
        status,
        &DetailPage {
            signed_in_as: Who::acting(principal, handle, section::PAGES),
            error,
            p: PageRow::from(view),
            files,
            accesses: ["private", "password", "allow_list", "public"],
            chart: views_chart(&days),
            chart_days: CHART_DAYS,
        },
    )
}

fn page_id(raw: &str) -> Result<PageId, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(PageId)
        .map_err(|_| ApiError::from(PageError::NotFound))
}

/// `GET /account/pages/{id}`.
pub async fn page_detail(
    state: web::Data<AppState>,
    id: web::Path<String>,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    let id = page_id(&id)?;
    detail_page(
        &state,
        &principal,
        account.handle.as_str(),
        id,
        StatusCode::OK,
        None,
    )
    .await
}

/// `POST /account/pages/{id}`: `action` is `settings`, `archive`, `restore` or `delete`.
pub async fn page_action(
    state: web::Data<AppState>,
    id: web::Path<String>,
    Posted(f, Owner { account, principal }): Posted<Unparsed<ActionFields>, Owner>,
) -> Result<HttpResponse, ApiError> {
    let id = page_id(&id)?;
    let f = f.parse()?;
    let here = format!("/account/pages/{}", id.0);
    let result = match f.action.as_str() {
        "delete" if f.confirm == "yes" => {
            let project = state
                .pages
                .get(&principal, id)
                .await
                .map_err(ApiError::from)?;
            return match state.pages.delete(&principal, id).await {
                Ok(()) => Ok(see_other(&format!(
                    "/account/pages?project={}",
                    project.project_slug.as_str()
                ))),
                Err(e) => Err(e.into()),
            };
        }
        "delete" => Err(PageError::Invalid(
            "tick \"delete for good\" to delete the page".into(),
        )),
        "archive" | "restore" => {
            let status = if f.action == "archive" {
                "archived"
            } else {
                "active"
            };
            state
                .pages
                .update(
                    &principal,
                    id,
                    PatchRequest {
                        status: Some(status.into()),
                        ..PatchRequest::default()
                    },
                )
                .await
        }
        "settings" => {
            let max_views = match f.max_views.trim() {
                "" => Ok(None),
                n => n
                    .parse::<i128>()
                    .map(Some)
                    .map_err(|_| PageError::Invalid("max_views must be a whole number".into())),
            };
            match max_views {
                Err(e) => Err(e),
                Ok(max_views) => {
                    state
                        .pages
                        .update(
                            &principal,
                            id,
                            PatchRequest {
                                access: Some(f.access.clone()),
                                password: (!f.password.is_empty())
                                    .then(|| Some(f.password.clone())),
                                expires_at: Some(
                                    Some(f.expires_at.trim().to_owned()).filter(|e| !e.is_empty()),
                                ),
                                max_views: Some(max_views),
                                ..PatchRequest::default()
                            },
                        )
                        .await
                }
            }
        }
        _ => Err(PageError::Invalid(
            "action must be settings, archive, restore or delete".into(),
        )),
    };
    match result {
        Ok(_) => Ok(see_other(&here)),
        Err(PageError::Infra(e)) => Err(e.into()),
        Err(e) => {
            detail_page(
                &state,
                &principal,
                account.handle.as_str(),
                id,
                refusal_status(&e),
                Some(e.to_string()),
            )
            .await
        }
    }
}
