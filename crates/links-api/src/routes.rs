//! `/api/link/v1/links…`: every route needs `link` in the credential's apps.

use actix_web::{delete, get, patch, post, web};
use quire_edge::answer::{Answer, Created, NoContent};
use quire_edge::auth::{LinkApp, Scoped};
use quire_edge::body::Body;
use quire_edge::json::{MaxViews, RequestBody, nullable, parse};
use quire_edge::refusals::ScopeRefusals;
use quire_edge::{ApiError, AppState};
use quire_kernel::{ErrorCode, LinkId};
use quire_links::{LinkPatch, NewLink};
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::LINK;
use crate::dto::{LinkDto, LinkList, StatsDto};

/// A new URL link.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::create_link_body)]
pub struct CreateLinkBody {
    /// http or https, at most 8 KiB, no credentials, not one of this server's short links.
    #[schema(max_length = 8192, example = "https://example.com/launch?ref=mail")]
    pub url: String,
    /// 3-64 of `A-Z a-z 0-9 _ -`; one namespace with every page's and link's codes.
    #[serde(default)]
    #[schema(min_length = 3, max_length = 64, pattern = "^[A-Za-z0-9_-]+$")]
    pub alias: Option<String>,
    /// 1-200 characters.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 200)]
    pub title: Option<String>,
    /// Default `public`.
    #[serde(default)]
    #[schema(example = "public")]
    pub access: Option<String>,
    /// Required when access is `password`: 8-256 characters.
    #[serde(default)]
    #[schema(min_length = 8, max_length = 256)]
    pub password: Option<String>,
    /// Emails or handles (of existing accounts), for `allow_list`.
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// RFC 3339, in the future.
    #[serde(default)]
    #[schema(format = DateTime)]
    pub expires_at: Option<String>,
    /// Where visitors go once the link has expired or its budget is spent (the URL rules
    /// apply).
    #[serde(default)]
    #[schema(max_length = 8192)]
    pub expired_url: Option<String>,
    /// Views people may make: a browser spends one only from the link's continue page;
    /// previews and crawlers never do.
    #[serde(default)]
    #[schema(value_type = Option<u64>, minimum = 1)]
    pub max_views: Option<MaxViews>,
    /// 301, 302 (default), 307 or 308.
    #[serde(default)]
    #[schema(value_type = Option<u16>)]
    pub redirect_status: Option<MaxViews>,
    /// Project slug (default: the key's home project).
    #[serde(default)]
    pub project: Option<String>,
}

impl RequestBody for CreateLinkBody {
    const CODE: ErrorCode = ErrorCode::InvalidRequest;
}

quire_edge::policy_patch_body! {
    /// The fields to change; `null` clears `alias`, `title`, `password`, `expiresAt`,
    /// `expiredUrl`, `maxViews` and `redirectStatus` (back to 302). A new `url` keeps the
    /// link's codes and counts.
    #[schema(example = crate::examples::patch_link_body)]
    pub struct PatchLinkBody {
        /// A new target (the URL rules apply); the code and counts stay.
        #[serde(default)]
        #[schema(max_length = 8192)]
        pub url: Option<String>,
        /// 1-200 characters; `null` removes it.
        #[serde(default, deserialize_with = "nullable")]
        #[schema(min_length = 1, max_length = 200)]
        pub title: Option<Option<String>>,
        /// Where visitors of an expired or spent link go; `null`: a 410.
        #[serde(default, deserialize_with = "nullable")]
        #[schema(max_length = 8192)]
        pub expired_url: Option<Option<String>>,
        /// 301, 302, 307 or 308; `null` goes back to 302.
        #[serde(default, deserialize_with = "nullable")]
        #[schema(value_type = Option<u16>)]
        pub redirect_status: Option<Option<MaxViews>>,
        /// `active` or `archived` (an archived link answers 404).
        #[serde(default)]
        pub status: Option<String>,
    }
    max_views: "A new budget; `null` removes it.",
    alias: "A new alias; `null` removes it.",
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// `active` (default) or `archived`.
    status: Option<String>,
    /// Project slug (default: the key's home project).
    project: Option<String>,
    /// Only links whose URL, title or alias holds this (ignoring case).
    q: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StatsQuery {
    /// First day (`YYYY-MM-DD`, UTC); default 29 days before `to`.
    from: Option<String>,
    /// Last day (`YYYY-MM-DD`, UTC); default today. At most 366 days after `from`.
    to: Option<String>,
}

fn link_id(raw: &str) -> Result<LinkId, ApiError> {
    Uuid::parse_str(raw)
        .map(LinkId)
        .map_err(|_| ApiError::not_found("link"))
}

/// List a project's URL links.
#[utoipa::path(tag = "links",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, body = LinkList),
        (status = 400, description = "invalid_request (status, q)"),
        ScopeRefusals))]
