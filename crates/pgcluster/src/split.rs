//! Reading some SQL as the server's lexer does, far enough to split it into statements and
//! see their keywords: to find the last statement (whose columns' types are learnt by
//! preparing it again) and what each statement is ([`crate::copy`]).
//!
//! It knows what hides a `;` or a keyword: quoted strings (`'…'` with `''`, `E'…'` with
//! backslash escapes, either continued after a newline as the server continues them),
//! quoted names, dollar quotes (`$tag$…$tag$`), and both kinds of comment (`/* */` nests;
//! `--` ends at either newline byte). A name runs on through `$` (`a$$b` is one name, as
//! the server reads it), so a dollar quote opens only where the server opens one. Standard
//! strings take no backslash escapes: the owner's connections pin
//! `standard_conforming_strings` on in their startup options, which no role setting
//! overrides, and the server lexes a whole simple-protocol query before any `SET` in it
//! runs. A `BEGIN ATOMIC … END` body, whose `;` the server does not split on, is split here:
//! that finds more statements than there are, never fewer.

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A bare name or keyword (never a quoted one).
    Word,
    Semicolon,
    /// Anything else: a string, a quoted name, a number's byte, an operator's.
    Other,
}

/// A token: its kind and its bytes in the SQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

impl Token {
    /// Whether this is the bare word `word` (ASCII, any case).
    pub(crate) fn is_word(&self, sql: &str, word: &str) -> bool {
        self.kind == Kind::Word && sql[self.start..self.end].eq_ignore_ascii_case(word)
    }
}

/// The tokens of `sql`, blanks and comments left out.
pub(crate) fn tokens(sql: &str) -> Tokens<'_> {
    Tokens { sql, i: 0 }
}

/// The statements of `sql` with anything but blanks and comments in them, as their tokens.
pub(crate) fn statements(sql: &str) -> Vec<Vec<Token>> {
    let mut all = Vec::new();
    let mut current = Vec::new();
    for token in tokens(sql) {
        if token.kind == Kind::Semicolon {
            if !current.is_empty() {
                all.push(std::mem::take(&mut current));
            }
        } else {
            current.push(token);
        }
    }
    if !current.is_empty() {
        all.push(current);
    }
    all
}

/// The last statement with anything but blanks and comments in it, trimmed.
#[must_use]
pub(crate) fn last_statement(sql: &str) -> Option<&str> {
    let mut start = 0;
    let mut meaningful = false;
    let mut last = None;
    for token in tokens(sql) {
        if token.kind == Kind::Semicolon {
            if meaningful {
                last = Some(&sql[start..token.start]);
            }
            meaningful = false;
            start = token.end;
        } else {
            meaningful = true;
        }
    }
    if meaningful {
        last = Some(&sql[start..]);
    }
    last.map(str::trim)
}

/// The iterator of [`tokens`].
pub(crate) struct Tokens<'a> {
    sql: &'a str,
    i: usize,
}

impl Iterator for Tokens<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let bytes = self.sql.as_bytes();
        loop {
            let i = self.i;
            let b = *bytes.get(i)?;
            let (kind, end) = match b {
                _ if b.is_ascii_whitespace() => {
                    self.i += 1;
                    continue;
                }
                b'-' if bytes.get(i + 1) == Some(&b'-') => {
                    self.i = line_end(bytes, i);
                    continue;
                }
                b'/' if bytes.get(i + 1) == Some(&b'*') => {
                    self.i = skip_block_comment(bytes, i);
                    continue;
                }
                b';' => (Kind::Semicolon, i + 1),
                b'\'' => (Kind::Other, skip_string(bytes, i, false)),
                b'"' => (Kind::Other, skip_quoted(bytes, i, b'"', false)),
                b'$' => (Kind::Other, skip_dollar(self.sql, i)),
                _ if is_ident_start(b) => {
                    let end = i + bytes[i..]
                        .iter()
                        .take_while(|&&c| is_ident_byte(c) || c == b'$')
                        .count();
                    let escapes = end == i + 1 && matches!(b, b'e' | b'E');
                    if escapes && bytes.get(end) == Some(&b'\'') {
                        (Kind::Other, skip_string(bytes, end, true))
                    } else {
                        (Kind::Word, end)
                    }
                }
                _ => (Kind::Other, i + 1),
            };
            self.i = end;
            return Some(Token {
                kind,
                start: i,
                end,
            });
        }
    }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Past the `--` comment at `i`: the server ends one at `\n` or `\r`.
