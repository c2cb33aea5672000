//! The port through which page and project services announce changes to whoever caches what
//! they read (the pages origin), so that no caller has to remember to.

use std::sync::Arc;

use crate::ids::{LinkId, PageId, ProjectId};

/// Told after a write commits; a listener drops what it cached about the subject. Calls are
/// cheap and never fail: a listener that cannot act lets its cache lapse instead.
pub trait PageChanges: Send + Sync + std::fmt::Debug {
    /// A page was published, changed, given files, moved or deleted (its record, link,
    /// files or project).
    fn page_changed(&self, page: PageId);

    /// A link moved to another project.
    fn link_changed(&self, link: LinkId);

    /// A project changed (its slug or client), or was deleted, its pages moved elsewhere.
    fn project_changed(&self, project: ProjectId);
}

/// For services nothing caches behind (admin commands, unit tests of one service).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoListener;

impl PageChanges for NoListener {
    fn page_changed(&self, _: PageId) {}
    fn link_changed(&self, _: LinkId) {}
    fn project_changed(&self, _: ProjectId) {}
}

/// Several listeners told in turn (the pages origin's caches and the API key cache).
#[derive(Debug, Clone, Default)]
pub struct Listeners(pub Vec<Arc<dyn PageChanges>>);

impl PageChanges for Listeners {
    fn page_changed(&self, page: PageId) {
        self.0.iter().for_each(|l| l.page_changed(page));
    }
    fn link_changed(&self, link: LinkId) {
        self.0.iter().for_each(|l| l.link_changed(link));
    }
    fn project_changed(&self, project: ProjectId) {
        self.0.iter().for_each(|l| l.project_changed(project));
    }
}