#[get("/links")]
pub async fn list(
    state: web::Data<AppState>,
    auth: Scoped<LinkApp>,
    query: web::Query<ListQuery>,
) -> Result<Answer<LinkList>, ApiError> {
    let (project, links) = state
        .links
        .list(
            &auth.0,
            query.project.as_deref(),
            query.status.as_deref(),
            query.q.as_deref(),
        )
        .await?;
    Ok(Answer::ok(LinkList {
        links: links.into_iter().map(LinkDto::from).collect(),
        project: project.as_str().to_owned(),
    }))
}

/// Shorten a URL: a link of its own, under the same policies as pages.
#[utoipa::path(tag = "links",
    security(("bearer" = [])),
    request_body = CreateLinkBody,
    responses(
        (status = 201, body = LinkDto,
            headers(("Location" = String, description = "`/api/link/v1/links/{id}`"))),
        (status = 400, description = "invalid_json, invalid_request, password_required, invalid_url, url_too_long, url_credentials, url_loop, url_denied"),
        ScopeRefusals,
        (status = 409, description = "alias_conflict"),
        (status = 413, description = "payload_too_large"),
        (status = 500, description = "public_id_exhausted")))]
#[post("/links")]
pub async fn create(
    state: web::Data<AppState>,
    auth: Scoped<LinkApp>,
    body: Body,
) -> Result<Created<LinkDto>, ApiError> {
    let sent: CreateLinkBody = parse(&body.0)?;
    let view = state
        .links
        .create(
            &auth.0,
            NewLink {
                url: sent.url,
                title: sent.title,
                expired_url: sent.expired_url,
                redirect_status: sent.redirect_status.map(MaxViews::get),
                project: sent.project,
                policy: quire_links::PolicyInput {
                    alias: sent.alias,
                    access: sent.access,
                    password: sent.password,
                    allow: sent.allow.unwrap_or_default(),
                    expires_at: sent.expires_at,
                    max_views: sent.max_views.map(MaxViews::get),
                },
            },
        )
        .await?;
    Ok(Created::at(
        format!("{LINK}/links/{}", view.link.id.0),
        LinkDto::from(view),
    ))
}

/// Fetch a URL link (a page's link is reached through its page: 404 here).
#[utoipa::path(tag = "links",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = LinkDto),
        ScopeRefusals,
        (status = 404, description = "not_found")))]
#[get("/links/{id}")]
pub async fn get(
    state: web::Data<AppState>,
    auth: Scoped<LinkApp>,
    id: web::Path<String>,
) -> Result<Answer<LinkDto>, ApiError> {
    let view = state.links.get(&auth.0, link_id(&id)?).await?;
    Ok(Answer::ok(LinkDto::from(view)))
}

/// Change a URL link's target, policy, alias or status.
#[utoipa::path(tag = "links",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = PatchLinkBody,
    responses(
        (status = 200, body = LinkDto),
        (status = 400, description = "invalid_json, invalid_request, password_required, invalid_url, url_too_long, url_credentials, url_loop, url_denied"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 409, description = "alias_conflict"),
        (status = 413, description = "payload_too_large")))]
#[patch("/links/{id}")]
pub async fn patch(
    state: web::Data<AppState>,
    auth: Scoped<LinkApp>,
    id: web::Path<String>,
    body: Body,
) -> Result<Answer<LinkDto>, ApiError> {
    let id = link_id(&id)?;
    let mut sent: PatchLinkBody = parse(&body.0)?;
    let policy = sent.policy();
    let view = state
        .links
        .update(
            &auth.0,
            id,
            LinkPatch {
                url: sent.url,
                title: sent.title,
                expired_url: sent.expired_url,
                redirect_status: sent.redirect_status.map(|r| r.map(MaxViews::get)),
                status: sent.status,
                policy,
            },
        )
        .await?;
    Ok(Answer::ok(LinkDto::from(view)))
}

/// Delete a URL link with its codes and counts (one transaction: it never ends half-deleted).
#[utoipa::path(tag = "links",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 204, description = "Deleted"),
        ScopeRefusals,
        (status = 404, description = "not_found")))]
#[delete("/links/{id}")]
pub async fn delete(
    state: web::Data<AppState>,
    auth: Scoped<LinkApp>,
    id: web::Path<String>,
) -> Result<NoContent, ApiError> {
    state.links.delete(&auth.0, link_id(&id)?).await?;
    Ok(NoContent)
}

/// A URL link's counts per UTC day: views, bot views, referrer hosts.
#[utoipa::path(tag = "links",
    security(("bearer" = [])),
    params(("id" = Uuid, Path), StatsQuery),
    responses(
        (status = 200, body = StatsDto),
        (status = 400, description = "invalid_request (from, to)"),
        ScopeRefusals,
        (status = 404, description = "not_found")))]
#[get("/links/{id}/stats")]
pub async fn stats(
    state: web::Data<AppState>,
    auth: Scoped<LinkApp>,
    id: web::Path<String>,
    query: web::Query<StatsQuery>,
) -> Result<Answer<StatsDto>, ApiError> {
    let id = link_id(&id)?;
    let span = state
        .links
        .stats_span(query.from.as_deref(), query.to.as_deref())?;
    let (view, stats) = state.links.stats(&auth.0, id, span).await?;
    Ok(Answer::ok(StatsDto::of(&view, stats, span.from, span.to)))
}
