//! Validated value types. Each constructor is the only way in, so holding one means the
//! value passed its format check.

use std::fmt;

use serde::Serialize;

/// Why a value was refused; the text names the rule so it can go straight into an error message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ValueError(pub String);

fn is_slug_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'
}

fn slug_like(s: &str) -> bool {
    (3..=30).contains(&s.len()) && s.chars().all(is_slug_char)
}

/// An account handle: 3-30 of `a-z 0-9 _`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Handle(String);

impl Handle {
    /// Whether `s` is a valid handle, without making one.
    #[must_use]
    pub fn is_valid(s: &str) -> bool {
        slug_like(s)
    }

    /// # Errors
    /// [`ValueError`] when the handle is not 3-30 of `a-z 0-9 _`.
    pub fn parse(s: &str) -> Result<Self, ValueError> {
        if slug_like(s) {
            Ok(Self(s.to_owned()))
        } else {
            Err(ValueError(
                "handle must be 3-30 lowercase letters, digits or underscores".into(),
            ))
        }
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A project slug: 3-30 of `a-z 0-9 _`, unique across the whole service.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ProjectSlug(String);

impl ProjectSlug {
    /// # Errors
    /// [`ValueError`] when the slug is not 3-30 of `a-z 0-9 _`.
    pub fn parse(s: &str) -> Result<Self, ValueError> {
        if slug_like(s) {
            Ok(Self(s.to_owned()))
        } else {
            Err(ValueError(
                "slug must be 3-30 lowercase letters, digits or underscores".into(),
            ))
        }
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<Handle> for ProjectSlug {
    /// A handle has the slug format, so the default project can take it as its slug.
    fn from(h: Handle) -> Self {
        Self(h.0)
    }
}

impl fmt::Display for ProjectSlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An email address, stored lower-cased: one plain ASCII address that the outbound mailer
/// takes, so an address Quire accepts is one it can write to (several recipients, a display
/// name, a domain literal, a quoted local part, or a character outside ASCII, including
/// bidirectional and zero-width ones, would pass a modest check and then fail, or mislead,
/// at the mailer). A dot-atom local part of at most 64 characters, a domain of at least two
/// labels of letters, digits and inner hyphens, at most 254 bytes in all. Delivery is the
/// real test of the rest.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Email(String);

/// Characters of a dot-atom besides letters, digits and the dot (RFC 5322 `atext`).
const ATEXT_SYMBOLS: &str = "!#$%&'*+-/=?^_`{|}~";

fn dot_atom(local: &str) -> bool {
    !local.is_empty()
        && local.len() <= 64
        && local.split('.').all(|atom| {
            !atom.is_empty()
                && atom
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ATEXT_SYMBOLS.contains(c))
        })
}

fn host_name(domain: &str) -> bool {
    let labels: Vec<&str> = domain.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|label| {
            (1..=63).contains(&label.len())
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

impl Email {
    /// A new address as given (surrounding spaces trimmed), lower-cased.
    ///
    /// # Errors
    /// [`ValueError`] when the address is not one plain ASCII address.
    pub fn parse(s: &str) -> Result<Self, ValueError> {
        let s = s.trim();
        let bad = || ValueError("not a valid email address".into());
        if s.len() > 254 || !s.is_ascii() {
            return Err(bad());
        }
        let (local, domain) = s.split_once('@').ok_or_else(bad)?;
        if !dot_atom(local) || !host_name(domain) {
            return Err(bad());
        }
        Ok(Self(s.to_lowercase()))
    }

    /// An address read back from storage, as it was stored: it passed the rule of its day,
    /// which may have been looser, and its owner must still be found by it.
    #[must_use]
    pub fn stored(s: &str) -> Self {
        Self(s.to_owned())
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The curated palette of project colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Color {
    Gray,
    Red,
    Orange,
    Amber,
    Yellow,
    Lime,
    Green,
    Emerald,
    Teal,
    Cyan,
    Sky,
    Blue,
    Indigo,
    Violet,
    Purple,
    Fuchsia,
    Pink,
    Rose,
}

impl Color {
    pub const ALL: [Color; 18] = [
        Color::Gray,
        Color::Red,
        Color::Orange,
        Color::Amber,
        Color::Yellow,
        Color::Lime,
        Color::Green,
        Color::Emerald,
        Color::Teal,
        Color::Cyan,
        Color::Sky,
        Color::Blue,
        Color::Indigo,
        Color::Violet,
        Color::Purple,
        Color::Fuchsia,
        Color::Pink,
        Color::Rose,
    ];

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Color::Gray => "gray",
            Color::Red => "red",
            Color::Orange => "orange",
            Color::Amber => "amber",
            Color::Yellow => "yellow",
            Color::Lime => "lime",
            Color::Green => "green",
            Color::Emerald => "emerald",
            Color::Teal => "teal",
            Color::Cyan => "cyan",
            Color::Sky => "sky",
            Color::Blue => "blue",
            Color::Indigo => "indigo",
            Color::Violet => "violet",
            Color::Purple => "purple",
            Color::Fuchsia => "fuchsia",
            Color::Pink => "pink",
            Color::Rose => "rose",
        }
    }

    /// # Errors
    /// [`ValueError`] listing the palette when `s` is not one of its values.
    pub fn parse(s: &str) -> Result<Self, ValueError> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|c| c.as_str()).collect();
                ValueError(format!("color must be one of: {}", names.join(", ")))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_handles_follow_the_3_to_30_rule() {
        assert!(ProjectSlug::parse("abc").is_ok());
        assert!(ProjectSlug::parse("a_b_9").is_ok());
        assert!(ProjectSlug::parse(&"a".repeat(30)).is_ok());
        for bad in ["ab", "", "ABC", "a-b-c", "abc ", "ähm", &"a".repeat(31)] {
            assert!(ProjectSlug::parse(bad).is_err(), "{bad:?} accepted");
            assert!(Handle::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn emails_are_lowercased_and_checked() {
        assert_eq!(
            Email::parse(" Ann@Example.COM ").unwrap().as_str(),
            "ann@example.com"
        );
        for good in [
            "ann@example.com",
            "Ann.Smith+news@mail.example.org",
            "o'brien@example.ie",
            "x@a.co",
            "a!#$%&*/=?^_`{|}~-b@x-y.example.com",
        ] {
            assert!(Email::parse(good).is_ok(), "{good:?} refused");
        }
        let long_local = format!("{}@example.com", "a".repeat(65));
        let too_long = format!("{}@{}.com", "a".repeat(60), "b".repeat(200));
        for bad in [
            "",
            "ann",
            "@example.com",
            "ann@",
            "ann@example",
            "a b@example.com",
            "a@b@c.d",
            // What the mailer refuses: several recipients, a display name's bracket, a
            // domain literal, a quoted local part, characters outside ASCII.
            "a,victim@example.com",
            "a@example.com,b@example.com",
            "a;b@example.com",
            "b@example.com>",
            "Ann <ann@example.com>",
            "c@[127.0.0.1]",
            "\"a b\"@example.com",
            "\"a\"@example.com",
            "ann\u{202e}moc@example.com",
            "an\u{200b}n@example.com",
            "ann@exa\u{200b}mple.com",
            "anné@example.com",
            "ann@exämple.com",
            "\u{212a}im@example.com",
            "ann@example..com",
            ".ann@example.com",
            "ann.@example.com",
            "a..nn@example.com",
            "ann@-example.com",
            "ann@example-.com",
            "ann@example.com.",
            "ann\r\n@example.com",
            &long_local,
            &too_long,
        ] {
            assert!(Email::parse(bad).is_err(), "{bad:?} accepted");
        }
        // Read back, an address keeps what it was, whatever today's rule.
        assert_eq!(
            Email::stored("anné@example.com").as_str(),
            "anné@example.com"
        );
    }

    #[test]
    fn colors_round_trip_and_unknown_colors_name_the_palette() {
        for c in Color::ALL {
            assert_eq!(Color::parse(c.as_str()).unwrap(), c);
        }
        let err = Color::parse("mauve").unwrap_err();
        assert!(err.0.contains("gray") && err.0.contains("rose"), "{err}");
    }
}
