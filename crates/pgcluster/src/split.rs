//! Finding the last statement of some SQL, to learn its columns' types.
//!
//! The server splits and runs the SQL itself; this only finds the text to `prepare` again
//! afterwards. It knows what hides a `;`: quoted strings (`'…'` with `''`, `E'…'` with
//! backslash escapes), quoted names, dollar quotes (`$tag$…$tag$`), and both kinds of
//! comment (`/* */` nests). A `BEGIN ATOMIC … END` body, whose `;` psql also tracks, is
//! split wrongly; its statement returns no rows, and a wrong guess only costs the types
//! (the caller checks the columns and falls back to text).

/// The last statement with anything but blanks and comments in it, trimmed.
#[must_use]
pub(crate) fn last_statement(sql: &str) -> Option<&str> {
    let bytes = sql.as_bytes();
    let mut start = 0;
    let mut last = None;
    let mut meaningful = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b';' => {
                if meaningful {
                    last = Some(&sql[start..i]);
                }
                meaningful = false;
                start = i + 1;
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = bytes[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(bytes.len(), |p| i + p + 1);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => i = skip_block_comment(bytes, i),
            b'\'' => {
                meaningful = true;
                let escapes = i > 0
                    && matches!(bytes[i - 1], b'e' | b'E')
                    && (i < 2 || !is_ident_byte(bytes[i - 2]));
                i = skip_quoted(bytes, i, b'\'', escapes);
            }
            b'"' => {
                meaningful = true;
                i = skip_quoted(bytes, i, b'"', false);
            }
            b'$' => {
                meaningful = true;
                i = skip_dollar(sql, i);
            }
            _ => {
                if !b.is_ascii_whitespace() {
                    meaningful = true;
                }
                i += 1;
            }
        }
    }
    if meaningful {
        last = Some(&sql[start..]);
    }
    last.map(str::trim)
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Past a `/* … */` comment starting at `i`, nested ones included.
fn skip_block_comment(bytes: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < bytes.len() {
        if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// Past a quoted string or name opened at `i` by `quote`; a doubled quote is one quote, and
/// with `backslashes` a backslash escapes the next byte.
fn skip_quoted(bytes: &[u8], mut i: usize, quote: u8, backslashes: bool) -> usize {
    i += 1;
    while i < bytes.len() {
        let b = bytes[i];
        if backslashes && b == b'\\' {
            i += 2;
        } else if b == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// Past a dollar-quoted string opened at `i`, or past the `$` when it opens none (`$1`, a
/// `$` inside a name).
fn skip_dollar(sql: &str, i: usize) -> usize {
    let bytes = sql.as_bytes();
    if i > 0 && is_ident_byte(bytes[i - 1]) {
        return i + 1;
    }
    let tag_len = bytes[i + 1..]
        .iter()
        .take_while(|&&b| is_ident_byte(b) && b != b'$')
        .count();
    let close = i + 1 + tag_len;
    let tag_ok = bytes.get(close) == Some(&b'$')
        && bytes
            .get(i + 1)
            .is_none_or(|b| !b.is_ascii_digit() || tag_len == 0);
    if !tag_ok {
        return i + 1;
    }
    let tag = &sql[i..=close];
    match sql[close + 1..].find(tag) {
        Some(p) => close + 1 + p + tag.len(),
        None => bytes.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::last_statement;

    #[test]
    fn one_statement_is_itself() {
        assert_eq!(last_statement("select 1"), Some("select 1"));
        assert_eq!(last_statement("  select 1 ;  "), Some("select 1"));
    }

    #[test]
    fn the_last_of_several() {
        assert_eq!(
            last_statement("create table t(a int); insert into t values (1);\nselect * from t;"),
            Some("select * from t")
        );
        assert_eq!(last_statement("select 1; -- done\n"), Some("select 1"));
        assert_eq!(last_statement("select 1; /* a ; b */"), Some("select 1"));
        assert_eq!(last_statement(";;"), None);
        assert_eq!(last_statement(""), None);
    }

    #[test]
    fn semicolons_in_quotes_and_comments_do_not_split() {
        assert_eq!(last_statement("select 'a;b'"), Some("select 'a;b'"));
        assert_eq!(
            last_statement("select 'it''s; ok'"),
            Some("select 'it''s; ok'")
        );
        assert_eq!(last_statement(r"select E'\';'"), Some(r"select E'\';'"));
        assert_eq!(
            last_statement(r#"select 1 as "a;""b""#),
            Some(r#"select 1 as "a;""b""#)
        );
        assert_eq!(
            last_statement("select 1 /* x /* ; */ ; */ + 1"),
            Some("select 1 /* x /* ; */ ; */ + 1")
        );
        assert_eq!(
            last_statement("select 1 -- ;\n + 1"),
            Some("select 1 -- ;\n + 1")
        );
    }

    #[test]
    fn dollar_quotes() {
        let f = "create function f() returns int language plpgsql as $$ begin return 1; end $$";
        assert_eq!(
            last_statement(&format!("{f}; select f()")),
            Some("select f()")
        );
        assert_eq!(last_statement(f), Some(f));
        let tagged = "do $x$ begin perform 1; perform '$$'; end $x$";
        assert_eq!(last_statement(tagged), Some(tagged));
        // `$1` and a `$` inside a name open nothing.
        assert_eq!(last_statement("select a$b; select $1"), Some("select $1"));
    }

    #[test]
    fn a_standard_string_ending_in_a_backslash() {
        // With standard_conforming_strings on, a backslash is just a character.
        assert_eq!(last_statement(r"select '\'; select 2"), Some("select 2"));
    }
}
