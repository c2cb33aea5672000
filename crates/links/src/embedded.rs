//! The `LinkService` of the page domain, implemented in process over a [`LinkStore`].

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use quire_kernel::password::hash_password_unchecked;
use quire_kernel::{AccountId, Clock, Email, InfraError, LinkId, PageId};
use quire_pages::{LinkChange, LinkError, LinkService, LinkView, NewLink, PasswordChange};
use time::OffsetDateTime;

use crate::model::{AllowGrant, Link};
use crate::ports::{LinkStore, LinkWriteError};

#[derive(Debug, Clone)]
pub struct EmbeddedLinkService {
    store: Arc<dyn LinkStore>,
    clock: Arc<dyn Clock>,
}

impl EmbeddedLinkService {
    pub fn new(store: Arc<dyn LinkStore>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock }
    }
}

/// Page passwords have no minimum length: the owner chooses what visitors type.
fn hash(password: &str) -> Result<String, LinkError> {
    hash_password_unchecked(password).map_err(|e| LinkError::Infra(InfraError::new(e.to_string())))
}

fn write_error(e: LinkWriteError) -> LinkError {
    match e {
        LinkWriteError::CodeTaken => LinkError::AliasConflict,
        LinkWriteError::Infra(e) => LinkError::Infra(e),
    }
}

fn grants(
    entries: Vec<quire_pages::AllowEntry>,
    previous: &[AllowGrant],
    now: OffsetDateTime,
) -> Vec<AllowGrant> {
    entries
        .into_iter()
        .map(|entry| {
            let created_at = previous
                .iter()
                .find(|g| g.entry == entry)
                .map_or(now, |g| g.created_at);
            AllowGrant { entry, created_at }
        })
        .collect()
}

#[async_trait]
impl LinkService for EmbeddedLinkService {
    async fn create(&self, new: NewLink) -> Result<LinkView, LinkError> {
        let now = self.clock.now();
        let password_hash = new.password.as_deref().map(hash).transpose()?;
        let link = Link {
            id: LinkId::new(),
            page_id: new.page,
            account_id: new.account,
            project_id: new.project,
            public_id: new.public_id,
            alias: new.alias,
            access: new.policy.access,
            password_hash,
            expires_at: new.policy.expires_at,
            max_views: new.policy.max_views,
            view_count: 0,
            allow: grants(new.policy.allow, &[], now),
            created_at: now,
            updated_at: now,
        };
        self.store.insert_link(&link).await.map_err(write_error)?;
        Ok(link.view())
    }

    async fn link(&self, page: PageId) -> Result<Option<LinkView>, InfraError> {
        Ok(self.store.link_of_page(page).await?.map(|l| l.view()))
    }

    async fn links(&self, pages: &[PageId]) -> Result<HashMap<PageId, LinkView>, InfraError> {
        Ok(self
            .store
            .links_of_pages(pages)
            .await?
            .into_iter()
            .map(|l| (l.page_id, l.view()))
            .collect())
    }

    async fn update(&self, page: PageId, change: LinkChange) -> Result<LinkView, LinkError> {
        let now = self.clock.now();
        let mut link = self
            .store
            .link_of_page(page)
            .await?
            .ok_or(LinkError::NotFound)?;
        if let Some(alias) = change.alias {
            link.alias = alias;
        }
        link.access = change.policy.access;
        link.expires_at = change.policy.expires_at;
        link.max_views = change.policy.max_views;
        link.allow = grants(change.policy.allow, &link.allow, now);
        match change.password {
            PasswordChange::Keep => {}
            PasswordChange::Clear => link.password_hash = None,
            PasswordChange::Set(p) => link.password_hash = Some(hash(&p)?),
        }
        link.updated_at = now;
        self.store.update_link(&link).await.map_err(write_error)?;
        Ok(link.view())
    }

    async fn delete(&self, page: PageId) -> Result<(), InfraError> {
        self.store.delete_link_of_page(page).await
    }

    async fn shared_with(
        &self,
        account: AccountId,
        email: Option<&Email>,
    ) -> Result<Vec<(PageId, OffsetDateTime)>, InfraError> {
        self.store.shared_with(account, email).await
    }
}
