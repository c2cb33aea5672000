//! Names and literals put into DDL, which takes no bound parameters.

use quire_kernel::InfraError;

/// `name` double-quoted, once it is known to be one of the names this adapter makes (the
/// tenant names are `q_<hex>…`, the shared roles fixed): anything else is a bug upstream,
/// refused rather than quoted into a statement.
pub(crate) fn ident(name: &str) -> Result<String, InfraError> {
    let plain = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit();
    if plain {
        Ok(format!("\"{name}\""))
    } else {
        Err(InfraError::new(format!(
            "refusing a PostgreSQL name that is not [a-z_][a-z0-9_]*: {name:?}"
        )))
    }
}

/// `text` as a string literal that reads the same whatever `standard_conforming_strings`
/// says (what libpq's `PQescapeLiteral` does): quotes doubled, and with a backslash in it,
/// an `E''` literal with backslashes doubled. A NUL cannot be in a literal at all.
pub(crate) fn literal(text: &str) -> Result<String, InfraError> {
    if text.contains('\0') {
        return Err(InfraError::new("a NUL byte cannot be put in a SQL literal"));
    }
    let body = text.replace('\'', "''");
    Ok(if text.contains('\\') {
        format!(" E'{}'", body.replace('\\', "\\\\"))
    } else {
        format!("'{body}'")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_outside_the_adapters_pattern_are_refused() {
        assert_eq!(
            ident("q_ab12_owner").ok().as_deref(),
            Some("\"q_ab12_owner\"")
        );
        for bad in ["", "Q", "a-b", "a\"b", "1a", &"a".repeat(64)] {
            assert!(ident(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn literals_escape_quotes_and_backslashes() {
        assert_eq!(literal("abc").ok().as_deref(), Some("'abc'"));
        assert_eq!(literal("a'b").ok().as_deref(), Some("'a''b'"));
        assert_eq!(literal(r"a\'b").ok().as_deref(), Some(r" E'a\\''b'"));
        assert!(literal("a\0b").is_err());
    }
}
