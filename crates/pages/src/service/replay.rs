//! A publish made safe to retry: with a request id, the first publish is remembered for the
//! caller, and a retry within [`REQUEST_MEMORY`] answers with that page (`replayed`) rather
//! than a slug conflict. Two retries racing each other both publish only when their slug
//! differs; with one slug the second is refused by it, then answered by the memory.

use quire_kernel::Principal;

use super::{PageError, PageService, PageView, PublishRequest};

/// How long a publish request id is remembered.
pub const REQUEST_MEMORY: time::Duration = time::Duration::hours(24);

impl PageService {
    /// [`PageService::publish`], or with `request_id` the page `caller`'s earlier publish
    /// with that id made (and `true`), when it still exists. `caller` names the credential
    /// (one key, or one OAuth client of one account).
    ///
    /// # Errors
    /// Those of [`PageService::publish`].
    pub async fn publish_once(
        &self,
        principal: &Principal,
        caller: &str,
        request_id: Option<&str>,
        req: PublishRequest,
    ) -> Result<(PageView, bool), PageError> {
        let Some(request_id) = request_id else {
            return Ok((self.publish(principal, req).await?, false));
        };
        let caller = format!("{}:{caller}", principal.account_id.0);
        if let Some(view) = self.recalled(principal, &caller, request_id).await? {
            return Ok((view, true));
        }
        match self.publish(principal, req).await {
            Ok(view) => {
                self.requests
                    .remember(&caller, request_id, view.page.id, self.clock.now())
                    .await?;
                Ok((view, false))
            }
            // A retry that raced the first publish: answered by it once it is remembered.
            Err(PageError::SlugConflict) => {
                match self.recalled(principal, &caller, request_id).await? {
                    Some(view) => Ok((view, true)),
                    None => Err(PageError::SlugConflict),
                }
            }
            Err(e) => Err(e),
        }
    }

    async fn recalled(
        &self,
        principal: &Principal,
        caller: &str,
        request_id: &str,
    ) -> Result<Option<PageView>, PageError> {
        let since = self.clock.now() - REQUEST_MEMORY;
        let Some(id) = self.requests.recall(caller, request_id, since).await? else {
            return Ok(None);
        };
        match self.get(principal, id).await {
            Ok(view) => Ok(Some(view)),
            Err(PageError::NotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }
}
