//! Links of pages and URLs: short codes, aliases, their policy and counts.

use std::collections::HashMap;

use async_trait::async_trait;
use quire_kernel::{InfraError, LeaseId, LinkId, PageId, ProjectId};
use quire_links::{DayCount, Link, LinkStats, LinkStore, LinkWriteError, VisitNotes};
use time::{Date, OffsetDateTime};

use super::{MemoryStore, Op, State};

pub(super) fn link_codes(link: &Link) -> impl Iterator<Item = &str> {
    std::iter::once(link.public_id.as_str()).chain(link.alias.as_deref())
}

pub(super) fn code_taken(state: &State, code: &str, except: Option<quire_kernel::LinkId>) -> bool {
    state
        .links
        .iter()
        .filter(|l| Some(l.id) != except)
        .any(|l| link_codes(l).any(|c| c == code))
}

#[async_trait]
impl LinkStore for MemoryStore {
    async fn insert_link(&self, link: &Link) -> Result<(), LinkWriteError> {
        self.check(Op::InsertLink)?;
        self.with(|s| {
            if link_codes(link).any(|c| code_taken(s, c, None)) {
                return Err(LinkWriteError::CodeTaken);
            }
            for entry in &link.policy.allow {
                s.shared_since
                    .insert((link.id, entry.clone()), link.created_at);
            }
            s.links.push(link.clone());
            Ok(())
        })
    }

    async fn update_link(&self, link: &Link) -> Result<(), LinkWriteError> {
        self.check(Op::UpdateLink)?;
        self.with(|s| {
            if link_codes(link).any(|c| code_taken(s, c, Some(link.id))) {
                return Err(LinkWriteError::CodeTaken);
            }
            for l in &mut s.links {
                if l.id == link.id {
                    // Views are counted only through the leases and add_views, and the
                    // kind, owner, project and public id stay, as in the stores.
                    let kept = l.clone();
                    *l = link.clone();
                    l.view_count = kept.view_count;
                    l.last_viewed_at = kept.last_viewed_at;
                    l.target = match (&kept.target, &link.target) {
                        (quire_links::Target::Url(_), new @ quire_links::Target::Url(_)) => {
                            new.clone()
                        }
                        (old, _) => old.clone(),
                    };
                    l.account_id = kept.account_id;
                    l.project_id = kept.project_id;
                    l.public_id = kept.public_id;
                }
            }
            s.shared_since
                .retain(|(id, entry), _| *id != link.id || link.policy.allow.contains(entry));
            for entry in &link.policy.allow {
                s.shared_since
                    .entry((link.id, entry.clone()))
                    .or_insert(link.updated_at);
            }
            Ok(())
        })
    }

    async fn link(&self, id: LinkId) -> Result<Option<Link>, InfraError> {
        self.check(Op::LinkById)?;
        Ok(self.with(|s| s.links.iter().find(|l| l.id == id).cloned()))
    }

