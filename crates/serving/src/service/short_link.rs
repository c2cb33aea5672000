//! The short link `/s/{code}`: a redirect to its page, decided as a visit of it would be.

use quire_kernel::InfraError;
use quire_pages::PageStatus;

use super::ServingService;
use crate::answer::Answer;
use crate::policy::expired;
use crate::sites::site_key;

impl ServingService {
    /// The short link `/s/{code}`: a 302 to the page, or 404 / 410 as the page would answer.
    ///
    /// # Errors
    /// [`InfraError`] on store failure.
    pub async fn short_link(&self, code: &str) -> Result<Answer, InfraError> {
        let valid = (3..=64).contains(&code.len())
            && code
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            return Ok(Answer::NotFound);
        }
        let inner = self.inner.clone();
        let owned = code.to_owned();
        let key = self
            .inner
            .codes
            .try_get_with(code.to_owned(), async move {
                let Some(site) = inner.load_by_code(&owned).await? else {
                    return Ok::<_, InfraError>(None);
                };
                Ok(Some(site_key(site.handle.as_str(), &site.page.slug)))
            })
            .await
            .map_err(|e| (*e).clone())?;
        let Some(key) = key else {
            return Ok(Answer::NotFound);
        };
        let Some((handle, slug)) = key.split_once('/') else {
            return Ok(Answer::NotFound);
        };
        let Some(site) = self.site(handle, slug).await? else {
            return Ok(Answer::NotFound);
        };
        if site.page.status == PageStatus::Archived {
            return Ok(Answer::NotFound);
        }
        if expired(&site.link, self.inner.ports.clock.now()) || self.known_spent(&site) {
            return Ok(Answer::Gone);
        }
        Ok(Answer::Redirect {
            location: self
                .inner
                .config
                .origins
                .page_url(site.handle.as_str(), &site.page.slug),
            permanent: false,
        })
    }
}
