//! What an OAuth grant allows: [`Scopes`], apps each granted whole or read-only.

use std::collections::BTreeSet;

use crate::principal::{App, Apps};

/// The read-only scope words: `page:read` reads pages without changing them.
const READ_ONLY_WORDS: [(&str, App); 1] = [("page:read", App::Page)];

/// The scopes of an OAuth grant: a non-empty set of apps, each either whole (`page`) or
/// read-only (`page:read`, the only read-only word). A whole app includes its read-only
/// scope (`page` ⊇ `page:read`), so a set naming both is the whole app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scopes {
    apps: Apps,
    /// Apps granted for reading only; a subset of `apps`.
    read_only: BTreeSet<App>,
}

impl From<Apps> for Scopes {
    fn from(apps: Apps) -> Self {
        Self {
            apps,
            read_only: BTreeSet::new(),
        }
    }
}

impl Scopes {
    /// Every scope word a grant may hold, in canonical order: the apps, then `page:read`.
    #[must_use]
    pub fn vocabulary() -> Vec<&'static str> {
        App::ALL
            .iter()
            .map(|a| a.as_str())
            .chain(READ_ONLY_WORDS.iter().map(|(w, _)| *w))
            .collect()
    }

    /// The scopes the `words` name, ignoring any word that is not one of
    /// [`Scopes::vocabulary`]; `None` when no word is known.
    #[must_use]
    pub fn from_words<'a>(words: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        let mut whole = BTreeSet::new();
        let mut read = BTreeSet::new();
        for word in words {
            if let Some(app) = App::parse(word) {
                whole.insert(app);
            } else if let Some((_, app)) = READ_ONLY_WORDS.iter().find(|(w, _)| *w == word) {
                read.insert(*app);
            }
        }
        let read_only: BTreeSet<App> = read.difference(&whole).copied().collect();
        let apps = Apps::new(whole.into_iter().chain(read_only.iter().copied()))?;
        Some(Self { apps, read_only })
    }

    /// Every word, in canonical order (`page:read` where `page` would stand).
    #[must_use]
    pub fn words(&self) -> Vec<&'static str> {
        self.apps
            .iter()
            .map(|app| {
                if self.read_only.contains(&app) {
                    READ_ONLY_WORDS
                        .iter()
                        .find(|(_, a)| *a == app)
                        .map_or(app.as_str(), |(w, _)| *w)
                } else {
                    app.as_str()
                }
            })
            .collect()
    }

    /// Space-separated (RFC 6749 §3.3), as a token's `scope`.
    #[must_use]
    pub fn to_scope_string(&self) -> String {
        self.words().join(" ")
    }

    /// Comma-separated, as stored.
    #[must_use]
    pub fn to_csv(&self) -> String {
        self.words().join(",")
    }

    /// Parses the stored comma-separated form; `None` if a word is unknown or none is given.
    #[must_use]
    pub fn from_csv(s: &str) -> Option<Self> {
        let words: Vec<&str> = s.split(',').collect();
        let known = words
            .iter()
            .all(|w| App::parse(w).is_some() || READ_ONLY_WORDS.iter().any(|(r, _)| r == w));
        known.then(|| Self::from_words(words)).flatten()
    }

    /// Whether the grant may use `app`, at least for reading.
    #[must_use]
    pub fn contains(&self, app: App) -> bool {
        self.apps.contains(app)
    }

    /// Whether the grant may change things in `app`.
    #[must_use]
    pub fn can_write(&self, app: App) -> bool {
        self.apps.contains(app) && !self.read_only.contains(&app)
    }

    /// Whether every scope of `other` is within these (`page` covers `page:read`).
    #[must_use]
    pub fn covers(&self, other: &Scopes) -> bool {
        other
            .apps
            .iter()
            .all(|app| self.contains(app) && (self.can_write(app) || !other.can_write(app)))
    }

    /// The apps, whole or read-only.
    pub fn apps(&self) -> impl Iterator<Item = App> + '_ {
        self.apps.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scopes(raw: &str) -> Option<Scopes> {
        Scopes::from_words(raw.split(' '))
    }

    #[test]
    fn page_read_is_read_only_and_page_includes_it() {
        let read = scopes("page:read").expect("a known word");
        assert!(read.contains(App::Page) && !read.can_write(App::Page));
        assert_eq!(read.to_scope_string(), "page:read");
        let both = scopes("page:read page").expect("known words");
        assert!(both.can_write(App::Page));
        assert_eq!(both.to_scope_string(), "page");
        assert!(both.covers(&read) && !read.covers(&both));
        let mixed = scopes("link page:read").expect("known words");
        assert_eq!(mixed.to_csv(), "page:read,link");
        assert!(mixed.can_write(App::Link) && !mixed.can_write(App::Page));
    }

    #[test]
    fn unknown_words_are_ignored_and_none_known_is_none() {
        assert_eq!(
            scopes("claudeai page offline_access").map(|s| s.to_scope_string()),
            Some("page".to_owned())
        );
        assert_eq!(scopes("claudeai"), None);
        assert_eq!(scopes(""), None);
    }

    #[test]
    fn the_stored_form_round_trips_and_refuses_unknown_words() {
        let s = scopes("page:read base").expect("known words");
        assert_eq!(Scopes::from_csv(&s.to_csv()), Some(s));
        assert_eq!(
            Scopes::from_csv("page,link").map(|s| s.to_csv()),
            Some("page,link".to_owned())
        );
        assert_eq!(Scopes::from_csv("page,nope"), None);
        assert_eq!(Scopes::from_csv(""), None);
    }
}