    async fn url_links(&self, project: ProjectId, archived: bool) -> Result<Vec<Link>, InfraError> {
        self.check(Op::UrlLinks)?;
        Ok(self.with(|s| {
            let mut links: Vec<Link> = s
                .links
                .iter()
                .filter(|l| l.project_id == project && l.url().is_some())
                .filter(|l| l.archived_at.is_some() == archived)
                .cloned()
                .collect();
            links.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.0.cmp(&a.id.0)));
            links
        }))
    }

    async fn link_of_page(&self, page: PageId) -> Result<Option<Link>, InfraError> {
        self.check(Op::LinkOfPage)?;
        Ok(self.with(|s| s.links.iter().find(|l| l.page() == Some(page)).cloned()))
    }

    async fn links_of_pages(&self, pages: &[PageId]) -> Result<Vec<Link>, InfraError> {
        self.check(Op::LinksOfPages)?;
        Ok(self.with(|s| {
            s.links
                .iter()
                .filter(|l| l.page().is_some_and(|p| pages.contains(&p)))
                .cloned()
                .collect()
        }))
    }

    async fn link_by_code(&self, code: &str) -> Result<Option<Link>, InfraError> {
        self.check(Op::LinkByCode)?;
        Ok(self.with(|s| {
            s.links
                .iter()
                .find(|l| link_codes(l).any(|c| c == code))
                .cloned()
        }))
    }

    async fn lease_views(
        &self,
        link: LinkId,
        lease: LeaseId,
        first: bool,
        want: u64,
        until: OffsetDateTime,
    ) -> Result<Option<u64>, InfraError> {
        self.check(Op::LeaseViews)?;
        Ok(self.with(|s| {
            let Some(l) = s.links.iter().find(|l| l.id == link) else {
                return Some(0);
            };
            let Some(max) = l.policy.max_views else {
                return Some(0);
            };
            let leased = s.views_leased.entry(link).or_default();
            let left = max.saturating_sub(l.view_count + *leased);
            if left == 0 {
                return Some(0);
            }
            if !first && !s.view_leases.contains_key(&(link, lease)) {
                return None;
            }
            let grant = left.min(want.max(1));
            *leased += grant;
            let held = s.view_leases.entry((link, lease)).or_insert((0, until));
            *held = (held.0 + grant, until);
            Some(grant)
        }))
    }

    async fn settle_lease(
        &self,
        link: LinkId,
        lease: LeaseId,
        used: u64,
        returned: u64,
        day: Date,
        until: OffsetDateTime,
    ) -> Result<bool, InfraError> {
        self.check(Op::SettleLease)?;
        Ok(self.with(|s| {
            let Some(held) = s.view_leases.get_mut(&(link, lease)) else {
                return false;
            };
            *held = (held.0.saturating_sub(used + returned), until);
            if let Some(l) = s.links.iter_mut().find(|l| l.id == link) {
                l.view_count += used;
                let leased = s.views_leased.entry(link).or_default();
                *leased = leased.saturating_sub(used + returned);
                if used > 0 {
                    *s.daily_views.entry((link, day)).or_default() += used;
                }
            }
            true
        }))
    }

    async fn settle_lapsed_leases(&self, now: OffsetDateTime) -> Result<u64, InfraError> {
        self.check(Op::SettleLapsedLeases)?;
        Ok(self.with(|s| {
            let lapsed: Vec<((LinkId, LeaseId), u64)> = s
                .view_leases
                .iter()
                .filter(|(_, (_, until))| *until < now)
                .map(|(key, (views, _))| (*key, *views))
                .collect();
            let mut settled = 0;
            for ((link, lease), views) in lapsed {
                s.view_leases.remove(&(link, lease));
                if let Some(l) = s.links.iter_mut().find(|l| l.id == link) {
                    l.view_count += views;
                    let leased = s.views_leased.entry(link).or_default();
                    *leased = leased.saturating_sub(views);
                    if views > 0 {
                        *s.daily_views.entry((link, now.date())).or_default() += views;
                    }
                    settled += views;
                }
            }
            settled
        }))
    }

    async fn add_views(&self, counts: &[(LinkId, u64)], day: Date) -> Result<(), InfraError> {
        self.check(Op::AddViews)?;
        self.with(|s| {
            for (id, n) in counts {
                if let Some(l) = s.links.iter_mut().find(|l| l.id == *id) {
                    l.view_count += n;
                    *s.daily_views.entry((*id, day)).or_default() += n;
                }
            }
        });
        Ok(())
    }

    async fn daily_views(&self, link: LinkId, since: Date) -> Result<Vec<(Date, u64)>, InfraError> {
        self.check(Op::DailyViews)?;
        Ok(self.with(|s| {
            let mut days: Vec<(Date, u64)> = s
                .daily_views
                .iter()
                .filter(|((id, day), n)| *id == link && *day >= since && **n > 0)
                .map(|((_, day), n)| (*day, *n))
                .collect();
            days.sort();
            days
        }))
    }

    async fn add_visit_notes(
        &self,
        notes: &[VisitNotes],
        day: Date,
        now: OffsetDateTime,
    ) -> Result<(), InfraError> {
        self.check(Op::AddVisitNotes)?;
        self.with(|s| {
            for note in notes {
                let Some(l) = s.links.iter_mut().find(|l| l.id == note.link) else {
                    continue;
                };
                if note.viewed {
                    l.last_viewed_at = Some(now);
                }
                if note.bot_views > 0 {
                    *s.daily_bot_views.entry((note.link, day)).or_default() += note.bot_views;
                }
                for (host, n) in note.referrers.iter().take(50) {
                    *s.referrers
                        .entry((note.link, day, host.clone()))
                        .or_default() += n;
                }
            }
        });
        Ok(())
    }

    async fn link_stats(
        &self,
        link: LinkId,
        from: Date,
        to: Date,
    ) -> Result<LinkStats, InfraError> {
        self.check(Op::LinkStats)?;
        Ok(self.with(|s| {
            let within = |id: &LinkId, day: &Date| *id == link && (from..=to).contains(day);
            let mut days: HashMap<Date, DayCount> = HashMap::new();
            for ((id, day), n) in &s.daily_views {
                if within(id, day) {
                    days.entry(*day)
                        .or_insert(DayCount {
                            day: *day,
                            views: 0,
                            bot_views: 0,
                        })
                        .views += n;
                }
            }
            for ((id, day), n) in &s.daily_bot_views {
                if within(id, day) {
                    days.entry(*day)
                        .or_insert(DayCount {
                            day: *day,
                            views: 0,
                            bot_views: 0,
                        })
                        .bot_views += n;
                }
            }
            let mut days: Vec<DayCount> = days.into_values().collect();
            days.sort_by_key(|d| d.day);
            let mut hosts: HashMap<String, u64> = HashMap::new();
            for ((id, day, host), n) in &s.referrers {
                if within(id, day) {
                    *hosts.entry(host.clone()).or_default() += n;
                }
            }
            let mut referrers: Vec<(String, u64)> = hosts.into_iter().collect();
            referrers.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            referrers.truncate(50);
            LinkStats { days, referrers }
        }))
    }

    async fn delete_link(&self, id: LinkId) -> Result<bool, InfraError> {
        self.check(Op::DeleteLink)?;
        Ok(self.with(|s| {
            let found = s.links.iter().any(|l| l.id == id);
            forget_links(s, &[id]);
            found
        }))
    }

    async fn delete_link_of_page(&self, page: PageId) -> Result<(), InfraError> {
        self.check(Op::DeleteLinkOfPage)?;
        self.with(|s| {
            let gone: Vec<LinkId> = s
                .links
                .iter()
                .filter(|l| l.page() == Some(page))
                .map(|l| l.id)
                .collect();
            forget_links(s, &gone);
        });
        Ok(())
    }
}

/// Removes links with everything kept about them, as the stores' cascades do.
fn forget_links(s: &mut State, gone: &[LinkId]) {
    s.links.retain(|l| !gone.contains(&l.id));
    s.shared_since.retain(|(id, _), _| !gone.contains(id));
    s.daily_views.retain(|(id, _), _| !gone.contains(id));
    s.daily_bot_views.retain(|(id, _), _| !gone.contains(id));
    s.referrers.retain(|(id, _, _), _| !gone.contains(id));
    s.view_leases.retain(|(id, _), _| !gone.contains(id));
    for id in gone {
        s.views_leased.remove(id);
    }
}
