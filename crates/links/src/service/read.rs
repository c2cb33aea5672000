//! Reading URL links: the list of a project (with its filters), one link, its counts.

use quire_kernel::{LinkId, Principal, ProjectSlug};
use quire_projects::{ProjectAccess, address_project};
use time::Date;
use time::format_description::well_known::Iso8601;

use super::{LinkError, LinkService, LinkView};
use crate::model::Link;
use crate::stats::LinkStats;

/// The longest span the counts are read over, in days.
pub const MAX_STATS_DAYS: i64 = 366;
/// The span when none is given: the last 30 days up to today.
const DEFAULT_STATS_DAYS: i64 = 30;
/// Longest `q` of a list, in characters.
const MAX_QUERY_CHARS: usize = 200;

/// The days whose counts were asked for, both included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatsSpan {
    pub from: Date,
    pub to: Date,
}

fn day(field: &str, raw: &str) -> Result<Date, LinkError> {
    Date::parse(raw, &Iso8601::DATE)
        .map_err(|_| LinkError::Invalid(format!("{field} must be a date (YYYY-MM-DD)")))
}

/// Whether the link's URL, title or alias holds `q`, ignoring case.
fn matches(link: &Link, q: &str) -> bool {
    [link.url(), link.title.as_deref(), link.alias.as_deref()]
        .into_iter()
        .flatten()
        .any(|field| field.to_lowercase().contains(q))
}

impl LinkService {
    /// The URL links of a project (default: the key's home project), newest first: active
    /// ones, or archived ones with `status` `archived`, and with `q` only those whose URL,
    /// title or alias holds it (ignoring case).
    ///
    /// # Errors
    /// `InsufficientScope`, `Invalid` (status, q), `Infra`.
    pub async fn list(
        &self,
        principal: &Principal,
        project: Option<&str>,
        status: Option<&str>,
        q: Option<&str>,
    ) -> Result<(ProjectSlug, Vec<LinkView>), LinkError> {
        let archived = match status {
            None | Some("active") => false,
            Some("archived") => true,
            Some(_) => {
                return Err(LinkError::Invalid(
                    "status must be active or archived".into(),
                ));
            }
        };
        let q = q.map(str::trim).filter(|q| !q.is_empty());
        if q.is_some_and(|q| q.chars().count() > MAX_QUERY_CHARS) {
            return Err(LinkError::Invalid(format!(
                "q must be at most {MAX_QUERY_CHARS} characters"
            )));
        }
        let q = q.map(str::to_lowercase);
        let project = address_project(
            self.ports.projects.as_ref(),
            principal,
            project,
            ProjectAccess::Read,
        )
        .await?;
        let links = self
            .ports
            .links
            .url_links(project.id, archived)
            .await?
            .into_iter()
            .filter(|l| l.account_id == principal.account_id)
            .filter(|l| q.as_deref().is_none_or(|q| matches(l, q)))
            .map(|l| self.view(l, project.slug.clone()))
            .collect();
        Ok((project.slug, links))
    }

    /// # Errors
    /// `NotFound` (also for a page's link), `InsufficientScope`, `Infra`.
    pub async fn get(&self, principal: &Principal, id: LinkId) -> Result<LinkView, LinkError> {
        let (link, project) = self.reachable(principal, id, ProjectAccess::Read).await?;
        Ok(self.view(link, project))
    }

    /// The span asked for: `from` and `to` as `YYYY-MM-DD`, by default the last 30 days up
    /// to today, at most [`MAX_STATS_DAYS`].
    ///
    /// # Errors
    /// `Invalid` naming the field.
    pub fn stats_span(&self, from: Option<&str>, to: Option<&str>) -> Result<StatsSpan, LinkError> {
        let today = self.ports.clock.now().date();
        let to = to.map(|t| day("to", t)).transpose()?.unwrap_or(today);
        let from = from
            .map(|f| day("from", f))
            .transpose()?
            .unwrap_or(to - time::Duration::days(DEFAULT_STATS_DAYS - 1));
        if from > to {
            return Err(LinkError::Invalid("from must not be after to".into()));
        }
        if (to - from).whole_days() >= MAX_STATS_DAYS {
            return Err(LinkError::Invalid(format!(
                "from and to must be at most {MAX_STATS_DAYS} days apart"
            )));
        }
        Ok(StatsSpan { from, to })
    }

    /// A URL link's counts over `span`.
    ///
    /// # Errors
    /// `NotFound`, `InsufficientScope`, `Infra`.
    pub async fn stats(
        &self,
        principal: &Principal,
        id: LinkId,
        span: StatsSpan,
    ) -> Result<(LinkView, LinkStats), LinkError> {
        let (link, project) = self.reachable(principal, id, ProjectAccess::Read).await?;
        let stats = self
            .ports
            .links
            .link_stats(link.id, span.from, span.to)
            .await?;
        Ok((self.view(link, project), stats))
    }
}
