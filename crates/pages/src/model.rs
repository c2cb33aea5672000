//! Pages, their files, and the policy kept on their short link.

use bytes::Bytes;
use quire_kernel::{AccountId, Handle, PageId, ProjectId};
use quire_links::Link;
use quire_projects::Project;
use time::OffsetDateTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageStatus {
    Active,
    Archived,
}

impl PageStatus {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            PageStatus::Active => "active",
            PageStatus::Archived => "archived",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "active" => Some(Self::Active),
            "archived" => Some(Self::Archived),
            _ => None,
        }
    }
}

/// A page record. Policy fields live on its link (see [`Link`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub id: PageId,
    pub public_id: String,
    pub account_id: AccountId,
    pub project_id: ProjectId,
    pub slug: String,
    pub title: String,
    pub entrypoint: String,
    pub status: PageStatus,
    pub size_bytes: u64,
    pub file_count: u64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub archived_at: Option<OffsetDateTime>,
    /// The slug of the database the page names (`database` at publish or patch): one of its
    /// owner's, in its project when named. The pages origin answers `/-/db.json` with its
    /// data API's address and anon key, checking owner and project again then.
    pub database: Option<String>,
}

/// A ready page with what the API shows beside it: its project (for the access rules), its
/// link with the allow list, and its owner's handle (for its address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageDetails {
    pub page: Page,
    pub project: Project,
    pub link: Option<Link>,
    pub owner: Handle,
}

/// One file of a page's bundle, as listed. The bytes live in the bundle store under the
/// page id and `sha256`, so replacing a path never overwrites stored content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub path: String,
    pub size_bytes: u64,
    pub content_type: String,
    pub sha256: String,
}

/// A validated file of a request: its entry (size and SHA-256) and its bytes, which may be a
/// slice of the request's own memory (see [`FileInput`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileData {
    pub entry: FileEntry,
    content: Bytes,
}

impl FileData {
    pub(crate) fn new(entry: FileEntry, content: Bytes) -> Self {
        Self { entry, content }
    }

    /// The file's bytes.
    #[must_use]
    pub fn bytes(&self) -> &Bytes {
        &self.content
    }
}

/// A file as it arrives in a request: its path, and its bytes as the adapter that read the
/// request decoded them from the request's encoding, or why it could not. The bytes may be a
/// slice of the request body: an HTTP publish decodes base64 in place, in the body's memory,
/// so the request's files are held once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInput {
    pub path: String,
    pub content: Result<Bytes, Unreadable>,
}

/// Why a file's bytes could not be read from a request. The batch check reports it in
/// request order with the other problems of each file, so the first problem found does not
/// depend on where the decoding ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// Sent in an encoding other than `utf8` and `base64`; holds the name as sent.
    UnknownEncoding(String),
    /// Sent as base64 that does not decode.
    BadBase64,
}

/// Size and count limits (configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_files: usize,
    pub max_file_bytes: u64,
    pub max_page_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_files: 1_000,
            max_file_bytes: 10 * 1024 * 1024,
            max_page_bytes: 50 * 1024 * 1024,
        }
    }
}

pub use quire_links::rules::PasswordChange;

/// A page shared with the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedPage {
    pub page: Page,
    pub owner_handle: String,
    pub shared_at: OffsetDateTime,
    pub link: Link,
}
