//! Page links: short codes, aliases and their policy.

use async_trait::async_trait;
use quire_kernel::{InfraError, LeaseId, LinkId, PageId};
use quire_links::{Link, LinkStore, LinkWriteError};
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
                    // Views are counted only through claim_view and add_views.
                    let view_count = l.view_count;
                    *l = link.clone();
                    l.view_count = view_count;
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

    async fn link_of_page(&self, page: PageId) -> Result<Option<Link>, InfraError> {
        self.check(Op::LinkOfPage)?;
        Ok(self.with(|s| s.links.iter().find(|l| l.page_id == page).cloned()))
    }

    async fn links_of_pages(&self, pages: &[PageId]) -> Result<Vec<Link>, InfraError> {
        self.check(Op::LinksOfPages)?;
        Ok(self.with(|s| {
            s.links
                .iter()
                .filter(|l| pages.contains(&l.page_id))
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
                .filter(|((id, day), _)| *id == link && *day >= since)
                .map(|((_, day), n)| (*day, *n))
                .collect();
            days.sort();
            days
        }))
    }

    async fn delete_link_of_page(&self, page: PageId) -> Result<(), InfraError> {
        self.check(Op::DeleteLinkOfPage)?;
        self.with(|s| {
            let gone: Vec<LinkId> = s
                .links
                .iter()
                .filter(|l| l.page_id == page)
                .map(|l| l.id)
                .collect();
            s.links.retain(|l| l.page_id != page);
            s.shared_since.retain(|(id, _), _| !gone.contains(id));
            s.daily_views.retain(|(id, _), _| !gone.contains(id));
            s.view_leases.retain(|(id, _), _| !gone.contains(id));
            for id in &gone {
                s.views_leased.remove(id);
            }
        });
        Ok(())
    }
}
