//! The Links page: the account's URL links per project (short link, where it leads, access
//! and state, views against the budget, last view) with a form that shortens a URL, and a
//! link's detail: its short link with the QR code, the views chart (previews and crawlers
//! apart) and referrer hosts, the settings the API offers (target, access, password,
//! expiry, budget), archive, restore and delete. Each action goes through the link service,
//! as the API's routes do.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_kernel::{InfraError, LinkId, Principal};
use quire_links::{LinkError, LinkPatch, LinkView, NewLink};
use time::OffsetDateTime;

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::pages::qr_svg;
use crate::pages::row::ACCESS_CHOICES;
use crate::shared::behind_link::{BehindLink, PolicyFacts, expires, max_views, optional};
use crate::shared::chart::views_chart;
use crate::shared::guards::{Owner, Posted, Unparsed};
use crate::shared::nav::{Who, project_slugs, section};
use crate::shared::render::{listed, page, refusal_status, see_other};
use crate::shared::session::query;
use crate::shared::when::When;

/// A link as the list and the detail show it.
struct LinkRow {
    id: String,
    short_url: String,
    url: String,
    title: String,
    /// The owner named it (else `title` is its URL, shown once).
    titled: bool,
    project: String,
    /// `active` or `archived`: what archive and restore change.
    status: &'static str,
    policy: PolicyFacts,
    last_viewed: Option<When>,
}

impl LinkRow {
    fn new(v: LinkView, now: OffsetDateTime) -> Self {
        let l = &v.link;
        let archived = l.archived_at.is_some();
        Self {
            id: l.id.0.to_string(),
            url: l.url().unwrap_or_default().to_owned(),
            title: l
                .title
                .clone()
                .unwrap_or_else(|| l.url().unwrap_or_default().to_owned()),
            titled: l.title.is_some(),
            project: v.project_slug.as_str().to_owned(),
            status: if archived { "archived" } else { "active" },
            policy: PolicyFacts::new(l, archived, now),
            last_viewed: l.last_viewed_at.map(|t| When::new(t, now)),
            short_url: v.short_url,
        }
    }
}

#[derive(Template)]
#[template(path = "links.html")]
struct LinksPage<'a> {
    signed_in_as: Option<Who>,
    error: Option<String>,
    projects: Vec<String>,
    project: &'a str,
    status: &'a str,
    links: Vec<LinkRow>,
    accesses: [(&'static str, &'static str); 4],
}

#[derive(Template)]
#[template(path = "link_detail.html")]
struct DetailPage {
    signed_in_as: Option<Who>,
    error: Option<String>,
    l: LinkRow,
    qr_svg: String,
    accesses: [(&'static str, &'static str); 4],
    chart: String,
    chart_days: u16,
    bots: u64,
    referrers: Vec<(String, u64)>,
}

/// How many days the views chart shows.
const CHART_DAYS: u16 = 30;

/// The create and settings forms; a field a form lacks is empty.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct LinkFields {
    action: String,
    url: String,
    title: String,
    alias: String,
    access: String,
    password: String,
    expires_at: String,
    max_views: String,
    project: String,
    confirm: String,
}

async fn list_page(
    state: &AppState,
    req: &HttpRequest,
    account: &quire_accounts::Account,
    principal: &Principal,
    shown: (StatusCode, Option<String>),
) -> Result<HttpResponse, ApiError> {
    let q = query(req);
    let projects = project_slugs(state, principal).await?;
    let status = q.get("status").map_or("active", String::as_str);
    let now = state.links.now();
    let (mut status_code, mut error) = shown;
    let outcome = state
        .links
        .list(
            principal,
            q.get("project").map(String::as_str),
            Some(status),
            None,
        )
        .await;
    let list = listed(outcome, |v| LinkRow::new(v, now))?;
    if let Some((refused, words)) = list.refused {
        status_code = refused;
        error = Some(words);
    }
    let (project, rows) = (list.project, list.rows);
    page(
        state,
        status_code,
        &LinksPage {
            signed_in_as: Who::of(account, section::LINKS),
            error,
            projects,
            project: &project,
            status: if status == "archived" {
                "archived"
            } else {
                "active"
            },
            links: rows,
            accesses: ACCESS_CHOICES,
        },
    )
}

/// `GET /account/links?project=&status=`.
pub async fn links(
    state: web::Data<AppState>,
    req: HttpRequest,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    list_page(&state, &req, &account, &principal, (StatusCode::OK, None)).await
}

