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

    /// Counts one view of a link atomically, on `day` too: the count goes up by one unless
    /// the link has a view budget that is spent. Exactly `max_views` claims succeed however
    /// many race.
    ///
    /// # Errors
    /// MUST return `Ok(false)` (and count nothing) when the budget is spent or the link is
    /// gone; [`InfraError`] on storage failure, when nothing is counted either.
    async fn claim_view(&self, link: LinkId, day: Date) -> Result<bool, InfraError>;

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
