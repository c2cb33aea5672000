//! The link store port.

use std::collections::HashMap;

use async_trait::async_trait;
use quire_kernel::{AccountId, Email, Handle, InfraError, LeaseId, LinkId, PageId, ProjectId};
use time::{Date, OffsetDateTime};

use crate::model::Link;
use crate::stats::{LinkStats, VisitNotes};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkWriteError {
    /// The alias (or public id) is already a code of some link.
    #[error("code already in use")]
    CodeTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Persistence of links.
#[async_trait]
pub trait LinkStore: Send + Sync + std::fmt::Debug {
    /// Stores a new link with its codes (public id, alias) and allow list, in one transaction.
    /// Each allow entry is shared as of the link's `created_at`.
    ///
    /// # Errors
    /// MUST return [`LinkWriteError::CodeTaken`] when its public id or alias is a code of any
    /// link; nothing is stored on error.
    async fn insert_link(&self, link: &Link) -> Result<(), LinkWriteError>;

    /// Replaces a link's alias, policy, password hash, allow list, and a URL link's target,
    /// title, expired URL, redirect status and archive time (matched by id), in one
    /// transaction; its kind, owner, project, public id and counts stay. An allow entry the link already had keeps the time it was shared; a new
    /// one is shared as of the link's `updated_at`.
    ///
    /// # Errors
    /// MUST return [`LinkWriteError::CodeTaken`] when the new alias is a code of another
    /// link; nothing changes on error.
    async fn update_link(&self, link: &Link) -> Result<(), LinkWriteError>;

    /// The link with this id, of any kind.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn link(&self, id: LinkId) -> Result<Option<Link>, InfraError>;

    /// The URL links of a project, newest first: the archived ones when `archived`, else
    /// the others.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn url_links(&self, project: ProjectId, archived: bool) -> Result<Vec<Link>, InfraError>;

    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn link_of_page(&self, page: PageId) -> Result<Option<Link>, InfraError>;

    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn links_of_pages(&self, pages: &[PageId]) -> Result<Vec<Link>, InfraError>;

    /// The link whose public id or alias is `code`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; no such code is `Ok(None)`.
    async fn link_by_code(&self, code: &str) -> Result<Option<Link>, InfraError>;

    /// Leases up to `want` more views of a budgeted link to the lease `lease` (`first`: the
    /// lease holds nothing in the store yet), atomically: the grant is at most what the
    /// budget has left once every view counted and every view leased to any holder is taken
    /// off, so all leases together never pass `max_views`. The lease then lapses at `until`
    /// unless renewed (by this or by [`LinkStore::settle_lease`]). Returns the number
    /// granted (0 when nothing is left to lease, or the link is gone or has no budget), or
    /// `None` when the lease had lapsed and was settled (see
    /// [`LinkStore::settle_lapsed_leases`]): its holder must not use it again.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure, when nothing is leased.
    async fn lease_views(
        &self,
        link: LinkId,
        lease: LeaseId,
        first: bool,
        want: u64,
        until: OffsetDateTime,
    ) -> Result<Option<u64>, InfraError>;

    /// Settles part of a lease, in one transaction: `used` of its views were served (they
    /// join the link's count and `day`'s), and `returned` go back to the budget unused; the
    /// lease, renewed until `until`, keeps the rest. `Ok(false)` when the lease had lapsed
    /// and was settled whole (its views counted as served), or its link is gone: nothing
    /// changes, and its holder must not use it again.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure, when nothing changes.
    async fn settle_lease(
        &self,
        link: LinkId,
        lease: LeaseId,
        used: u64,
        returned: u64,
        day: Date,
        until: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Settles every lease that lapsed before `now` (its holder died, or could not reach
    /// the store to renew it): all the views it still holds join the link's count and the
    /// count of `now`'s day, as served, since the holder may have served any of them.
    /// Returns how many views were settled.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; leases settled before the failure stay settled.
    async fn settle_lapsed_leases(&self, now: OffsetDateTime) -> Result<u64, InfraError>;

    /// Adds aggregated view counts (links without a budget) to the links' totals and to
    /// their counts of `day`, in one transaction; links that are gone are skipped.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure, when nothing is added.
    async fn add_views(&self, counts: &[(LinkId, u64)], day: Date) -> Result<(), InfraError>;

    /// The link's views per day from `since` on, oldest first; days without views are
    /// left out.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn daily_views(&self, link: LinkId, since: Date) -> Result<Vec<(Date, u64)>, InfraError>;

    /// What visits left beside their count, in one transaction: bot views and referrer
    /// hosts join `day`'s, and a link with a counted view was last viewed at `now`; links
    /// that are gone are skipped.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure, when nothing is added.
    async fn add_visit_notes(
        &self,
        notes: &[VisitNotes],
        day: Date,
        now: OffsetDateTime,
    ) -> Result<(), InfraError>;

    /// The link's counts from `from` to `to` (UTC days, both included): views and bot views
    /// per day with any, oldest first, and referrer hosts with their views, most first.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn link_stats(&self, link: LinkId, from: Date, to: Date)
    -> Result<LinkStats, InfraError>;

    /// Removes a link with its codes, allow list and counts. Returns whether it was there.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure, when nothing is removed.
    async fn delete_link(&self, id: LinkId) -> Result<bool, InfraError>;

    /// Removes the page's link, its codes and allow list; absent is not an error.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn delete_link_of_page(&self, page: PageId) -> Result<(), InfraError>;
}

/// Looking up accounts by handle, and an account's handle and email (allow lists name
/// accounts by handle; a page lives on its owner's origin).
#[async_trait]
pub trait AccountDirectory: Send + Sync + std::fmt::Debug {
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn account_by_handle(&self, handle: &Handle) -> Result<Option<AccountId>, InfraError>;

    /// The accounts of many handles in one lookup; unknown handles are absent.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn accounts_by_handles(
        &self,
        handles: &[Handle],
    ) -> Result<HashMap<Handle, AccountId>, InfraError>;

    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn handle_and_email(
        &self,
        account: AccountId,
    ) -> Result<Option<(Handle, Email)>, InfraError>;
}

/// Source of public ids (10 base62 characters); a port so tests can force collisions.
pub trait PublicIds: Send + Sync + std::fmt::Debug {
    fn next_id(&self) -> String;
}

/// Random public ids from the thread-local CSPRNG.
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomPublicIds;

impl PublicIds for RandomPublicIds {
    fn next_id(&self) -> String {
        use rand::RngExt;
        const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        let mut rng = rand::rng();
        (0..10)
            .map(|_| char::from(BASE62[rng.random_range(0..BASE62.len())]))
            .collect()
    }
}