/// `POST /account/links`: shorten a URL; on success, its detail.
pub async fn create_link(
    state: web::Data<AppState>,
    req: HttpRequest,
    Posted(f, Owner { account, principal }): Posted<Unparsed<LinkFields>, Owner>,
) -> Result<HttpResponse, ApiError> {
    let f = f.parse()?;
    let made = async {
        state
            .links
            .create(
                &principal,
                NewLink {
                    url: f.url.trim().to_owned(),
                    title: optional(&f.title),
                    project: optional(&f.project),
                    policy: quire_links::PolicyInput {
                        alias: optional(&f.alias),
                        access: optional(&f.access),
                        password: optional(&f.password),
                        expires_at: expires(&f.expires_at),
                        max_views: max_views(&f.max_views, LinkError::Invalid)?,
                        ..quire_links::PolicyInput::default()
                    },
                    ..NewLink::default()
                },
            )
            .await
    }
    .await;
    match made {
        Ok(view) => Ok(see_other(&format!("/account/links/{}", view.link.id.0))),
        Err(LinkError::Infra(e)) => Err(e.into()),
        Err(e) => {
            list_page(
                &state,
                &req,
                &account,
                &principal,
                (refusal_status(&e), Some(e.to_string())),
            )
            .await
        }
    }
}

/// The Links page's own part of the detail's actions.
pub(crate) enum Links {}

impl BehindLink for Links {
    type Id = LinkId;
    type Form = LinkFields;
    type Patch = LinkPatch;
    type Error = LinkError;
    const PAGES: &'static str = "/account/links";
    const NOUN: &'static str = "link";

    fn id(raw: &str) -> Result<LinkId, ApiError> {
        uuid::Uuid::parse_str(raw)
            .map(LinkId)
            .map_err(|_| ApiError::from(LinkError::NotFound))
    }

    fn uuid(id: LinkId) -> uuid::Uuid {
        id.0
    }

    fn action(f: &LinkFields) -> (&str, &str) {
        (&f.action, &f.confirm)
    }

    fn invalid(message: String) -> LinkError {
        LinkError::Invalid(message)
    }

    fn infra(e: LinkError) -> Result<InfraError, LinkError> {
        match e {
            LinkError::Infra(e) => Ok(e),
            e => Err(e),
        }
    }

    fn status(status: &'static str) -> LinkPatch {
        LinkPatch {
            status: Some(status.into()),
            ..LinkPatch::default()
        }
    }

    fn settings(f: &LinkFields) -> Result<LinkPatch, LinkError> {
        max_views(&f.max_views, LinkError::Invalid).map(|budget| LinkPatch {
            url: optional(&f.url),
            policy: quire_links::PolicyPatch {
                access: Some(f.access.clone()),
                password: optional(&f.password).map(Some),
                expires_at: Some(expires(&f.expires_at)),
                max_views: Some(budget),
                ..quire_links::PolicyPatch::default()
            },
            ..LinkPatch::default()
        })
    }

    async fn project(
        state: &AppState,
        principal: &Principal,
        id: LinkId,
    ) -> Result<String, LinkError> {
        let view = state.links.get(principal, id).await?;
        Ok(view.project_slug.as_str().to_owned())
    }

    async fn delete(state: &AppState, principal: &Principal, id: LinkId) -> Result<(), LinkError> {
        state.links.delete(principal, id).await
    }

    async fn update(
        state: &AppState,
        principal: &Principal,
        id: LinkId,
        patch: LinkPatch,
    ) -> Result<(), LinkError> {
        state.links.update(principal, id, patch).await.map(|_| ())
    }

    async fn detail(
        state: &AppState,
        principal: &Principal,
        handle: &str,
        id: LinkId,
        shown: (StatusCode, Option<String>),
    ) -> Result<HttpResponse, ApiError> {
        let now = state.links.now();
        let span = state.links.stats_span(None, None).map_err(ApiError::from)?;
        let (view, stats) = state
            .links
            .stats(principal, id, span)
            .await
            .map_err(ApiError::from)?;
        let counted: std::collections::HashMap<time::Date, u64> =
            stats.days.iter().map(|d| (d.day, d.views)).collect();
        let days: Vec<(time::Date, u64)> = (0..i64::from(CHART_DAYS))
            .map(|n| {
                let day = span.from + time::Duration::days(n);
                (day, counted.get(&day).copied().unwrap_or(0))
            })
            .collect();
        let l = LinkRow::new(view, now);
        page(
            state,
            shown.0,
            &DetailPage {
                signed_in_as: Who::acting(principal, handle, section::LINKS),
                error: shown.1,
                qr_svg: qr_svg(&l.short_url),
                l,
                accesses: ACCESS_CHOICES,
                chart: views_chart(&days),
                chart_days: CHART_DAYS,
                bots: stats.days.iter().map(|d| d.bot_views).sum(),
                referrers: stats.referrers,
            },
        )
    }
}
