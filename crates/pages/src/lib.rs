//! `quire-pages`: pages: publish, list, fetch, update, archive, delete, files and shared
//! pages, with every validation rule of the page API and the undo logic that makes each
//! multi-step write all-or-nothing.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-projects` (the addressing rules),
//! `quire-links` (a page's short link carries its policy) and small pure crates (bytes,
//! rand, mime_guess; SHA-256 comes from the kernel). Files arrive decoded: reading a
//! request's encoding is its adapter's work. Its ports:
//! [`ports::PageStore`], [`ports::BundleStore`], [`ports::AccountDirectory`],
//! [`ports::PageDatabases`] (the databases a page may name), `quire-links`'
//! `LinkStore` and the kernel's `Clock`, `Timer` and `Offload` (where a large batch is
//! hashed, off the async workers).

mod batch;
pub mod model;
pub mod origins;
pub mod ports;
pub mod service;
pub mod validate;

pub use model::{
    FileData, FileEntry, FileInput, Limits, Page, PageDetails, PageStatus, PasswordChange,
    SharedPage, Unreadable,
};
pub use origins::{HostOwner, PageOrigins};
pub use ports::{
    AccountDirectory, BundleStore, InsertPageError, NoDatabases, PageDatabases, PageStore,
    PageTotals, PublicIds, PublishRequests, PutFilesError, RandomPublicIds, Readers, ReplacedFiles,
    Retired, UpdatePageStoreError, put_concurrently,
};
pub use service::{
    Exposure, FILES_LIST, FileSlice, FilesAdded, LEFTOVER_AGE, MAX_FILE_SLICE, PAGES_LIST,
    PageConfig, PageError, PageLister, PagePorts, PageService, PageView, PatchRequest,
    PublishRequest, REQUEST_MEMORY, SHARED_LIST, Swept, UPLOAD_CONCURRENCY,
};

// The requests carry them, so a caller builds one without naming `quire-links`.
pub use quire_links::{PolicyInput, PolicyPatch};
