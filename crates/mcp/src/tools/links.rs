//! The link tools: shorten a URL, list, change, delete a link and read its counts, on the
//! link service's use cases with the REST API's codes. A link is named by its id, alias or
//! public id (looked up among the project's links, as `quire links` does).

use quire_kernel::LinkId;
use quire_links::{LinkPatch, LinkView, NewLink};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Call, DeletedIdOut, Shown, ToolError, confirmed, id_in, not_named, refused};
use super::policy::{PolicySchema, policy_args};

/// How `create_link` words its policy fields.
const CREATE: PolicySchema = PolicySchema {
    access: "`public` (default), `private`, `password` or `allow_list`.",
    password: "Required for `password` access (8-256 characters).",
    max_views: "Views people may make; previews never spend one.",
    alias: "A custom short code (3-64 of A-Z a-z 0-9 _ -).",
    least_views: 1,
    ..PolicySchema::CREATE
};

policy_args! {
    pub struct CreateLinkArgs {
        /// The http(s) URL to shorten.
        pub url: String,
        pub title: Option<String>,
        /// Where visitors go once expired or spent.
        pub expired_url: Option<String>,
        /// Project slug; default: the home project.
        pub project: Option<String>,
    }
    create: CREATE
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

/// How `update_link` words its policy fields.
const UPDATE: PolicySchema = PolicySchema {
    allow: "",
    expires_at: "`null` removes the expiry.",
    ..PolicySchema::UPDATE
};

policy_args! {
    pub struct UpdateLinkArgs {
        /// The link: id, alias or public id.
        pub link: String,
        /// A new target; the short URL and counts stay.
        pub url: Option<String>,
        pub title: Option<String>,
        /// `active` or `archived`.
        pub status: Option<String>,
    }
    update: UPDATE
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
    pub title: Option<String>,
    pub status: String,
    pub project: String,
    #[serde(flatten)]
    pub shown: Shown,
}

impl From<LinkView> for LinkOut {
    fn from(v: LinkView) -> Self {
        let l = v.link;
        Self {
            id: l.id.0.to_string(),
            short_url: v.short_url,
            url: l.url().unwrap_or_default().to_owned(),
            status: if l.archived_at.is_some() {
                "archived"
            } else {
                "active"
            }
            .to_owned(),
            shown: Shown::of(&l),
            public_id: l.public_id,
            title: l.title,
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

pub(super) async fn create_link(
    cx: &Call<'_>,
    mut sent: CreateLinkArgs,
) -> Result<LinkOut, ToolError> {
    let policy = sent.policy();
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
                policy,
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

pub(super) async fn update_link(
    cx: &Call<'_>,
    mut sent: UpdateLinkArgs,
) -> Result<LinkOut, ToolError> {
    let id = find(cx, &sent.link).await?.link.id;
    cx.acts_on(id.0);
    let policy = sent.policy();
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
                policy,
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
