//! A page's `/-/db.json`: the page's own access rule decides who may learn which database
//! it names (the pages origin then asks the database service for its client).

use quire_kernel::{AccountId, InfraError, ProjectId};
use quire_pages::PageStatus;

use super::ServingService;
use super::guarded::Guarded;
use crate::answer::{Answer, Visitor};
use crate::path::{parse_owner_path, parse_page_path};
use crate::policy::expired;
use crate::token::TokenKind;

/// What a page's `/-/db.json` may show, before the database is asked.
#[derive(Debug)]
pub enum PageDatabase {
    /// The visitor may see the page: its owner, its project and the slug of the database
    /// it names (`None`: none).
    Open {
        account: AccountId,
        project: ProjectId,
        database: Option<String>,
    },
    /// What the page answers this visitor instead: not found, gone, the password form, the
    /// sign-in page or a refusal, exactly as for any of its files.
    Refused(Answer),
}

impl ServingService {
    /// The database named by the page at `page_path` (`/{slug}` on an owner's origin,
    /// `/{handle}/{slug}` on a shared one; raw), for `visitor`, under the page's rules for
    /// a file that is not a document: unknown or archived 404, expired 410, a spent budget
    /// 410 unless the visitor's view was counted, then its access rule. Nothing is counted.
    ///
    /// # Errors
    /// [`InfraError`] when the store fails.
    pub async fn page_database(
        &self,
        owner: Option<&str>,
        page_path: &str,
        visitor: &Visitor<'_>,
    ) -> Result<PageDatabase, InfraError> {
        let path = match (owner, self.inner.config.origins.per_owner()) {
            (Some(owner), true) => parse_owner_path(owner, page_path),
            (None, false) => parse_page_path(page_path),
            _ => None,
        };
        let refused = |answer| Ok(PageDatabase::Refused(answer));
        let Some(path) = path.filter(|p| p.rest.is_none()) else {
            return refused(Answer::NotFound);
        };
        let Some(site) = self.site(path.handle, path.slug).await? else {
            return refused(Answer::NotFound);
        };
        if site.page.status == PageStatus::Archived {
            return refused(Answer::NotFound);
        }
        let now = self.inner.ports.clock.now();
        if expired(&site.link, now) {
            return refused(Answer::Gone);
        }
        let viewed = visitor.view.iter().any(|t| {
            self.inner
                .signer
                .check(t, TokenKind::View, site.page.id.0, now)
                .is_some()
        });
        if self.known_spent(&site) && !viewed {
            return refused(Answer::Gone);
        }
        let to = Guarded::Page {
            site: &site,
            next: "",
        };
        if let Some(refusal) = self.admit(&to, visitor, now).await? {
            return refused(refusal);
        }
        Ok(PageDatabase::Open {
            account: site.page.account_id,
            project: site.page.project_id,
            database: site.page.database.clone(),
        })
    }
}
