//! `quire-pages`: pages: publish, list, fetch, update, archive, delete, files and shared
//! pages, with every validation rule of the page API and the undo logic that makes each
//! multi-step write all-or-nothing.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-projects` (the addressing rules) and
//! small pure crates (sha2, base64, rand, mime_guess). Its ports: [`ports::PageStore`],
//! [`ports::BundleStore`], [`ports::LinkService`] (the page's short link and policy live in
//! the link service), [`ports::AccountDirectory`] and the kernel's `Clock`.

pub mod model;
pub mod origins;
pub mod ports;
pub mod service;
pub mod validate;

pub use model::{
    Access, AllowEntry, FileData, FileEntry, FileInput, Limits, LinkView, Page, PageStatus,
    PasswordChange, Policy, SharedPage,
};
pub use origins::{HostOwner, PageOrigins};
pub use ports::{
    AccountDirectory, BundleStore, InsertPageError, LinkChange, LinkError, LinkService, NewLink,
    PageStore, PublicIds, RandomPublicIds, UpdatePageStoreError,
};
pub use service::{
    FilesAdded, LEFTOVER_AGE, PageConfig, PageError, PagePorts, PageService, PageView,
    PatchRequest, PublishRequest, Swept, UPLOAD_CONCURRENCY,
};
