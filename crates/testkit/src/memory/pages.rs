//! Pages, their files and publish leases.

use async_trait::async_trait;
use quire_kernel::{AccountId, Email, InfraError, PageId, ProjectId, TimeKey};
use quire_links::AllowEntry;
use quire_pages::validate::LimitKind;
use quire_pages::{
    FileEntry, InsertPageError, Limits, Page, PageDetails, PageStatus, PageStore, PageTotals,
    PutFilesError, ReplacedFiles, UpdatePageStoreError,
};
use time::OffsetDateTime;

use super::links::code_taken;
use super::{MemoryStore, Op};

#[async_trait]
impl PageStore for MemoryStore {
    async fn insert_pending(
        &self,
        page: &Page,
        files: &[FileEntry],
        lease_until: OffsetDateTime,
    ) -> Result<(), InsertPageError> {
        self.check(Op::InsertPending)?;
        self.with(|s| {
            if s.pages.iter().any(|(p, _)| p.public_id == page.public_id)
                || code_taken(s, &page.public_id, None)
            {
                return Err(InsertPageError::PublicIdTaken);
            }
            if s.pages
                .iter()
                .any(|(p, _)| p.account_id == page.account_id && p.slug == page.slug)
                || s.objects
                    .iter()
                    .any(|(o, _)| o.account_id == page.account_id && o.slug == page.slug)
            {
                return Err(InsertPageError::SlugTaken);
            }
            s.pages.push((page.clone(), false));
            s.leases.insert(page.id, lease_until);
            s.files.insert(page.id, files.to_vec());
            Ok(())
        })
    }

    async fn renew_lease(&self, id: PageId, until: OffsetDateTime) -> Result<bool, InfraError> {
        self.check(Op::RenewLease)?;
        Ok(self.with(|s| match s.leases.get_mut(&id) {
            Some(lease) => {
                *lease = until;
                true
            }
            None => false,
        }))
    }

    async fn mark_ready(&self, id: PageId) -> Result<(), InfraError> {
        self.check(Op::MarkReady)?;
        self.with(|s| {
            if s.leases.remove(&id).is_none() {
                return Err(InfraError::new("no pending record to mark ready"));
            }
            for (p, ready) in &mut s.pages {
                if p.id == id {
                    *ready = true;
                }
            }
            Ok(())
        })
    }

    async fn delete_page(&self, id: PageId) -> Result<(), InfraError> {
        self.check(Op::DeletePage)?;
        self.with(|s| {
            s.pages.retain(|(p, _)| p.id != id);
            s.leases.remove(&id);
            s.files.remove(&id);
            s.publish_requests.retain(|_, (page, _)| *page != id);
        });
        Ok(())
    }

    async fn page(&self, id: PageId) -> Result<Option<Page>, InfraError> {
        self.check(Op::Page)?;
        Ok(self.with(|s| {
            s.pages
                .iter()
                .find(|(p, ready)| *ready && p.id == id)
                .map(|(p, _)| p.clone())
        }))
    }

    async fn page_details(&self, id: PageId) -> Result<Option<PageDetails>, InfraError> {
        self.check(Op::PageDetails)?;
        Ok(self.with(|s| {
            let (page, _) = s.pages.iter().find(|(p, ready)| *ready && p.id == id)?;
            Some(PageDetails {
                project: s.projects.iter().find(|p| p.id == page.project_id)?.clone(),
                owner: s
                    .accounts
                    .iter()
                    .find(|a| a.id == page.account_id)?
                    .handle
                    .clone(),
                link: s.links.iter().find(|l| l.page() == Some(id)).cloned(),
                page: page.clone(),
            })
        }))
    }

    async fn page_by_slug(&self, owner: AccountId, slug: &str) -> Result<Option<Page>, InfraError> {
        self.check(Op::PageBySlug)?;
        Ok(self.with(|s| {
            s.pages
                .iter()
                .find(|(p, ready)| *ready && p.account_id == owner && p.slug == slug)
                .map(|(p, _)| p.clone())
        }))
    }

