//! Rules for the text clients send: what may be repeated back to them, and which characters
//! a name or title may hold.

/// Most characters of a client's value repeated in an error message.
pub const MAX_ECHOED_CHARS: usize = 100;

/// A client's value for an error message: quoted, and cut to [`MAX_ECHOED_CHARS`]
/// characters (a 10 MB value must not come back as a 10 MB error, nor fill the logs).
#[must_use]
pub fn quoted(value: &str) -> String {
    match value.char_indices().nth(MAX_ECHOED_CHARS) {
        None => format!("{value:?}"),
        Some((cut, _)) => format!(
            "{:?}… ({} characters)",
            &value[..cut],
            value.chars().count()
        ),
    }
}

/// Whether a one-line value (a title, a name, a tag, a login) holds a control character:
/// NUL, which PostgreSQL cannot store in text, line breaks and the rest of C0/C1.
#[must_use]
pub fn has_control(value: &str) -> bool {
    value.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_and_short_ones_kept() {
        assert_eq!(quoted("index.html"), "\"index.html\"");
        let long = "a".repeat(10_000_000);
        let q = quoted(&long);
        assert!(q.len() < 150, "{}", q.len());
        assert!(q.ends_with("(10000000 characters)"), "{q}");
        let multibyte = "é".repeat(150);
        assert!(quoted(&multibyte).starts_with(&format!("{:?}", "é".repeat(100))[..201]));
    }

    #[test]
    fn control_characters_are_found() {
        for bad in ["a\0b", "line\nbreak", "tab\there", "\u{7f}", "\u{85}"] {
            assert!(has_control(bad), "{bad:?}");
        }
        assert!(!has_control("Plain title — with ünïcode"));
    }
}
