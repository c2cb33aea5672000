//! The link tools: shorten a URL, list, change, delete a link and read its counts, on the
//! link service's use cases with the REST API's codes. A link is named by its id, alias or
//! public id (looked up among the project's links, as `quire links` does).

use quire_edge::AppState;
use quire_kernel::LinkId;
use quire_links::{LinkPatch, LinkView, NewLink};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;

use super::args::nullable;
use super::calls::{json, parse};
use super::{ToolError, refused};
use crate::transport::Caller;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateLinkArgs {
    /// The http(s) URL to shorten.
    pub url: String,
    /// A custom short code (3-64 of A-Z a-z 0-9 _ -).
    pub alias: Option<String>,
    pub title: Option<String>,
    /// `public` (default), `private`, `password` or `allow_list`.
    pub access: Option<String>,
    /// Required for `password` access (8-256 characters).
    pub password: Option<String>,
    /// Emails or handles, for `allow_list`.
    pub allow: Option<Vec<String>>,
    /// RFC 3339, in the future.
    pub expires_at: Option<String>,
    /// Where visitors go once expired or spent.
    pub expired_url: Option<String>,
    /// Views people may make; previews never spend one.
    #[schemars(range(min = 1))]
    pub max_views: Option<u64>,
    /// Project slug; default: the home project.
    pub project: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListLinksArgs {
    pub project: Option<String>,
    /// `active` (default) or `archived`.
    pub status: Option<String>,
    /// Only links whose URL, title or alias holds this.
    pub q: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateLinkArgs {
    /// The link: id, alias or public id.
    pub link: String,
    /// A new target; the short URL and counts stay.
    pub url: Option<String>,
    /// `null` removes it.
    #[serde(default, deserialize_with = "nullable")]
    pub alias: Option<Option<String>>,
    pub title: Option<String>,
    pub access: Option<String>,
    /// `null` removes it.
    #[serde(default, deserialize_with = "nullable")]
    pub password: Option<Option<String>>,
    pub allow: Option<Vec<String>>,
    /// `null` removes the expiry.
    #[serde(default, deserialize_with = "nullable")]
    pub expires_at: Option<Option<String>>,
    /// `null` removes the budget.
    #[serde(default, deserialize_with = "nullable")]
    pub max_views: Option<Option<u64>>,
    /// `active` or `archived`.
    pub status: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkArgs {
    /// The link: id, alias or public id.
    pub link: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteLinkArgs {
    /// The link: id, alias or public id.
    pub link: String,
    /// Must repeat the link's alias or public id.
    pub confirm: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LinkOut {
    pub id: String,
    pub public_id: String,
    pub short_url: String,
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub access: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_views: Option<u64>,
    pub view_count: u64,
    pub project: String,
}

impl From<LinkView> for LinkOut {
    fn from(v: LinkView) -> Self {
        let l = v.link;
        Self {
            id: l.id.0.to_string(),
            short_url: v.short_url,
            url: l.url().unwrap_or_default().to_owned(),
            access: l.policy.access.as_str().to_owned(),
            status: if l.archived_at.is_some() {
                "archived"
            } else {
                "active"
            }
            .to_owned(),
            expires_at: l.policy.expires_at.and_then(|t| t.format(&Rfc3339).ok()),
            max_views: l.policy.max_views,
            public_id: l.public_id,
            alias: l.alias,
            title: l.title,
            view_count: l.view_count,
            project: v.project_slug.as_str().to_owned(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LinksOut {
    pub links: Vec<LinkOut>,
    pub project: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LinkStatsOut {
    pub from: String,
    pub to: String,
    /// Views by people.
    pub total: u64,
    /// Views by previews and crawlers.
    pub bots: u64,
    /// Days with views: `[day, views, bots]`.
    pub days: Vec<(String, u64, u64)>,
    /// Referrer hosts: `[host, views]`.
    pub referrers: Vec<(String, u64)>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LinkDeletedOut {
    pub deleted: String,
}

fn to_i128(n: u64) -> i128 {
    i128::from(n)
}

/// The link named by its id, or by an alias or public id among the home project's links.
async fn find(state: &AppState, caller: &Caller, name: &str) -> Result<LinkView, ToolError> {
    if let Ok(id) = uuid::Uuid::parse_str(name.trim()) {
        return state
            .links
            .get(&caller.principal, LinkId(id))
            .await
            .map_err(refused);
    }
    for status in ["active", "archived"] {
        let (_, links) = state
            .links
            .list(&caller.principal, None, Some(status), None)
            .await
            .map_err(refused)?;
        if let Some(found) = links
            .into_iter()
            .find(|v| v.link.alias.as_deref() == Some(name) || v.link.public_id == name)
        {
            return Ok(found);
        }
    }
    Err(ToolError::new(
        "not_found",
        format!("no link is named {name:?} in the credential's project"),
    ))
}

pub(super) async fn create_link(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<serde_json::Value, ToolError> {
    let sent: CreateLinkArgs = parse(args)?;
    let view = state
        .links
        .create(
            &caller.principal,
            NewLink {
                url: sent.url,
                alias: sent.alias,
                title: sent.title,
                access: sent.access,
                password: sent.password,
                allow: sent.allow.unwrap_or_default(),
                expires_at: sent.expires_at,
                expired_url: sent.expired_url,
                max_views: sent.max_views.map(to_i128),
                redirect_status: None,
                project: sent.project,
            },
        )
        .await
        .map_err(refused)?;
    *target = Some(view.link.id.0.to_string());
    json(&LinkOut::from(view))
}

pub(super) async fn list_links(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
) -> Result<serde_json::Value, ToolError> {
    let sent: ListLinksArgs = parse(args)?;
    let (project, links) = state
        .links
        .list(
            &caller.principal,
            sent.project.as_deref(),
            sent.status.as_deref(),
            sent.q.as_deref(),
        )
        .await
        .map_err(refused)?;
    json(&LinksOut {
        links: links.into_iter().map(LinkOut::from).collect(),
        project: project.as_str().to_owned(),
    })
}

pub(super) async fn update_link(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<serde_json::Value, ToolError> {
    let sent: UpdateLinkArgs = parse(args)?;
    let id = find(state, caller, &sent.link).await?.link.id;
    *target = Some(id.0.to_string());
    let view = state
        .links
        .update(
            &caller.principal,
            id,
            LinkPatch {
                url: sent.url,
                alias: sent.alias,
                title: sent.title.map(Some),
                access: sent.access,
                password: sent.password,
                allow: sent.allow,
                expires_at: sent.expires_at,
                max_views: sent.max_views.map(|m| m.map(to_i128)),
                status: sent.status,
                ..LinkPatch::default()
            },
        )
        .await
        .map_err(refused)?;
    json(&LinkOut::from(view))
}

pub(super) async fn delete_link(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<serde_json::Value, ToolError> {
    let sent: DeleteLinkArgs = parse(args)?;
    let view = find(state, caller, &sent.link).await?;
    *target = Some(view.link.id.0.to_string());
    if sent.confirm != view.link.code() && sent.confirm != view.link.public_id {
        return Err(ToolError::new(
            "invalid_request",
            format!(
                "confirm must repeat the link's code {:?}; ask the user first",
                view.link.code()
            ),
        ));
    }
    state
        .links
        .delete(&caller.principal, view.link.id)
        .await
        .map_err(refused)?;
    json(&LinkDeletedOut {
        deleted: view.link.id.0.to_string(),
    })
}

pub(super) async fn link_stats(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<serde_json::Value, ToolError> {
    let sent: LinkArgs = parse(args)?;
    let id = find(state, caller, &sent.link).await?.link.id;
    *target = Some(id.0.to_string());
    let span = state.links.stats_span(None, None).map_err(refused)?;
    let (_, stats) = state
        .links
        .stats(&caller.principal, id, span)
        .await
        .map_err(refused)?;
    json(&LinkStatsOut {
        from: span.from.to_string(),
        to: span.to.to_string(),
        total: stats.days.iter().map(|d| d.views).sum(),
        bots: stats.days.iter().map(|d| d.bot_views).sum(),
        days: stats
            .days
            .iter()
            .map(|d| (d.day.to_string(), d.views, d.bot_views))
            .collect(),
        referrers: stats.referrers,
    })
}
