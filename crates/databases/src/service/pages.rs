//! What pages ask of the service: whether a page may name a database (`database` at
//! publish and patch), and what the pages origin hands the page's scripts at `/-/db.json`.

use quire_kernel::{AccountId, ProjectId};

use super::{DatabaseError, DatabaseService};
use crate::keys::ApiKeys;
use crate::model::{Database, DatabaseStatus};

/// What a page's scripts need to reach the database it names: the data API's addresses and
/// its anon key, the key meant for browsers. `Debug` shows the URLs only.
#[derive(Clone, PartialEq, Eq)]
pub struct PageClient {
    /// `{base}/db/{slug}`: what supabase-js' `createClient` takes.
    pub api_url: String,
    pub rest_url: String,
    pub auth_url: String,
    pub anon_key: String,
}

impl std::fmt::Debug for PageClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageClient")
            .field("api_url", &self.api_url)
            .finish_non_exhaustive()
    }
}

impl DatabaseService {
    /// The ready database `slug` when it is `account`'s and in `project`; any other is none,
    /// so a slug freed and taken again by another owner or project is never a page's.
    async fn of_page(
        &self,
        account: AccountId,
        project: ProjectId,
        slug: &str,
    ) -> Result<Option<Database>, DatabaseError> {
        let now = self.ports.clock.now();
        Ok(self
            .ports
            .records
            .database_by_slug(slug)
            .await?
            .filter(|d| {
                d.account_id == account
                    && d.project_id == project
                    && d.status == DatabaseStatus::Ready
                    && !d.lapsed(now)
            }))
    }

    /// Whether a page of `account` in `project` may name database `slug`: a ready one of
    /// the same account in the same project (its data API may be off).
    ///
    /// # Errors
    /// `Infra`.
    pub async fn page_may_name(
        &self,
        account: AccountId,
        project: ProjectId,
        slug: &str,
    ) -> Result<bool, DatabaseError> {
        Ok(self.of_page(account, project, slug).await?.is_some())
    }

    /// What the pages origin gives a page of `account` in `project` that names database
    /// `slug`, whose visitor the page's own access rule admitted: `None` when the database
    /// is no longer the page's to name (gone, another owner's or project's) or its data
    /// API is off.
    ///
    /// # Errors
    /// `Infra` (a secret that does not open).
    pub async fn page_client(
        &self,
        account: AccountId,
        project: ProjectId,
        slug: &str,
    ) -> Result<Option<PageClient>, DatabaseError> {
        let Some(database) = self
            .of_page(account, project, slug)
            .await?
            .filter(|d| d.data_api_enabled)
        else {
            return Ok(None);
        };
        let keys = ApiKeys::derive(
            &self.jwt_secret(&database)?,
            database.slug.as_str(),
            database.created_at,
        );
        let api_url = self.api_url(&database.slug);
        Ok(Some(PageClient {
            rest_url: format!("{api_url}/rest/v1"),
            auth_url: format!("{api_url}/auth/v1"),
            api_url,
            anon_key: keys.anon,
        }))
    }
}
