//! An object record. Its policy lives on its link, as a page's does.

use quire_kernel::{AccountId, LinkId, ObjectId, ProjectId};
use time::OffsetDateTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectStatus {
    Active,
    Archived,
}

impl ObjectStatus {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectStatus::Active => "active",
            ObjectStatus::Archived => "archived",
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

/// One stored file and what it is published as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub id: ObjectId,
    pub public_id: String,
    pub account_id: AccountId,
    pub project_id: ProjectId,
    pub slug: String,
    pub title: String,
    /// What a download is saved as (no directory, no control characters).
    pub filename: String,
    pub content_type: String,
    pub size_bytes: u64,
    /// Lowercase hex SHA-256 of the bytes: the `ETag`.
    pub sha256: String,
    /// The name of the stored bytes: a new one per upload, so a replacement never writes
    /// over what a visitor is reading.
    pub blob: String,
    pub status: ObjectStatus,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub archived_at: Option<OffsetDateTime>,
}

impl Object {
    /// Its short link, which carries its policy, has the object's id: a dead upload's link
    /// is found from the record alone.
    #[must_use]
    pub fn link_id(&self) -> LinkId {
        LinkId(self.id.0)
    }

    /// Types a browser renders as a document that may run script (HTML, XHTML, SVG, XML,
    /// XSL, multipart replacement): what the dashboard warns of. Serving does not rely on
    /// this list, which no one can keep complete: see [`Object::is_inert`].
    #[must_use]
    pub fn is_active_content(&self) -> bool {
        let essence = essence(&self.content_type);
        let (kind, subtype) = essence.split_once('/').unwrap_or((essence.as_str(), ""));
        matches!(
            essence.as_str(),
            "text/html" | "text/xml" | "text/xsl" | "application/xml"
        ) || subtype.ends_with("+xml")
            || subtype.ends_with("-xml")
            || subtype.contains("xml-")
            || kind == "multipart"
            || (kind == "text" && subtype.contains("html"))
    }

    /// Whether visitors may be given it inline: only types every browser shows as they
    /// are, running nothing of them (images but SVG, audio, video, plain text, PDF, JSON).
    /// Any other type, known to be active or merely unknown, is served as an attachment in
    /// a sandbox, so a type missing from a list of dangerous ones never runs script on the
    /// owner's origin.
    #[must_use]
    pub fn is_inert(&self) -> bool {
        let essence = essence(&self.content_type);
        let Some((kind, subtype)) = essence.split_once('/') else {
            return false;
        };
        let markup = subtype.contains("xml") || subtype.contains("svg") || subtype.contains("html");
        match kind {
            "image" | "audio" | "video" => !markup,
            _ => matches!(
                essence.as_str(),
                "text/plain" | "application/pdf" | "application/json"
            ),
        }
    }
}

/// A media type's `type/subtype`, lower case, without parameters.
fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(content_type: &str) -> Object {
        let now = OffsetDateTime::UNIX_EPOCH;
        Object {
            id: ObjectId(uuid::Uuid::nil()),
            public_id: "abc".into(),
            account_id: AccountId(uuid::Uuid::nil()),
            project_id: ProjectId(uuid::Uuid::nil()),
            slug: "s".into(),
            title: "t".into(),
            filename: "f".into(),
            content_type: content_type.into(),
            size_bytes: 0,
            sha256: String::new(),
            blob: String::new(),
            status: ObjectStatus::Active,
            created_at: now,
            updated_at: now,
            archived_at: None,
        }
    }

    #[test]
    fn only_types_browsers_show_as_they_are_are_inert() {
        for inert in [
            "image/png",
            "IMAGE/JPEG",
            "image/webp; q=1",
            "audio/mpeg",
            "video/mp4",
            "text/plain; charset=utf-8",
            "application/pdf",
            "application/json",
        ] {
            assert!(typed(inert).is_inert(), "{inert}");
            assert!(!typed(inert).is_active_content(), "{inert}");
        }
        for active in [
            "text/html",
            "Text/HTML; charset=utf-8",
            "application/xhtml+xml",
            "image/svg+xml",
            "text/xml",
            "application/xml",
            "text/xsl",
            "application/xslt+xml",
            "application/rss+xml",
            "text/xml-external-parsed-entity",
            "multipart/x-mixed-replace; boundary=x",
        ] {
            assert!(!typed(active).is_inert(), "{active}");
            assert!(typed(active).is_active_content(), "{active}");
        }
        // Neither known to be active nor known to be inert: not inline either.
        for unknown in [
            "application/octet-stream",
            "application/zip",
            "text/javascript",
            "text/vtt",
            "application/x-unknown",
            "image/svg-xml",
            "video/x-svg",
        ] {
            assert!(!typed(unknown).is_inert(), "{unknown}");
        }
    }
}
