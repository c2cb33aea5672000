//! The `RateLimiter` port: counting requests per client in windows shared by every replica.

use std::time::Duration;

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::error::InfraError;

/// Counting requests per client in fixed windows, shared by every replica.
#[async_trait]
pub trait RateLimiter: Send + Sync + std::fmt::Debug {
    /// Counts one request of `client` in `bucket` for the window of length `window` that
    /// contains `now`; `Ok(false)` once the count exceeds `limit`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn hit(
        &self,
        bucket: &str,
        client: &str,
        window: Duration,
        limit: u32,
        now: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Drops the counts of windows that started before `cutoff`; returns how many.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn forget_windows_before(&self, cutoff: OffsetDateTime) -> Result<u64, InfraError>;
}