    async fn project_pages(
        &self,
        project: ProjectId,
        status: PageStatus,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<Page>, InfraError> {
        self.check(Op::ProjectPages)?;
        Ok(self.with(|s| {
            let mut v: Vec<Page> = s
                .pages
                .iter()
                .filter(|(p, ready)| *ready && p.project_id == project && p.status == status)
                .map(|(p, _)| p.clone())
                .collect();
            newest_first_after(&mut v, after, limit, |p| (p.created_at, p.id));
            v
        }))
    }

    async fn shared_pages(
        &self,
        account: AccountId,
        email: Option<&Email>,
        after: Option<&TimeKey>,
        limit: u32,
    ) -> Result<Vec<(Page, OffsetDateTime)>, InfraError> {
        self.check(Op::SharedPages)?;
        Ok(self.with(|s| {
            let mut v: Vec<(Page, OffsetDateTime)> = s
                .links
                .iter()
                .filter_map(|l| {
                    let at = l
                        .policy
                        .allow
                        .iter()
                        .filter(|entry| match entry {
                            AllowEntry::Account(a) => *a == account,
                            AllowEntry::Email(e) => Some(e) == email,
                        })
                        .filter_map(|entry| s.shared_since.get(&(l.id, entry.clone())).copied())
                        .min()?;
                    let page = s.pages.iter().find(|(p, ready)| {
                        *ready && l.page() == Some(p.id) && p.status == PageStatus::Active
                    })?;
                    Some((page.0.clone(), at))
                })
                .collect();
            newest_first_after(&mut v, after, limit, |(p, at)| (*at, p.id));
            v
        }))
    }

    async fn update_page(&self, page: &Page) -> Result<(), UpdatePageStoreError> {
        self.check(Op::UpdatePage)?;
        self.with(|s| {
            if s.pages.iter().any(|(p, _)| {
                p.id != page.id && p.account_id == page.account_id && p.slug == page.slug
            }) || s
                .objects
                .iter()
                .any(|(o, _)| o.account_id == page.account_id && o.slug == page.slug)
            {
                return Err(UpdatePageStoreError::SlugTaken);
            }
            for (p, _) in &mut s.pages {
                if p.id == page.id {
                    p.slug = page.slug.clone();
                    p.title = page.title.clone();
                    p.status = page.status;
                    p.updated_at = page.updated_at;
                    p.archived_at = page.archived_at;
                    p.database.clone_from(&page.database);
                }
            }
            Ok(())
        })
    }

    async fn files(&self, id: PageId) -> Result<Vec<FileEntry>, InfraError> {
        self.check(Op::Files)?;
        Ok(self.with(|s| {
            let mut v = s.files.get(&id).cloned().unwrap_or_default();
            v.sort_by(|a, b| a.path.cmp(&b.path));
            v
        }))
    }

    async fn files_after(
        &self,
        id: PageId,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<FileEntry>, InfraError> {
        self.check(Op::Files)?;
        Ok(self.with(|s| {
            let mut v: Vec<FileEntry> = s
                .files
                .get(&id)
                .into_iter()
                .flatten()
                .filter(|f| after.is_none_or(|a| f.path.as_str() > a))
                .cloned()
                .collect();
            v.sort_by(|a, b| a.path.cmp(&b.path));
            v.truncate(limit as usize);
            v
        }))
    }

    async fn put_files(
        &self,
        id: PageId,
        files: &[FileEntry],
        limits: &Limits,
        updated_at: OffsetDateTime,
    ) -> Result<PageTotals, PutFilesError> {
        self.check(Op::PutFiles)?;
        self.with(|s| {
            let Some((page, _)) = s.pages.iter_mut().find(|(p, ready)| p.id == id && *ready) else {
                return Err(PutFilesError::NotFound);
            };
            let mut manifest = s.files.get(&id).cloned().unwrap_or_default();
            for f in files {
                manifest.retain(|e| e.path != f.path);
                manifest.push(f.clone());
            }
            let file_count = manifest.len() as u64;
            let size_bytes: u64 = manifest.iter().map(|e| e.size_bytes).sum();
            let over = if file_count > limits.max_files as u64 {
                Some(LimitKind::Files)
            } else if size_bytes > limits.max_page_bytes {
                Some(LimitKind::PageSize)
            } else {
                None
            };
            if let Some(limit) = over {
                return Err(PutFilesError::TooLarge {
                    limit,
                    files: file_count,
                    bytes: size_bytes,
                });
            }
            page.size_bytes = size_bytes;
            page.file_count = file_count;
            page.updated_at = updated_at;
            s.files.insert(id, manifest);
            Ok(PageTotals {
                file_count,
                size_bytes,
            })
        })
    }

    async fn replace_files(
        &self,
        id: PageId,
        files: &[FileEntry],
        limits: &Limits,
        updated_at: OffsetDateTime,
    ) -> Result<ReplacedFiles, PutFilesError> {
        self.check(Op::ReplaceFiles)?;
        self.with(|s| {
            let Some((page, _)) = s.pages.iter_mut().find(|(p, ready)| p.id == id && *ready) else {
                return Err(PutFilesError::NotFound);
            };
            let file_count = files.len() as u64;
            let size_bytes: u64 = files.iter().map(|e| e.size_bytes).sum();
            let over = if file_count > limits.max_files as u64 {
                Some(LimitKind::Files)
            } else if size_bytes > limits.max_page_bytes {
                Some(LimitKind::PageSize)
            } else {
                None
            };
            if let Some(limit) = over {
                return Err(PutFilesError::TooLarge {
                    limit,
                    files: file_count,
                    bytes: size_bytes,
                });
            }
            page.size_bytes = size_bytes;
            page.file_count = file_count;
            page.updated_at = updated_at;
            let previous = s
                .files
                .insert(id, files.to_vec())
                .unwrap_or_default()
                .into_iter()
                .map(|e| e.sha256)
                .collect();
            Ok(ReplacedFiles {
                totals: PageTotals {
                    file_count,
                    size_bytes,
                },
                previous,
            })
        })
    }

    async fn stale_pending(&self, now: OffsetDateTime) -> Result<Vec<PageId>, InfraError> {
        self.check(Op::StalePending)?;
        Ok(self.with(|s| {
            s.leases
                .iter()
                .filter(|(_, lease)| **lease < now)
                .map(|(id, _)| *id)
                .collect()
        }))
    }

    async fn lapsed_slug_holder(
        &self,
        owner: AccountId,
        slug: &str,
        now: OffsetDateTime,
    ) -> Result<Option<PageId>, InfraError> {
        self.check(Op::LapsedSlugHolder)?;
        Ok(self.with(|s| {
            s.pages
                .iter()
                .find(|(p, _)| {
                    p.account_id == owner
                        && p.slug == slug
                        && s.leases.get(&p.id).is_some_and(|lease| *lease < now)
                })
                .map(|(p, _)| p.id)
        }))
    }

    async fn page_exists(&self, id: PageId) -> Result<bool, InfraError> {
        self.check(Op::PageExists)?;
        Ok(self.with(|s| s.pages.iter().any(|(p, _)| p.id == id)))
    }
}

/// Sorts `items` as the store's keyset lists are (time descending, then id ascending) and
/// keeps at most `limit` of those strictly after `after`.
fn newest_first_after<T>(
    items: &mut Vec<T>,
    after: Option<&TimeKey>,
    limit: u32,
    key: impl Fn(&T) -> (OffsetDateTime, PageId),
) {
    items.sort_by_key(|item| {
        let (at, id) = key(item);
        (std::cmp::Reverse(at), id)
    });
    if let Some(after) = after {
        items.retain(|item| {
            let (at, id) = key(item);
            at < after.at || (at == after.at && id.0 > after.id)
        });
    }
    items.truncate(limit as usize);
}
