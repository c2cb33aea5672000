//! The link store port.

use async_trait::async_trait;
use quire_kernel::{AccountId, Email, InfraError, LinkId, PageId};
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

    /// Leases up to `want` views of a budgeted link to this replica, atomically: the grant is
    /// at most what the budget has left once every view counted and every view leased to
    /// any replica is taken off, so the leases of all replicas together never pass
    /// `max_views`. Returns the number granted; 0 when nothing is left to lease (or the link
    /// is gone or has no budget).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure, when nothing is leased.
    async fn lease_views(&self, link: LinkId, want: u64) -> Result<u64, InfraError>;

    /// Settles a lease, in one transaction: `used` of its views were served (they join the
    /// link's count and `day`'s), and `returned` go back to the budget unused. A link that
    /// is gone is skipped.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure, when nothing changes.
    async fn settle_lease(
        &self,
        link: LinkId,
        used: u64,
        returned: u64,
        day: Date,
    ) -> Result<(), InfraError>;

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

    /// Pages whose link's allow list names the account or the email.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn shared_with(
        &self,
        account: AccountId,
        email: Option<&Email>,
    ) -> Result<Vec<(PageId, OffsetDateTime)>, InfraError>;
}
