//! A page as the Pages overview and a page's detail show it: its access and state as words
//! and badges, its expiry and last update as relative times, views against the budget.

use quire_pages::PageView;
use time::OffsetDateTime;

use crate::shared::when::{When, local_input};

/// The access choices of the settings form: the value posted, the words shown.
pub(crate) const ACCESS_CHOICES: [(&str, &str); 4] = [
    ("private", "Only you (private)"),
    ("password", "Anyone with the password"),
    ("allow_list", "People you name (allow list)"),
    ("public", "Anyone with the link (public)"),
];

/// An access level's badge: its CSS class and its word.
pub(crate) fn access_badge(access: &str) -> (&'static str, &'static str) {
    match access {
        "public" => ("public", "Public"),
        "password" => ("password", "Password"),
        "allow_list" => ("allow-list", "Allow list"),
        _ => ("private", "Private"),
    }
}

/// A page as the list and the detail show it.
pub(crate) struct PageRow {
    pub id: String,
    pub slug: String,
    pub title: String,
    pub project: String,
    pub url: String,
    pub short_url: Option<String>,
    /// `active` or `archived`: what archive and restore change.
    pub status: &'static str,
    /// What a visitor meets: `active`, `archived`, `expired` or `spent` (budget used up).
    pub state: &'static str,
    /// The access value the form posts (`allow_list`).
    pub access: &'static str,
    /// The access badge's class (`allow-list`) and word (`Allow list`).
    pub access_class: &'static str,
    pub access_word: &'static str,
    pub expires: Option<When>,
    /// The expiry as the `datetime-local` field shows it, in UTC.
    pub expires_input: String,
    pub views: String,
    pub view_count: u64,
    pub max_views: Option<u64>,
    pub max_views_input: String,
    pub size: String,
    pub updated: When,
}

impl PageRow {
    pub(crate) fn new(v: PageView, now: OffsetDateTime) -> Self {
        let quire_pages::Exposure {
            access,
            expires_at,
            max_views,
            view_count: count,
        } = v.exposure();
        let access = access.as_str();
        let (access_class, access_word) = access_badge(access);
        let status = v.page.status.as_str();
        let state = if status != "active" {
            "archived"
        } else if expires_at.is_some_and(|t| t <= now) {
            "expired"
        } else if max_views.is_some_and(|max| count >= max) {
            "spent"
        } else {
            "active"
        };
        Self {
            id: v.page.id.0.to_string(),
            slug: v.page.slug.clone(),
            title: v.page.title.clone(),
            project: v.project_slug.as_str().to_owned(),
            url: v.url,
            short_url: v.short_url,
            status,
            state,
            access,
            access_class,
            access_word,
            expires: expires_at.map(|t| When::new(t, now)),
            expires_input: expires_at.map(local_input).unwrap_or_default(),
            views: match max_views {
                Some(max) => format!("{count} of {max}"),
                None => count.to_string(),
            },
            view_count: count,
            max_views,
            max_views_input: max_views.map(|m| m.to_string()).unwrap_or_default(),
            size: human_bytes(v.page.size_bytes),
            updated: When::new(v.page.updated_at, now),
        }
    }
}

pub(crate) fn human_bytes(n: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // shown to one decimal
    match n {
        0..1_024 => format!("{n} B"),
        1_024..1_048_576 => format!("{:.1} KiB", n as f64 / 1_024.0),
        1_048_576..1_073_741_824 => format!("{:.1} MiB", n as f64 / 1_048_576.0),
        _ => format!("{:.1} GiB", n as f64 / 1_073_741_824.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_access_value_has_words_and_a_badge() {
        for (value, words) in ACCESS_CHOICES {
            let (class, word) = access_badge(value);
            assert!(
                !class.contains('_') && words.contains(&word.to_lowercase()),
                "{value}"
            );
        }
        assert_eq!(human_bytes(1_536), "1.5 KiB");
        assert_eq!(human_bytes(12), "12 B");
    }
}
