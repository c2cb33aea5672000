//! Pages, their files, and the policy kept on their short link.

use bytes::Bytes;
use quire_kernel::{AccountId, Handle, InfraError, PageId, ProjectId};
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

/// A validated file of a request: its entry (size and SHA-256 of the decoded bytes) and its
/// content as sent. The bytes are decoded again when stored ([`FileData::bytes`]) rather than
/// kept: holding every decoded file beside the request until the last upload doubled the
/// memory a publish needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileData {
    pub entry: FileEntry,
    content: Bytes,
    base64: bool,
}

impl FileData {
    pub(crate) fn new(entry: FileEntry, content: Bytes, base64: bool) -> Self {
        Self {
            entry,
            content,
            base64,
        }
    }

    /// The file's bytes: the content itself, or its base64 decoded.
    ///
    /// # Errors
    /// Only if the content no longer decodes, which the batch check rules out.
    pub fn bytes(&self) -> Result<Bytes, InfraError> {
        if !self.base64 {
            return Ok(self.content.clone());
        }
        base64_simd::STANDARD
            .decode_to_vec(&self.content)
            .map(Bytes::from)
            .map_err(|_| InfraError::new("a checked file's base64 no longer decodes"))
    }
}

/// A file as it arrives in a request body. `content` may share the request body's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInput {
    pub path: String,
    pub content: Bytes,
    /// `utf8` or `base64`; `None` means `utf8`.
    pub encoding: Option<String>,
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

/// What to do with a link's password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PasswordChange {
    Keep,
    Set(String),
    Clear,
}

/// A page shared with the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedPage {
    pub page: Page,
    pub owner_handle: String,
    pub shared_at: OffsetDateTime,
    pub link: Link,
}
