//! The link tools: shorten a URL, list, change, delete a link and read its counts, on the
//! link service's use cases with the REST API's codes. A link is named by its id, alias or
//! public id (looked up among the project's links, as `quire links` does).

use quire_kernel::LinkId;
use quire_links::{LinkPatch, LinkView, NewLink};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{
    Call, DeletedIdOut, Shown, ToolError, confirmed, id_in, not_named, nullable, refused,
};

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
        let Shown {
            alias,
            access,
            expires_at,
            max_views,
            view_count,
        } = Shown::of(&l);
        Self {
            id: l.id.0.to_string(),
            short_url: v.short_url,
            url: l.url().unwrap_or_default().to_owned(),
            access,
            status: if l.archived_at.is_some() {
                "archived"
            } else {
                "active"
            }
            .to_owned(),
            expires_at,
            max_views,
            public_id: l.public_id,
            alias,
            title: l.title,
            view_count,
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

/// The link named by its id, or by an alias or public id among the home project's links.
async fn find(cx: &Call<'_>, name: &str) -> Result<LinkView, ToolError> {
    let links = &cx.state.links;
    if let Some(id) = id_in(name) {
        return links.get(cx.principal(), LinkId(id)).await.map_err(refused);
    }
    for status in ["active", "archived"] {
        let (_, found) = links
            .list(cx.principal(), None, Some(status), None)
            .await
            .map_err(refused)?;
        if let Some(found) = found
            .into_iter()
            .find(|v| v.link.alias.as_deref() == Some(name) || v.link.public_id == name)
        {
            return Ok(found);
        }
    }
    Err(not_named("link", name))
}

pub(super) async fn create_link(cx: &Call<'_>, sent: CreateLinkArgs) -> Result<LinkOut, ToolError> {
    let view = cx
        .state
        .links
        .create(
            cx.principal(),
            NewLink {
                url: sent.url,
                title: sent.title,
                expired_url: sent.expired_url,
                redirect_status: None,
                project: sent.project,
                policy: quire_links::PolicyInput {
                    alias: sent.alias,
                    access: sent.access,
                    password: sent.password,
                    allow: sent.allow.unwrap_or_default(),
                    expires_at: sent.expires_at,
                    max_views: sent.max_views.map(i128::from),
                },
            },
        )
        .await
        .map_err(refused)?;
    cx.acts_on(view.link.id.0);
    Ok(LinkOut::from(view))
}

pub(super) async fn list_links(cx: &Call<'_>, sent: ListLinksArgs) -> Result<LinksOut, ToolError> {
    let (project, links) = cx
        .state
        .links
        .list(
            cx.principal(),
            sent.project.as_deref(),
            sent.status.as_deref(),
            sent.q.as_deref(),
        )
        .await
        .map_err(refused)?;
    Ok(LinksOut {
        links: links.into_iter().map(LinkOut::from).collect(),
        project: project.as_str().to_owned(),
    })
}

pub(super) async fn update_link(cx: &Call<'_>, sent: UpdateLinkArgs) -> Result<LinkOut, ToolError> {
    let id = find(cx, &sent.link).await?.link.id;
    cx.acts_on(id.0);
    let view = cx
        .state
        .links
        .update(
            cx.principal(),
            id,
            LinkPatch {
                url: sent.url,
                title: sent.title.map(Some),
                status: sent.status,
                policy: quire_links::PolicyPatch {
                    alias: sent.alias,
                    access: sent.access,
                    password: sent.password,
                    allow: sent.allow,
                    expires_at: sent.expires_at,
                    max_views: sent.max_views.map(|m| m.map(i128::from)),
                },
                ..LinkPatch::default()
            },
        )
        .await
        .map_err(refused)?;
    Ok(LinkOut::from(view))
}

pub(super) async fn delete_link(
    cx: &Call<'_>,
    sent: DeleteLinkArgs,
) -> Result<DeletedIdOut, ToolError> {
    let view = find(cx, &sent.link).await?;
    cx.acts_on(view.link.id.0);
    confirmed(
        sent.confirm == view.link.code() || sent.confirm == view.link.public_id,
        || {
            format!(
                "confirm must repeat the link's code {:?}; ask the user first",
                view.link.code()
            )
        },
    )?;
    cx.state
        .links
        .delete(cx.principal(), view.link.id)
        .await
        .map_err(refused)?;
    Ok(DeletedIdOut {
        deleted: view.link.id.0.to_string(),
    })
}

pub(super) async fn link_stats(cx: &Call<'_>, sent: LinkArgs) -> Result<LinkStatsOut, ToolError> {
    let id = find(cx, &sent.link).await?.link.id;
    cx.acts_on(id.0);
    let links = &cx.state.links;
    let span = links.stats_span(None, None).map_err(refused)?;
    let (_, stats) = links
        .stats(cx.principal(), id, span)
        .await
        .map_err(refused)?;
    Ok(LinkStatsOut {
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
