//! The Pages page: the account's pages per project (title, address and short link, access
//! and state, expiry, views against the budget, size, last update), and a page's detail: its
//! address, short link with its QR code, the settings the API offers (access, password,
//! expiry, budget; archive, restore, delete), the views chart, then its files, paged. Each
//! action goes through the page service, as the API's routes do; a budget that would take
//! the page offline at once waits for a confirmation.
//!
//! Beside it: `row`, a page as the overview and the detail show it, and `visit`, the
//! visitor's sign-in hand-off from the pages origin.

pub(crate) mod row;
pub(crate) mod visit;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_kernel::{PageId, Principal};
use quire_pages::{PageError, PatchRequest};

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::pages::row::{ACCESS_CHOICES, PageRow, human_bytes};
use crate::shared::chart::views_chart;
use crate::shared::guards::{Owner, Posted, Unparsed};
use crate::shared::nav::{Who, project_slugs, section};
use crate::shared::render::{listed, page, refusal_status, see_other};
use crate::shared::session::query;
use crate::shared::when::expiry_field;

#[derive(Template)]
#[template(path = "pages.html")]
struct PagesPage<'a> {
    signed_in_as: Option<Who>,
    error: Option<String>,
    projects: Vec<String>,
    project: &'a str,
    status: &'a str,
    pages: Vec<PageRow>,
    /// The server, as the CLI's `--server` names it.
    server: &'a str,
}

/// What the settings form shows: the page's own values, or those just posted when the page
/// asks to confirm them.
struct SettingsForm {
    access: String,
    expires: String,
    max_views: String,
    /// Why the post needs a confirmation (lowering the budget to or below the views already
    /// served takes the page offline), shown above the form with the button that confirms.
    budget_warning: Option<String>,
}

#[derive(Template)]
#[template(path = "page_detail.html")]
struct DetailPage {
    signed_in_as: Option<Who>,
    error: Option<String>,
    p: PageRow,
    /// The short link's QR code (inline SVG), when the page has a short link.
    qr_svg: Option<String>,
    form: SettingsForm,
    accesses: [(&'static str, &'static str); 4],
    /// This page of the file list: path, content type, size.
    files: Vec<(String, String, String)>,
    file_count: usize,
    files_page: usize,
    files_pages: usize,
    /// The views chart of the last [`CHART_DAYS`] days (inline SVG made here).
    chart: String,
    chart_days: u16,
}

/// How many days the views chart shows.
const CHART_DAYS: u16 = 30;

/// How many files a page of the file list shows.
const FILES_PER_PAGE: usize = 50;

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
    /// `yes` once the person has confirmed a budget that takes the page offline.
    confirm_budget: String,
}

/// `GET /account/pages?project=&status=`.
pub async fn pages(
    state: web::Data<AppState>,
    req: HttpRequest,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    let q = query(&req);
    let projects = project_slugs(&state, &principal).await?;
    let status = q.get("status").map_or("active", String::as_str);
    let now = state.pages.now();
    let outcome = state
        .pages
        .list(
            &principal,
            q.get("project").map(String::as_str),
            Some(status),
        )
        .await;
    let (status_code, error, project, rows) = listed(outcome, |v| PageRow::new(v, now))?.parts();
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
            server: &state.base_url,
        },
    )
}

/// What the detail shows besides the page itself.
struct Shown {
    status: StatusCode,
    error: Option<String>,
    /// The settings as just posted, when they wait for a confirmation.
    posted: Option<SettingsForm>,
    /// Which page of the file list (from 1).
    files_page: usize,
}

async fn detail_page(
    state: &AppState,
    principal: &Principal,
    handle: &str,
    id: PageId,
    shown: Shown,
) -> Result<HttpResponse, ApiError> {
    let now = state.pages.now();
    let view = state
        .pages
        .get(principal, id)
        .await
        .map_err(ApiError::from)?;
    let all_files = state
        .pages
        .files(principal, id)
        .await
        .map_err(ApiError::from)?;
    let file_count = all_files.len();
    let files_pages = file_count.div_ceil(FILES_PER_PAGE).max(1);
    let files_page = shown.files_page.clamp(1, files_pages);
    let files = all_files
        .into_iter()
        .skip((files_page - 1) * FILES_PER_PAGE)
        .take(FILES_PER_PAGE)
        .map(|f| (f.path, f.content_type, human_bytes(f.size_bytes)))
        .collect();
    let days = state
        .pages
        .daily_views(principal, id, CHART_DAYS)
        .await
        .map_err(ApiError::from)?;
    let p = PageRow::new(view, now);
    let form = shown.posted.unwrap_or_else(|| SettingsForm {
        access: p.access.to_owned(),
        expires: p.expires_input.clone(),
        max_views: p.max_views_input.clone(),
        budget_warning: None,
    });
    page(
        state,
        shown.status,
        &DetailPage {
            signed_in_as: Who::acting(principal, handle, section::PAGES),
            error: shown.error,
            qr_svg: p.short_url.as_deref().map(qr_svg),
            p,
            form,
            accesses: ACCESS_CHOICES,
            files,
            file_count,
            files_page,
            files_pages,
            chart: views_chart(&days),
            chart_days: CHART_DAYS,
        },
    )
}

