//! Wire shapes of the link API: the link object (never its password), lists and counts.

use quire_links::{AllowEntry, LinkStats, LinkView};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// A URL link, with the policy visitors meet.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = crate::examples::link_dto)]
pub struct LinkDto {
    /// The link's id.
    pub id: Uuid,
    /// The link's public id (a short random code).
    #[serde(rename = "public_id")]
    pub public_id: String,
    /// Where visitors follow it: `/s/{alias or public id}` on the links origin.
    pub short_url: String,
    /// Its alias, when it has one (one namespace with every code).
    pub alias: Option<String>,
    /// Where it leads (normalised: lower-case host, IDN as punycode).
    pub url: String,
    /// The owner's name for it.
    pub title: Option<String>,
    /// `private`, `password`, `allow_list` or `public`.
    pub access: String,
    /// Who an `allow_list` link admits: emails, and account ids for accounts named by handle.
    pub allow: Vec<String>,
    /// `active` or `archived`.
    pub status: String,
    /// When it stops leading anywhere; `null`: never.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<OffsetDateTime>,
    /// Where an expired or spent link sends visitors instead of answering 410.
    pub expired_url: Option<String>,
    /// How many views people may make; `null`: no limit.
    pub max_views: Option<u64>,
    /// Views by people (previews and crawlers are counted apart).
    pub view_count: u64,
    /// 301, 302, 307 or 308 (a permanent one is sent only while the link is public with
    /// no expiry or budget; 302 or 307 otherwise).
    pub redirect_status: u16,
    /// When a person last followed it.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_viewed_at: Option<OffsetDateTime>,
    /// When it was made.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When it last changed.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    /// When it was archived; `null` while active.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub archived_at: Option<OffsetDateTime>,
    /// Slug of its project.
    pub project: String,
}

impl From<LinkView> for LinkDto {
    fn from(v: LinkView) -> Self {
        let link = v.link;
        Self {
            id: link.id.0,
            short_url: v.short_url,
            url: link.url().unwrap_or_default().to_owned(),
            access: link.policy.access.as_str().to_owned(),
            allow: link
                .policy
                .allow
                .iter()
                .map(|e| match e {
                    AllowEntry::Account(a) => a.0.to_string(),
                    AllowEntry::Email(e) => e.as_str().to_owned(),
                })
                .collect(),
            status: if link.archived_at.is_some() {
                "archived"
            } else {
                "active"
            }
            .to_owned(),
            expires_at: link.policy.expires_at,
            max_views: link.policy.max_views,
            redirect_status: link.redirect.code(),
            public_id: link.public_id,
            alias: link.alias,
            title: link.title,
            expired_url: link.expired_url,
            view_count: link.view_count,
            last_viewed_at: link.last_viewed_at,
            created_at: link.created_at,
            updated_at: link.updated_at,
            archived_at: link.archived_at,
            project: v.project_slug.as_str().to_owned(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::link_list)]
pub struct LinkList {
    /// The project's URL links, newest first.
    pub links: Vec<LinkDto>,
    /// Slug of the listed project.
    pub project: String,
}

/// One UTC day of a link's counts.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::day)]
pub struct DayDto {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// Views by people.
    pub views: u64,
    /// Views by previews and crawlers.
    pub bots: u64,
}

/// A referrer host and the views it sent.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::referrer)]
pub struct ReferrerDto {
    /// The host of the page the visitors came from (nothing else of it is kept).
    pub host: String,
    /// Views it sent.
    pub views: u64,
}

/// A link's counts over the days asked for; no address or user agent is kept.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = crate::examples::stats)]
pub struct StatsDto {
    /// The first day counted (`YYYY-MM-DD`).
    pub from: String,
    /// The last day counted (`YYYY-MM-DD`).
    pub to: String,
    /// Views by people over the span.
    pub total: u64,
    /// Views by previews and crawlers over the span.
    pub bots: u64,
    /// Every day of the span, oldest first (zeros included).
    pub days: Vec<DayDto>,
    /// Referrer hosts, most views first.
    pub referrers: Vec<ReferrerDto>,
    /// When a person last followed the link.
    #[serde(rename = "lastViewedAt", with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_viewed_at: Option<OffsetDateTime>,
}

impl StatsDto {
    pub fn of(view: &LinkView, stats: LinkStats, from: time::Date, to: time::Date) -> Self {
        let counted: std::collections::HashMap<time::Date, (u64, u64)> = stats
            .days
            .into_iter()
            .map(|c| (c.day, (c.views, c.bot_views)))
            .collect();
        let mut days = Vec::new();
        let mut day = from;
        while day <= to {
            let (views, bots) = counted.get(&day).copied().unwrap_or((0, 0));
            days.push(DayDto {
                day: day.to_string(),
                views,
                bots,
            });
            match day.next_day() {
                Some(next) => day = next,
                None => break,
            }
        }
        Self {
            from: from.to_string(),
            to: to.to_string(),
            total: days.iter().map(|d| d.views).sum(),
            bots: days.iter().map(|d| d.bots).sum(),
            days,
            referrers: stats
                .referrers
                .into_iter()
                .map(|(host, views)| ReferrerDto { host, views })
                .collect(),
            last_viewed_at: view.link.last_viewed_at,
        }
    }
}
