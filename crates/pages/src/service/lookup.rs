//! The reads an agent needs beside the API's: a page named the way a person names it (its
//! id, slug, public id, alias or one of its URLs), and a byte slice of one of its files.

use quire_kernel::{PageId, Principal};
use quire_projects::ProjectAccess;

use super::{PageError, PageService, PageView};
use crate::model::FileEntry;

/// The most bytes one [`PageService::read_file`] returns.
pub const MAX_FILE_SLICE: u64 = 256 * 1024;

/// Bytes of one stored file, from `offset`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSlice {
    pub entry: FileEntry,
    pub offset: u64,
    pub bytes: Vec<u8>,
}

impl FileSlice {
    /// Whether bytes past this slice remain.
    #[must_use]
    pub fn truncated(&self) -> bool {
        self.offset + (self.bytes.len() as u64) < self.entry.size_bytes
    }
}

/// The piece of `reference` that names a page: a URL's first path segment (the slug on the
/// owner's origin, the public id or alias on the short-link domain), else the reference.
fn named_part(reference: &str) -> &str {
    let trimmed = reference.trim();
    match trimmed.split_once("://") {
        Some((_, rest)) => rest
            .split(['?', '#'])
            .next()
            .unwrap_or_default()
            .split('/')
            .skip(1)
            .find(|s| !s.is_empty())
            .unwrap_or_default(),
        None => trimmed,
    }
}

impl PageService {
    /// The caller's page named by `reference`: its id, its slug, its public id or alias, or
    /// a URL of it (the page's address or its short link).
    ///
    /// # Errors
    /// `NotFound` (nothing of the caller's answers to it), `InsufficientScope`, `Infra`.
    pub async fn find(
        &self,
        principal: &Principal,
        reference: &str,
    ) -> Result<PageView, PageError> {
        if let Ok(id) = uuid::Uuid::parse_str(reference.trim()) {
            return self.get(principal, PageId(id)).await;
        }
        let name = named_part(reference);
        if name.is_empty() || name.len() > 200 {
            return Err(PageError::NotFound);
        }
        if let Some(page) = self.pages.page_by_slug(principal.account_id, name).await? {
            return self.get(principal, page.id).await;
        }
        match self.links.link_by_code(name).await? {
            Some(link) => match link.page() {
                Some(page) => self.get(principal, page).await,
                None => Err(PageError::NotFound),
            },
            None => Err(PageError::NotFound),
        }
    }

    /// Up to `max` bytes (at most [`MAX_FILE_SLICE`]) of the file at `path` of a page, from
    /// `offset`.
    ///
    /// # Errors
    /// `NotFound` (no such page or file), `Invalid` (an offset past the file's end),
    /// `InsufficientScope`, `Infra`.
    pub async fn read_file(
        &self,
        principal: &Principal,
        id: PageId,
        path: &str,
        offset: u64,
        max: u64,
    ) -> Result<FileSlice, PageError> {
        let (page, _) = self.reachable(principal, id, ProjectAccess::Read).await?;
        let entry = self
            .pages
            .files(page.id)
            .await?
            .into_iter()
            .find(|f| f.path == path)
            .ok_or(PageError::NotFound)?;
        if offset > entry.size_bytes {
            return Err(PageError::Invalid(format!(
                "offset {offset} is past the file's end ({} bytes)",
                entry.size_bytes
            )));
        }
        let end = entry
            .size_bytes
            .min(offset.saturating_add(max.min(MAX_FILE_SLICE)));
        let bytes = if end == offset {
            Vec::new()
        } else {
            self.bundles
                .get_range(page.id, &entry.sha256, offset..end)
                .await?
                .ok_or(PageError::NotFound)?
        };
        Ok(FileSlice {
            entry,
            offset,
            bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::named_part;

    #[test]
    fn a_url_names_its_first_path_segment() {
        assert_eq!(named_part("https://ann.pages.test/report/"), "report");
        assert_eq!(named_part("https://quire.test/ab12cd?x=1"), "ab12cd");
        assert_eq!(named_part(" report "), "report");
        assert_eq!(named_part("https://quire.test/"), "");
    }
}
