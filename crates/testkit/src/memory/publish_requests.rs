//! Publishes remembered by request id.

use async_trait::async_trait;
use quire_kernel::{InfraError, PageId};
use quire_pages::PublishRequests;
use time::OffsetDateTime;

use super::{MemoryStore, Op};

#[async_trait]
impl PublishRequests for MemoryStore {
    async fn recall(
        &self,
        caller: &str,
        request_id: &str,
        since: OffsetDateTime,
    ) -> Result<Option<PageId>, InfraError> {
        self.check(Op::RecallRequest)?;
        Ok(self.with(|s| {
            s.publish_requests
                .get(&(caller.to_owned(), request_id.to_owned()))
                .filter(|(_, at)| *at >= since)
                .map(|(page, _)| *page)
        }))
    }

    async fn remember(
        &self,
        caller: &str,
        request_id: &str,
        page: PageId,
        at: OffsetDateTime,
    ) -> Result<(), InfraError> {
        self.check(Op::RememberRequest)?;
        self.with(|s| {
            s.publish_requests
                .entry((caller.to_owned(), request_id.to_owned()))
                .or_insert((page, at));
        });
        Ok(())
    }

    async fn forget_before(&self, before: OffsetDateTime) -> Result<u64, InfraError> {
        self.check(Op::ForgetRequestsBefore)?;
        Ok(self.with(|s| {
            let was = s.publish_requests.len();
            s.publish_requests.retain(|_, (_, at)| *at >= before);
            (was - s.publish_requests.len()) as u64
        }))
    }
}
