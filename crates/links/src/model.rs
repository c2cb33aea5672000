//! The stored link: what it leads to, the codes it answers to, the policy visitors meet.

use quire_kernel::{AccountId, LinkId, ObjectId, PageId, ProjectId};
use time::OffsetDateTime;

use crate::policy::Policy;

/// What a link leads to. A page's or an object's link is owned by it (its policy is theirs,
/// and it is edited and deleted through them); a URL link stands alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Page(PageId),
    Object(ObjectId),
    /// An http or https URL, as [`crate::TargetUrl`] normalised it.
    Url(String),
}

impl Target {
    /// The stored kind: `page`, `object` or `url`.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Target::Page(_) => "page",
            Target::Object(_) => "object",
            Target::Url(_) => "url",
        }
    }
}

/// The status of a redirect to a URL link's target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RedirectStatus {
    MovedPermanently,
    #[default]
    Found,
    TemporaryRedirect,
    PermanentRedirect,
}

impl RedirectStatus {
    #[must_use]
    pub fn code(self) -> u16 {
        match self {
            RedirectStatus::MovedPermanently => 301,
            RedirectStatus::Found => 302,
            RedirectStatus::TemporaryRedirect => 307,
            RedirectStatus::PermanentRedirect => 308,
        }
    }

    #[must_use]
    pub fn from_code(code: i128) -> Option<Self> {
        match code {
            301 => Some(RedirectStatus::MovedPermanently),
            302 => Some(RedirectStatus::Found),
            307 => Some(RedirectStatus::TemporaryRedirect),
            308 => Some(RedirectStatus::PermanentRedirect),
            _ => None,
        }
    }

    /// 301 and 308: browsers and proxies keep them.
    #[must_use]
    pub fn permanent(self) -> bool {
        matches!(
            self,
            RedirectStatus::MovedPermanently | RedirectStatus::PermanentRedirect
        )
    }
}

/// A short link and the policy visitors meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub id: LinkId,
    pub target: Target,
    pub account_id: AccountId,
    pub project_id: ProjectId,
    pub public_id: String,
    pub alias: Option<String>,
    /// The owner's name for a URL link (a page's link has its page's title).
    pub title: Option<String>,
    pub policy: Policy,
    /// argon2id PHC string, for `password` access; it leaves the domain only to the store.
    pub password_hash: Option<String>,
    pub view_count: u64,
    /// Where visitors of an expired or spent URL link are sent instead of a 410.
    pub expired_url: Option<String>,
    pub redirect: RedirectStatus,
    /// `Some` while archived: the link answers 404.
    pub archived_at: Option<OffsetDateTime>,
    /// When a visitor last followed it (people, not previews); kept to the flush.
    pub last_viewed_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl Link {
    /// A page's link, as a publish makes it.
    #[must_use]
    pub fn of_page(
        page: PageId,
        account_id: AccountId,
        project_id: ProjectId,
        public_id: String,
        policy: Policy,
        now: OffsetDateTime,
    ) -> Self {
        Self::owned(
            LinkId::new(),
            Target::Page(page),
            account_id,
            project_id,
            public_id,
            policy,
            now,
        )
    }

    /// An object's link, as an upload makes it: it has the object's id.
    #[must_use]
    pub fn of_object(
        object: ObjectId,
        account_id: AccountId,
        project_id: ProjectId,
        public_id: String,
        policy: Policy,
        now: OffsetDateTime,
    ) -> Self {
        Self::owned(
            LinkId(object.0),
            Target::Object(object),
            account_id,
            project_id,
            public_id,
            policy,
            now,
        )
    }

    fn owned(
        id: LinkId,
        target: Target,
        account_id: AccountId,
        project_id: ProjectId,
        public_id: String,
        policy: Policy,
        now: OffsetDateTime,
    ) -> Self {
        Self {
            id,
            target,
            account_id,
            project_id,
            public_id,
            alias: None,
            title: None,
            policy,
            password_hash: None,
            view_count: 0,
            expired_url: None,
            redirect: RedirectStatus::Found,
            archived_at: None,
            last_viewed_at: None,
            created_at: now,
            updated_at: now,
        }
    }

    /// The object the link belongs to; `None` for a page's or a URL's.
    #[must_use]
    pub fn object(&self) -> Option<ObjectId> {
        match self.target {
            Target::Object(object) => Some(object),
            Target::Page(_) | Target::Url(_) => None,
        }
    }

    /// The code of the short URL: the alias when there is one.
    #[must_use]
    pub fn code(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.public_id)
    }

    #[must_use]
    pub fn has_password(&self) -> bool {
        self.password_hash.is_some()
    }

    /// The page the link belongs to; `None` for a URL link.
    #[must_use]
    pub fn page(&self) -> Option<PageId> {
        match self.target {
            Target::Page(page) => Some(page),
            Target::Object(_) | Target::Url(_) => None,
        }
    }

    /// The URL a URL link leads to; `None` for a page's link.
    #[must_use]
    pub fn url(&self) -> Option<&str> {
        match &self.target {
            Target::Url(url) => Some(url),
            Target::Page(_) | Target::Object(_) => None,
        }
    }
}
