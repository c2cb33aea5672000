//! Objects a page's manifest stopped naming (replaced content) stay in storage for
//! [`PageConfig::replaced_files_kept`](super::PageConfig::replaced_files_kept) before they
//! go. A backup copies the database first and the files after it, so every file its copy
//! names must still be there when the files are copied: removed at once, a page replaced
//! several times a second made each round of the backup miss some, and it gave up.
//!
//! The replace marks them in the bundle store (`BundleStore::retire`), with the time;
//! the janitor removes those marked long enough ago unless the page's manifest names them
//! again (a later replace brought the same content back), and forgets the marks.

use std::collections::HashSet;

use quire_kernel::PageId;

use super::{PageError, PageService};

impl PageService {
    /// Marks `hashes`, which the page's manifest no longer names, for the janitor. When
    /// they cannot be marked they are removed at once, as before marks existed: storage
    /// never keeps an object nothing will remove.
    pub(super) async fn retire_objects(&self, page: PageId, hashes: &[String]) {
        if hashes.is_empty() {
            return;
        }
        if self
            .bundles
            .retire(page, hashes, self.clock.now())
            .await
            .is_err()
        {
            self.remove_objects(page, hashes).await;
        }
    }

    /// Removes the objects retired longer ago than the configured time that no manifest
    /// names again, and forgets their marks; returns how many objects went. Each page's
    /// manifest is read just before its marks are handled, so a replace that names an
    /// object again between the two is the only one that can lose it, and only while the
    /// janitor is at that page.
    ///
    /// # Errors
    /// `Infra` when the marks or a manifest cannot be read; a mark that cannot be forgotten
    /// is tried again on the next pass.
    pub(super) async fn sweep_retired(&self) -> Result<usize, PageError> {
        let before = self.clock.now() - self.config.replaced_files_kept;
        let mut marks = self.bundles.retired(before).await?;
        marks.sort_by_key(|m| m.page);
        let mut removed = HashSet::new();
        let mut named: Option<(PageId, HashSet<String>)> = None;
        for mark in marks {
            let names = match &named {
                Some((page, names)) if *page == mark.page => names,
                _ => {
                    let files = self.pages.files(mark.page).await?;
                    let names = files.into_iter().map(|f| f.sha256).collect();
                    &named.insert((mark.page, names)).1
                }
            };
            let unnamed = !names.contains(&mark.sha256);
            if self.bundles.forget_retired(&mark, unnamed).await.is_ok() && unnamed {
                removed.insert((mark.page, mark.sha256));
            }
        }
        Ok(removed.len())
    }
}
