//! The link store port.

use async_trait::async_trait;
use quire_kernel::{InfraError, LeaseId, LinkId, PageId};
use time::{Date, OffsetDateTime};

use crate::model::Link;

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

    /// Replaces a link's alias, policy, password hash and allow list (matched by id), in one
    /// transaction. An allow entry the link already had keeps the time it was shared; a new
    /// one is shared as of the link's `updated_at`.
    ///
    /// # Errors
    /// MUST return [`LinkWriteError::CodeTaken`] when the new alias is a code of another
    /// link; nothing changes on error.
    async fn update_link(&self, link: &Link) -> Result<(), LinkWriteError>;

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

    /// Removes the page's link, its codes and allow list; absent is not an error.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn delete_link_of_page(&self, page: PageId) -> Result<(), InfraError>;
}