fn line_end(bytes: &[u8], i: usize) -> usize {
    bytes[i..]
        .iter()
        .position(|&c| c == b'\n' || c == b'\r')
        .map_or(bytes.len(), |p| i + p + 1)
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

/// Past a string opened at `i`, and past the strings that continue it: the server joins
/// `'a'` and `'b'` separated by blanks holding a newline (and `--` comments) into one
/// string, read all of it in the first one's way (`E'…'` escapes included).
fn skip_string(bytes: &[u8], i: usize, backslashes: bool) -> usize {
    let mut end = skip_quoted(bytes, i, b'\'', backslashes);
    while let Some(next) = continued_at(bytes, end) {
        end = skip_quoted(bytes, next, b'\'', backslashes);
    }
    end
}

/// Where a string closed at `end` continues: blanks and `--` comments holding at least one
/// newline, then a quote.
fn continued_at(bytes: &[u8], end: usize) -> Option<usize> {
    let mut k = end;
    let mut newline = false;
    loop {
        match bytes.get(k) {
            Some(b'\n' | b'\r') => {
                newline = true;
                k += 1;
            }
            Some(c) if c.is_ascii_whitespace() => k += 1,
            Some(b'-') if bytes.get(k + 1) == Some(&b'-') => {
                k = line_end(bytes, k);
                newline = true;
            }
            Some(b'\'') if newline => return Some(k),
            _ => return None,
        }
    }
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
    bytes.len()
}

/// Past a dollar-quoted string opened at `i`, or past the `$` when it opens none (`$1`).
/// A `$` inside a name never gets here: names are read whole.
fn skip_dollar(sql: &str, i: usize) -> usize {
    let bytes = sql.as_bytes();
    let tag_len = bytes[i + 1..]
        .iter()
        .take_while(|&&b| is_ident_byte(b))
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
    use super::{Kind, last_statement, statements};

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
        // After a number a `$$` opens a quote, as it does for the server.
        assert_eq!(last_statement("select 1$$;$$"), Some("select 1$$;$$"));
    }

    #[test]
    fn a_standard_string_ending_in_a_backslash() {
        // With standard_conforming_strings on, a backslash is just a character.
        assert_eq!(last_statement(r"select '\'; select 2"), Some("select 2"));
    }

    /// The first word of each statement, as the server would see it.
    fn heads(sql: &str) -> Vec<&str> {
        statements(sql)
            .iter()
            .map(|s| &sql[s[0].start..s[0].end])
            .collect()
    }

    #[test]
    fn statements_split_where_the_server_splits() {
        assert_eq!(heads("select 1; copy t from stdin"), ["select", "copy"]);
        // A name runs on through `$`: `x$$$$` opens no dollar quote.
        assert_eq!(
            heads("select 1 as x$$$$; copy t from stdin; -- $$"),
            ["select", "copy"]
        );
        // A `--` comment ends at a carriage return.
        assert_eq!(
            heads("select 1 --x\r; copy t to stdout"),
            ["select", "copy"]
        );
        // An escape string continued on the next line keeps its escapes there.
        assert_eq!(
            heads("select E'a'\n'\\''; copy t from stdin; --'"),
            ["select", "copy"]
        );
        assert_eq!(
            heads("select E'a' -- note\n  -- more\n '\\''; copy t from stdin; --'"),
            ["select", "copy"]
        );
        // On one line two strings are two strings, not one.
        assert_eq!(heads("select 'a' 'b'; copy t"), ["select", "copy"]);
        // What hides a keyword.
        assert_eq!(heads("select 'x; copy t from stdin'"), ["select"]);
        assert_eq!(heads("/* ; copy */ select 1 -- ; copy\n"), ["select"]);
        assert_eq!(heads(";; ; "), Vec::<&str>::new());
    }

    #[test]
    fn words_are_bare_names_only() {
        let sql = r#"copy "stdin" from E'x' U&'y' stdin"#;
        let words: Vec<&str> = statements(sql)[0]
            .iter()
            .filter(|t| t.kind == Kind::Word)
            .map(|t| &sql[t.start..t.end])
            .collect();
        assert_eq!(words, ["copy", "from", "U", "stdin"]);
    }
}