/// `text` as a QR code, inline SVG (no image request: the CSP allows none from elsewhere).
pub(crate) fn qr_svg(text: &str) -> String {
    qrcode::QrCode::new(text.as_bytes())
        .map(|qr| {
            qr.render::<qrcode::render::svg::Color<'_>>()
                .min_dimensions(160, 160)
                .build()
        })
        .map(|svg| match svg.find("<svg") {
            // The renderer opens with an XML declaration, which is not valid inside HTML.
            Some(i) => format!(
                "<svg class=\"qr\" role=\"img\" aria-label=\"QR code of the short link\"{}",
                &svg[i + 4..]
            ),
            None => svg,
        })
        .unwrap_or_default()
}

fn page_id(raw: &str) -> Result<PageId, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(PageId)
        .map_err(|_| ApiError::from(PageError::NotFound))
}

/// `GET /account/pages/{id}?files=N`: the page, its settings, then its files, 50 a page.
pub async fn page_detail(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: web::Path<String>,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    let id = page_id(&id)?;
    let files_page = query(&req)
        .get("files")
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    detail_page(
        &state,
        &principal,
        account.handle.as_str(),
        id,
        Shown {
            status: StatusCode::OK,
            error: None,
            posted: None,
            files_page,
        },
    )
    .await
}

/// The settings post, judged by the page service; a budget that would take the page offline
/// at once is not saved until confirmed (`Ok(Some(form))`: show it again, with why).
async fn save_settings(
    state: &AppState,
    principal: &Principal,
    id: PageId,
    f: &ActionFields,
) -> Result<Option<SettingsForm>, PageError> {
    let max_views = match f.max_views.trim() {
        "" => None,
        n => Some(
            n.parse::<i128>()
                .map_err(|_| PageError::Invalid("max_views must be a whole number".into()))?,
        ),
    };
    let expires_at = match f.expires_at.trim() {
        "" => None,
        raw => Some(expiry_field(raw).unwrap_or_else(|| raw.to_owned())),
    };
    if f.confirm_budget != "yes"
        && let Some(new) = max_views.and_then(|n| u64::try_from(n).ok())
    {
        let now = state.pages.now();
        let current = PageRow::new(state.pages.get(principal, id).await?, now);
        if current.max_views != Some(new) && new <= current.view_count {
            return Ok(Some(SettingsForm {
                access: f.access.clone(),
                expires: f.expires_at.trim().to_owned(),
                max_views: new.to_string(),
                budget_warning: Some(format!(
                    "This page has been viewed {} times already: a budget of {new} takes it \
                     offline at once. Nothing is saved yet.{}",
                    current.view_count,
                    if f.password.is_empty() {
                        ""
                    } else {
                        " Type the new password again."
                    }
                )),
            }));
        }
    }
    state
        .pages
        .update(
            principal,
            id,
            PatchRequest {
                policy: quire_links::PolicyPatch {
                    access: Some(f.access.clone()),
                    password: (!f.password.is_empty()).then(|| Some(f.password.clone())),
                    expires_at: Some(expires_at),
                    max_views: Some(max_views),
                    ..quire_links::PolicyPatch::default()
                },
                ..PatchRequest::default()
            },
        )
        .await
        .map(|_| None)
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
                .map(|_| None)
        }
        "settings" => save_settings(&state, &principal, id, &f).await,
        _ => Err(PageError::Invalid(
            "action must be settings, archive, restore or delete".into(),
        )),
    };
    let shown = match result {
        Ok(None) => return Ok(see_other(&here)),
        Ok(Some(form)) => Shown {
            status: StatusCode::CONFLICT,
            error: None,
            posted: Some(form),
            files_page: 1,
        },
        Err(PageError::Infra(e)) => return Err(e.into()),
        Err(e) => Shown {
            status: refusal_status(&e),
            error: Some(e.to_string()),
            posted: None,
            files_page: 1,
        },
    };
    detail_page(&state, &principal, account.handle.as_str(), id, shown).await
}
